#pragma once
// A graph JSON document with its "nodes" unpacked into records: made from a JSON tree
// (graphDocOf) or in one streaming pass by a SAX handler (parseGraphDoc), both in
// GraphJsonDoc.cpp and both giving the same records; checked and built into a graph by the
// reader (GraphJson.cpp).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace passlens {
class Variable;
}

namespace passlens::graphjson {
using json = nlohmann::json;

// Where a variable name is defined, as (section 'i', 'c' or 'n', index, output index); the JSON
// path is only built for a message.
struct Def {
    char section;
    std::uint32_t index;
    std::uint32_t out;
};

// A variable name's definition and, once built, its variable.
struct Slot {
    Def def;
    Variable* var = nullptr;
};

// One entry of a node's "outputs" as written: "y", {"name": "y", "type": "...", "id": N}, or
// anything else (an error). The strings the loader reads are kept unboxed.
struct OutRec {
    enum Form : std::uint8_t { Name, Object, Other } form = Name;
    bool hasName = false; ///< Object: "name" is a string
    bool hasType = false; ///< Object: "type" is a string
    std::string name;
    std::string type;
    json extra;           ///< Object: the other keys (and a non-string name or type); Other: the entry
    Slot* slot = nullptr; ///< the name's, once defined

    const json* field(const char* key) const {
        if (!extra.is_object()) return nullptr;
        auto it = extra.find(key);
        return it == extra.end() ? nullptr : &*it;
    }
    bool typed() const { return form == Object && (hasType || field("type")); }
};

// One entry of a node's "inputs": a variable name, or anything else as JSON (a literal).
struct InRec {
    bool isName = true;
    std::string name;
    json literal;
    Slot* slot = nullptr; ///< the name's, once resolved
};

// One entry of "nodes". "op" (a string), "inputs" and "outputs" (lists) are unpacked; every other
// key, and those three when of another JSON type, stay JSON in `other`.
struct NodeRec {
    bool object = true;
    json raw; ///< the entry when it is not an object
    bool hasOp = false, hasInputs = false, hasOutputs = false;
    std::string op;
    std::vector<InRec> inputs;
    std::vector<OutRec> outputs;
    json other; ///< null or an object

    const json* field(const char* key) const {
        if (!other.is_object()) return nullptr;
        auto it = other.find(key);
        return it == other.end() ? nullptr : &*it;
    }
    void erase(const std::string& key) {
        if (other.is_object()) other.erase(key);
    }
};

// A graph JSON document with its "nodes" unpacked. root() is the document ("nodes" in it is
// ignored when nodesList is set).
struct GraphDoc {
    json owned;                ///< the document without "nodes", when read by GraphSax
    const json* dom = nullptr; ///< the document, when given as JSON
    const json& root() const { return dom ? *dom : owned; }
    bool nodesList = false; ///< "nodes" is a list, held in `nodes`
    std::vector<NodeRec> nodes;
};

/// The records of a parsed document; "nodes" of any other JSON type stay in root().
GraphDoc graphDocOf(const json& doc);

/// The records of the document `text`, in one pass of nlohmann::json::sax_parse (no JSON tree of
/// the nodes). Syntax errors and nesting past kJsonMaxDepth throw passlens::Error naming `label`
/// and the place, as parseJson does.
GraphDoc parseGraphDoc(const std::string& text, const std::string& label);

} // namespace passlens::graphjson
