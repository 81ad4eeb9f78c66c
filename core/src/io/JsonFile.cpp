#include "passlens/io/JsonFile.h"

#include "passlens/io/AtomicFile.h"
#include "passlens/io/Limits.h"
#include "passlens/ir/Error.h"

#include <vector>

namespace passlens {

namespace {
using json = nlohmann::json;

// One open array or object while parsing: the position of the child being read.
struct Frame {
    bool array = false;
    std::size_t index = 0;
    std::string key;
};

// "nodes[0].attrs.a.a.a.a.a.a..." for the first segments of the open containers.
std::string placeOf(const std::vector<Frame>& stack) {
    constexpr std::size_t kShown = 8;
    std::string s;
    for (std::size_t i = 0; i < stack.size() && i < kShown; ++i) {
        if (stack[i].array)
            s += "[" + std::to_string(stack[i].index) + "]";
        else
            s += (s.empty() ? "" : ".") + stack[i].key;
    }
    if (stack.size() > kShown) s += "...";
    return s.empty() ? "top level" : s;
}

struct TooDeep {
    std::string place;
};
} // namespace

std::string jsonErrorReason(const json::exception& e) {
    std::string what = e.what();
    if (what.starts_with("[json.exception.")) {
        if (auto close = what.find("] "); close != std::string::npos) what.erase(0, close + 2);
    }
    return what;
}

json parseJson(const std::string& text, const std::string& label) {
    std::vector<Frame> stack;
    // The parser calls back for every event with the depth; a throw aborts it (the partial
    // document is freed iteratively by nlohmann::json).
    json::parser_callback_t cb = [&stack](int, json::parse_event_t ev, json& parsed) {
        switch (ev) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start:
            if (stack.size() >= static_cast<std::size_t>(kJsonMaxDepth)) throw TooDeep{placeOf(stack)};
            stack.push_back({ev == json::parse_event_t::array_start, 0, {}});
            break;
        case json::parse_event_t::key: stack.back().key = parsed.get_ref<const std::string&>(); break;
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            stack.pop_back();
            if (!stack.empty() && stack.back().array) ++stack.back().index;
            break;
        case json::parse_event_t::value:
            if (!stack.empty() && stack.back().array) ++stack.back().index;
            break;
        }
        return true;
    };
    try {
        return json::parse(text, cb);
    } catch (const TooDeep& d) {
        throw Error(label + ": " + d.place + ": JSON nested deeper than " + std::to_string(kJsonMaxDepth) +
                    " levels of arrays and objects (the limit of every JSON file PassLens reads)");
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        const auto pos = what.find("parse error");
        throw Error(label + ": byte " + std::to_string(e.byte) +
                    ": invalid JSON: " + (pos == std::string::npos ? jsonErrorReason(e) : what.substr(pos)));
    } catch (const json::exception& e) {
        // out_of_range 406: a number outside double's range ("1e700"), thrown while lexing it
        throw Error(label + ": " + placeOf(stack) + ": invalid JSON: " + jsonErrorReason(e));
    }
}

json readJsonFile(const std::filesystem::path& path) { return parseJson(readFile(path), path.string()); }

} // namespace passlens
