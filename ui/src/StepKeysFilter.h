#pragma once
/// @file StepKeysFilter.h
/// Stepping keys that reach the window from a line edit (the rewrite filter).
#include <QObject>

class QLineEdit;
class QWidget;

namespace passlens {

/// Installed on a line edit: Ctrl+Left / Ctrl+Right go to the window's shortcuts (previous /
/// next event of the filtered rewrites) instead of moving the cursor by a word, and Esc gives
/// the keyboard to `focusOnEscape` (the graph). Without it, Ctrl+Right typed right after the
/// filter text did nothing.
class StepKeysFilter final : public QObject {
public:
    /// A filter for `edit` (its child); Esc moves the focus to `focusOnEscape`.
    StepKeysFilter(QLineEdit* edit, QWidget* focusOnEscape);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* m_focusOnEscape;
};

} // namespace passlens
