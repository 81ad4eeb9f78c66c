#pragma once
/// @file CancelToken.h
/// Cooperative cancellation of long work: a pipeline run (Pipeline::run, openAndOptimize), the
/// phase check (checkPhases) and a layout (LayoutEngine::layout). The window's job runner gives
/// each job its own token.
#include "passlens/ir/Error.h"

#include <atomic>

namespace passlens {

/// Set from any thread; the work polls it between its steps (rewrite attempts, phases, checked
/// phases; a layout every 25 ms).
class CancelToken {
public:
    void cancel() noexcept { m_cancelled.store(true); }
    bool cancelled() const noexcept { return m_cancelled.load(); }
    void reset() noexcept { m_cancelled.store(false); }

private:
    std::atomic<bool> m_cancelled{false};
};

/// Thrown by a pipeline run or a phase check whose token was cancelled: what it was making is
/// unfinished and must be dropped (the graph it was changing may be half-optimized). Not bad
/// input: callers report it as cancelled, not as an error. (A layout reports cancellation as
/// LayoutError::Kind::Cancelled.)
class Cancelled : public Error {
public:
    using Error::Error;
};

/// Throws Cancelled(`what` + " was cancelled") when `token` is set and cancelled.
inline void throwIfCancelled(const CancelToken* token, const char* what) {
    if (token && token->cancelled()) throw Cancelled(std::string(what) + " was cancelled");
}

} // namespace passlens
