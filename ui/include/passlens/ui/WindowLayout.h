#pragma once
/// @file WindowLayout.h
/// The window's layout options: LayoutOptions' defaults (core/layout LayoutEngine.h, the one
/// place of the 10 s budget), with the budget settable without recompiling through the
/// environment variable PASSLENS_LAYOUT_BUDGET_MS, as the executor reads its PASSLENS_* switches
/// (ExecOptions::environment): once, at the first use.
#include <passlens/layout/LayoutEngine.h>

#include <chrono>
#include <string>

namespace passlens {

/// Largest PASSLENS_LAYOUT_BUDGET_MS accepted: one hour (a hang guard still, not "no limit").
inline constexpr long long kMaxLayoutBudgetMs = 3600000;

/// A PASSLENS_LAYOUT_BUDGET_MS value read: the budget and, for an invalid value, why it was
/// ignored (then `budget` is LayoutOptions' default).
struct LayoutBudgetSetting {
    std::chrono::milliseconds budget = LayoutOptions{}.budget;
    std::string warning; ///< empty unless the value was ignored; names the variable and the value
};

/// Parses a PASSLENS_LAYOUT_BUDGET_MS value: whole milliseconds, 0 to kMaxLayoutBudgetMs, digits
/// only (0: no Graphviz layout, the simple layered layout at once). Null or empty: unset, the
/// default without a warning. Anything else keeps the default with a warning. Never throws.
LayoutBudgetSetting parseLayoutBudget(const char* value);

/// What the window lays out with (steps, diffs, nested graphs, exports, Compare): LayoutOptions'
/// defaults with the budget of PASSLENS_LAYOUT_BUDGET_MS, read once; an invalid value is
/// written to stderr once ("passlens: warning: ...") and kept in windowLayoutWarning().
const LayoutOptions& windowLayoutOptions();

/// The warning windowLayoutOptions() gave about PASSLENS_LAYOUT_BUDGET_MS; empty when none.
const std::string& windowLayoutWarning();

} // namespace passlens
