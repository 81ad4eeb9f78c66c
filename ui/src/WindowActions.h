#pragma once
/// @file WindowActions.h
/// The window's menus (File, Step, View, Execute, Tools), its tool bar (pipeline box, Run,
/// stepping, diff box, device box, Execute, overlay, Find box) and keyboard shortcuts. Each
/// action calls the window (MainWindow, whose widgets it fills in: the pipeline, diff and device
/// boxes, the Execute, overlay and group actions, the recent-files menu, the Find box and its
/// label) or the session.
#include <QObject>

namespace passlens {

class MainWindow;

class WindowActions final : public QObject {
    Q_OBJECT
public:
    /// Builds the menus, tool bar and shortcuts into `window` (a child of it).
    explicit WindowActions(MainWindow* window);

private:
    MainWindow* m_w;
};

} // namespace passlens
