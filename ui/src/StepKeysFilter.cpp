#include "StepKeysFilter.h"

#include <QKeyEvent>
#include <QLineEdit>

namespace passlens {

StepKeysFilter::StepKeysFilter(QLineEdit* edit, QWidget* focusOnEscape)
    : QObject(edit)
    , m_focusOnEscape(focusOnEscape) {
    edit->installEventFilter(this);
}

bool StepKeysFilter::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::ShortcutOverride && event->type() != QEvent::KeyPress)
        return QObject::eventFilter(watched, event);
    const auto* key = static_cast<QKeyEvent*>(event);
    const bool step =
        (key->key() == Qt::Key_Left || key->key() == Qt::Key_Right) && key->modifiers() == Qt::ControlModifier;
    if (step && event->type() == QEvent::ShortcutOverride) {
        event->ignore(); // not the line edit's: the window's shortcut runs
        return true;
    }
    // (Esc is also the window's Cancel shortcut, which then runs as from anywhere)
    if (key->key() == Qt::Key_Escape && key->modifiers() == Qt::NoModifier && m_focusOnEscape &&
        event->type() == QEvent::ShortcutOverride)
        m_focusOnEscape->setFocus(Qt::ShortcutFocusReason);
    return QObject::eventFilter(watched, event);
}

} // namespace passlens
