#include "passlens/io/JsonFile.h"

#include "passlens/io/AtomicFile.h"
#include "passlens/io/Limits.h"
#include "passlens/ir/Error.h"

#include <vector>

namespace passlens {

namespace {
using json = nlohmann::json;

// nlohmann's DOM builder with JsonPlace's bookkeeping and nesting limit (its callback parser
// rescans the parent container after every object, quadratic in the length of a long list).
class LimitedDomSax {
public:
    LimitedDomSax(json& root, JsonPlace& place)
        : dom_(root)
        , place_(place) {}
    bool null() { return scalar(dom_.null()); }
    bool boolean(bool v) { return scalar(dom_.boolean(v)); }
    bool number_integer(json::number_integer_t v) { return scalar(dom_.number_integer(v)); }
    bool number_unsigned(json::number_unsigned_t v) { return scalar(dom_.number_unsigned(v)); }
    bool number_float(json::number_float_t v, const std::string& s) { return scalar(dom_.number_float(v, s)); }
    bool string(std::string& v) { return scalar(dom_.string(v)); }
    bool binary(json::binary_t& v) { return scalar(dom_.binary(v)); }
    bool start_object(std::size_t n) {
        place_.open(false);
        return dom_.start_object(n);
    }
    bool key(std::string& k) {
        place_.key(k);
        return dom_.key(k);
    }
    bool end_object() {
        place_.close();
        return dom_.end_object();
    }
    bool start_array(std::size_t n) {
        place_.open(true);
        return dom_.start_array(n);
    }
    bool end_array() {
        place_.close();
        return dom_.end_array();
    }
    template <class Exception> bool parse_error(std::size_t, const std::string&, const Exception& e) { throw e; }

private:
    bool scalar(bool ok) {
        place_.value();
        return ok;
    }
    nlohmann::detail::json_sax_dom_parser<json> dom_;
    JsonPlace& place_;
};
} // namespace

void JsonPlace::open(bool array) {
    if (stack_.size() >= static_cast<std::size_t>(kJsonMaxDepth)) throw TooDeep{str()};
    stack_.push_back({array, 0, {}});
}

void JsonPlace::close() {
    stack_.pop_back();
    value();
}

void JsonPlace::value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
}

std::string JsonPlace::str() const {
    constexpr std::size_t kShown = 8;
    std::string s;
    for (std::size_t i = 0; i < stack_.size() && i < kShown; ++i) {
        if (stack_[i].array)
            s += "[" + std::to_string(stack_[i].index) + "]";
        else
            s += (s.empty() ? "" : ".") + stack_[i].key;
    }
    if (stack_.size() > kShown) s += "...";
    return s.empty() ? "top level" : s;
}

void rethrowJsonError(const std::string& label, const JsonPlace& place) {
    try {
        throw;
    } catch (const JsonPlace::TooDeep& d) {
        throw Error(label + ": " + d.place + ": JSON nested deeper than " + std::to_string(kJsonMaxDepth) +
                    " levels of arrays and objects (the limit of every JSON file PassLens reads)");
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        const auto pos = what.find("parse error");
        throw Error(label + ": byte " + std::to_string(e.byte) +
                    ": invalid JSON: " + (pos == std::string::npos ? jsonErrorReason(e) : what.substr(pos)));
    } catch (const json::exception& e) {
        // out_of_range 406: a number outside double's range ("1e700"), thrown while lexing it
        throw Error(label + ": " + place.str() + ": invalid JSON: " + jsonErrorReason(e));
    }
}

std::string jsonErrorReason(const json::exception& e) {
    std::string what = e.what();
    if (what.starts_with("[json.exception.")) {
        if (auto close = what.find("] "); close != std::string::npos) what.erase(0, close + 2);
    }
    return what;
}

json parseJson(const std::string& text, const std::string& label) {
    json doc;
    JsonPlace place;
    LimitedDomSax sax(doc, place);
    parseJsonSax(text, label, sax, place);
    return doc;
}

json readJsonFile(const std::filesystem::path& path) { return parseJson(readFile(path), path.string()); }

} // namespace passlens
