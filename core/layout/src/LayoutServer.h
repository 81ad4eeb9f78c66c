#pragma once
// Internal to passlens_layout, for its tests and benchmarks too: what the isolated layout's
// processes are right now (LayoutServer.cpp). No Graphviz headers, so tests/ and bench/ may
// include it (their CMake entries add core/layout/src to the include path).

namespace passlens::layoutinternal {

/// The pid of this process's layout server: the fresh, single-threaded exec of this program that
/// forks the isolated layouts' children (started by the first isolated layout, restarted by the
/// next one when it has died); 0 when none is running (not started yet, gone, not Linux, or
/// unavailable: then the layouts fork this process). Any thread.
int layoutServerPid();

/// The pid of the layout child now laying out for this process (the server's child, or the child
/// forked here when there is no server), 0 between layouts. Any thread: tests kill it to play a
/// Graphviz crash.
int layoutChildPid();

/// CPU seconds (user + system) of the layout children the server ran for this process, as the
/// server reported them on reaping each: they are the server's children, so
/// getrusage(RUSAGE_CHILDREN) here does not count them (it counts the children forked here).
/// Any thread.
double layoutServerChildCpuSeconds();

/// Tests: false makes isolated layouts fork this process (layoutForked) as when the server cannot
/// be started, leaving a running server alone; true (the default) uses the server again. Any
/// thread; takes effect from the next layout.
void setLayoutServerAllowed(bool allowed);

} // namespace passlens::layoutinternal
