#pragma once
/// @file JsonFile.h
/// The one JSON reader of every JSON file PassLens reads (graph JSON, session, pipeline and
/// profile files): a syntax error or a nesting past kJsonMaxDepth becomes a passlens::Error
/// naming the file and the place, never a library message or a stack overflow.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace passlens {

/// Parses `text`. Throws passlens::Error("LABEL: byte N: invalid JSON: reason") for a syntax
/// error and ("LABEL: nodes[0].attrs.a.a...: JSON nested deeper than 256 levels ...") when arrays
/// and objects nest deeper than kJsonMaxDepth (Limits.h); the place is where the limit is passed.
nlohmann::json parseJson(const std::string& text, const std::string& label);

/// readFile (a regular file only) then parseJson, with the path as the label.
nlohmann::json readJsonFile(const std::filesystem::path& path);

/// Where a streaming (SAX) parse is: the open arrays and objects, for messages, and the nesting
/// limit kJsonMaxDepth. Every SAX handler calls open/key/close/value for each event, so its
/// messages name the same places as parseJson's.
class JsonPlace {
public:
    /// Thrown by open() past the limit; parseJsonSax turns it into parseJson's message.
    struct TooDeep {
        std::string place;
    };
    void open(bool array); ///< an array or object starts (throws TooDeep past kJsonMaxDepth)
    void key(const std::string& key) { stack_.back().key = key; }
    void close(); ///< the innermost array or object ends
    void value(); ///< a number, string, bool or null ended
    std::size_t depth() const { return stack_.size(); }
    /// "nodes[0].attrs.a..." (the first 8 levels), "top level" outside every container.
    std::string str() const;

private:
    struct Frame {
        bool array = false;
        std::size_t index = 0;
        std::string key;
    };
    std::vector<Frame> stack_;
};

/// Runs nlohmann::json::sax_parse(text, &sax). `sax` keeps `place` up to date and rethrows the
/// exception it gets in parse_error(). Syntax errors, numbers out of range and JsonPlace::TooDeep
/// become parseJson's passlens::Error messages; the handler's own exceptions pass through.
template <class Sax>
void parseJsonSax(const std::string& text, const std::string& label, Sax& sax, const JsonPlace& place);

/// The passlens::Error for the exception being handled (see parseJsonSax); rethrows anything else.
[[noreturn]] void rethrowJsonError(const std::string& label, const JsonPlace& place);

template <class Sax>
void parseJsonSax(const std::string& text, const std::string& label, Sax& sax, const JsonPlace& place) {
    try {
        nlohmann::json::sax_parse(text, &sax);
    } catch (...) {
        rethrowJsonError(label, place);
    }
}

/// The reason of a nlohmann::json exception without the library's "[json.exception.X.N] "
/// prefix, e.g. "type must be string, but is number", for a message that names file and place.
std::string jsonErrorReason(const nlohmann::json::exception& e);

} // namespace passlens
