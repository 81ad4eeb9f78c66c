#pragma once

#include <QMainWindow>

class QPlainTextEdit;

namespace passlens {

/// The debugger's main window. For now: one read-only monospace text view.
class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

public Q_SLOTS:
    /// Shows `text` in the central view and `title` in the window title.
    void showText(const QString& title, const QString& text);

private:
    QPlainTextEdit* m_textView = nullptr; // owned by the Qt parent tree
};

} // namespace passlens
