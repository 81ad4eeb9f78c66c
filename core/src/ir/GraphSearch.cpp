#include "passlens/ir/GraphSearch.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace passlens {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// 0: a whole word equals the query; 1: the query is a substring of a word; 2: no match.
int rankOf(const std::string& word, const std::string& query) {
    if (word.empty()) return 2;
    const std::string w = lower(word);
    if (w == query) return 0;
    // parts of a scoped name: /encoder/layer.0/attn/MatMul -> encoder, layer, 0, attn, matmul
    std::size_t start = 0;
    for (std::size_t i = 0; i <= w.size(); ++i) {
        if (i == w.size() || w[i] == '/' || w[i] == '.' || w[i] == ':') {
            if (i > start && w.compare(start, i - start, query) == 0 && i - start == query.size()) return 0;
            start = i + 1;
        }
    }
    return w.find(query) != std::string::npos ? 1 : 2;
}

} // namespace

std::vector<const Apply*> findNodes(const FunctionGraph& g, std::string_view rawQuery) {
    const std::string_view t = trimmed(rawQuery);
    if (t.empty()) return {};
    const std::string query = lower(t);
    std::string idQuery = query;
    if (!idQuery.empty() && idQuery.front() == '#') idQuery.erase(0, 1);
    std::vector<const Apply*> exact, partial;
    for (const Apply* n : g.toposort()) {
        int best = std::to_string(n->id()) == idQuery ? 0 : 2;
        auto consider = [&](const std::string& word) {
            if (best > 0) best = std::min(best, rankOf(word, query));
        };
        consider(n->op().kind());
        consider(n->op().str());
        consider(n->name());
        for (const Variable* v : n->outputs()) consider(v->name());
        // a consumer of a variable of that name comes after its producer
        for (const Variable* v : n->inputs())
            if (best > 1 && rankOf(v->name(), query) == 0) best = 1;
        if (best == 0)
            exact.push_back(n);
        else if (best == 1)
            partial.push_back(n);
    }
    exact.insert(exact.end(), partial.begin(), partial.end());
    return exact;
}

} // namespace passlens
