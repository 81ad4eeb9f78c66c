// What `passlens` shows once its file is open (app/gui/main.cpp's options), applied through the
// window code that the user's keys, menus and boxes drive, so that a screenshot or a test reaches
// the same state as a user does.
#pragma once

#include <QString>
#include <QStringList>

#include <functional>

namespace passlens {

class MainWindow;

/// The state the command line asks for, applied in this order, each after the drawing the one
/// before asked for has arrived: the step (`phase`, else `step`), the diff, grouping by name
/// scope and the scopes opened, the rewrite filter, Find, Execute, the phase check, Compare.
struct StartOptions {
    QString phase;            ///< --phase NAME: the end of this phase (empty: not asked)
    QString step;             ///< --step N, as typed: step N of the slider, 0 = the source (empty: not asked)
    int diffMode = 0;         ///< --diff: 1 overlay, 2 side by side (MainWindow::setDiffMode); 0 none
    bool groupScopes = false; ///< --group-scopes: View > Group by name scope (Ctrl+Shift+G)
    /// --open-scope SCOPE (repeatable, implies groupScopes): double-click on the drawn box of
    /// SCOPE ("/encoder", then "/encoder/layer.0"), one after the other
    QStringList openScopes;
    QString rewriteFilter; ///< --filter-rewrites TEXT: typed into the Pipeline dock's "Filter rewrites" box
    QString find;          ///< --find TEXT: Ctrl+F, TEXT, Enter (MainWindow::findNext: "match 1 of n")
    bool execute = false;  ///< --execute: Execute > Execute and profile this step (F5)
    bool check = false;    ///< --check: Execute > Check every phase against the source (marks the tree)
    QString compare;       ///< --compare PIPELINE: Tools > Compare with PIPELINE (a built-in, not the one shown)
};

/// Applies `options` to `window`, whose file is open and pipeline run (call it from
/// MainWindow::whenIdle), and calls `done` once everything asked for is drawn (and executed,
/// compared): `done(0, {})`; `done(1, message)` when a drawing, the execution, the check or the
/// comparison failed (what was reached stays shown); `done(2, why)` for a usage error: before
/// anything is changed, an unknown phase (the phases listed), a step out of range, a pipeline to
/// compare that is not built in or is the one shown; once grouped, a scope to open that is not
/// drawn as a closed box (the boxes drawn listed; the scopes opened before it stay open). The usage messages start with
/// the option's name
/// ("--step: expected 0 to 79, got '90'"). `done` is called once, always from the event loop.
void applyStartOptions(MainWindow& window, const StartOptions& options, std::function<void(int, QString)> done);

} // namespace passlens
