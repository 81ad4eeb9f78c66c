// The window's layout options and PASSLENS_LAYOUT_BUDGET_MS.
#include "passlens/ui/WindowLayout.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace passlens {

namespace {
constexpr const char* kBudgetVariable = "PASSLENS_LAYOUT_BUDGET_MS";

const LayoutBudgetSetting& environmentBudget() {
    static const LayoutBudgetSetting setting = [] {
        LayoutBudgetSetting s = parseLayoutBudget(std::getenv(kBudgetVariable));
        if (!s.warning.empty()) std::fprintf(stderr, "passlens: warning: %s\n", s.warning.c_str());
        return s;
    }();
    return setting;
}
} // namespace

LayoutBudgetSetting parseLayoutBudget(const char* value) {
    LayoutBudgetSetting s;
    if (!value || !*value) return s;
    const std::string_view text(value);
    long long ms = 0;
    bool valid = text.size() <= 10; // (more digits than kMaxLayoutBudgetMs has: too large anyway)
    for (char c : text) {
        if (c < '0' || c > '9') {
            valid = false;
            break;
        }
        if (valid) ms = ms * 10 + (c - '0');
    }
    if (valid && ms <= kMaxLayoutBudgetMs) {
        s.budget = std::chrono::milliseconds(ms);
        return s;
    }
    std::string shown; // printable, and short: the value is the user's, not ours
    for (char c : text.substr(0, 40)) shown += c >= ' ' && c <= '~' ? c : '?';
    if (text.size() > 40) shown += "...";
    s.warning = std::string(kBudgetVariable) + "='" + shown + "' is not a whole number of milliseconds from 0 to " +
                std::to_string(kMaxLayoutBudgetMs) + ": ignored, the window's layouts keep their default budget of " +
                std::to_string(s.budget.count()) + " ms";
    return s;
}

const LayoutOptions& windowLayoutOptions() {
    static const LayoutOptions options = [] {
        LayoutOptions o;
        o.budget = environmentBudget().budget;
        return o;
    }();
    return options;
}

const std::string& windowLayoutWarning() { return environmentBudget().warning; }

} // namespace passlens
