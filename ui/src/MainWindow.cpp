#include "MainWindow.h"

#include <QFontDatabase>
#include <QPlainTextEdit>

namespace passlens {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_textView(new QPlainTextEdit(this))
{
    m_textView->setReadOnly(true);
    m_textView->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_textView->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setCentralWidget(m_textView);
    setWindowTitle(tr("PassLens"));
}

MainWindow::~MainWindow() = default;

void MainWindow::showText(const QString& title, const QString& text)
{
    setWindowTitle(title.isEmpty() ? tr("PassLens") : tr("%1 — PassLens").arg(title));
    m_textView->setPlainText(text);
}

} // namespace passlens
