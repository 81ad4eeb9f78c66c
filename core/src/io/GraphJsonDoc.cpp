// The records of a graph JSON document (GraphJsonDoc.h): from a JSON tree, or read by a SAX
// handler straight from the parser's events.
#include "GraphJsonDoc.h"

#include "passlens/io/JsonFile.h"
#include "passlens/ir/Error.h"

#include <optional>

namespace passlens::graphjson {
namespace {

OutRec outRecOf(const json& e) {
    OutRec o;
    if (e.is_string()) {
        o.name = e.get<std::string>();
        return o;
    }
    if (!e.is_object()) {
        o.form = OutRec::Other;
        o.extra = e;
        return o;
    }
    o.form = OutRec::Object;
    for (auto it = e.begin(); it != e.end(); ++it) {
        if (it.key() == "name" && it->is_string()) {
            o.hasName = true;
            o.name = it->get<std::string>();
        } else if (it.key() == "type" && it->is_string()) {
            o.hasType = true;
            o.type = it->get<std::string>();
        } else {
            o.extra[it.key()] = *it;
        }
    }
    return o;
}

NodeRec nodeRecOf(const json& n) {
    NodeRec r;
    if (!n.is_object()) {
        r.object = false;
        r.raw = n;
        return r;
    }
    for (auto it = n.begin(); it != n.end(); ++it) {
        const json& v = *it;
        if (it.key() == "op" && v.is_string()) {
            r.hasOp = true;
            r.op = v.get<std::string>();
        } else if (it.key() == "inputs" && v.is_array()) {
            r.hasInputs = true;
            for (const json& e : v)
                r.inputs.push_back(e.is_string() ? InRec{true, e.get<std::string>(), {}} : InRec{false, {}, e});
        } else if (it.key() == "outputs" && v.is_array()) {
            r.hasOutputs = true;
            for (const json& e : v) r.outputs.push_back(outRecOf(e));
        } else {
            r.other[it.key()] = v;
        }
    }
    return r;
}

// SAX handler that reads a graph JSON document into a GraphDoc without a DOM of its nodes: the
// record fields (GraphJsonDoc.h) are filled directly; every other value is built as JSON
// (nlohmann's DOM builder) where graphDocOf would have put it, so both give the same GraphDoc.
class GraphSax {
public:
    GraphSax(GraphDoc& doc, JsonPlace& place)
        : doc_(doc)
        , place_(place) {}

    bool null() {
        place_.value();
        return slow(0, [](Dom& d) { return d.null(); });
    }
    bool boolean(bool v) {
        place_.value();
        return slow(0, [&](Dom& d) { return d.boolean(v); });
    }
    bool number_integer(json::number_integer_t v) {
        place_.value();
        return slow(0, [&](Dom& d) { return d.number_integer(v); });
    }
    bool number_unsigned(json::number_unsigned_t v) {
        place_.value();
        return slow(0, [&](Dom& d) { return d.number_unsigned(v); });
    }
    bool number_float(json::number_float_t v, const std::string& s) {
        place_.value();
        return slow(0, [&](Dom& d) { return d.number_float(v, s); });
    }
    bool binary(json::binary_t& v) {
        place_.value();
        return slow(0, [&](Dom& d) { return d.binary(v); });
    }
    bool string(std::string& v) {
        place_.value();
        if (!dom_) {
            if (state_ == Node && key_ == "op") {
                NodeRec& r = doc_.nodes.back();
                r.hasOp = true;
                r.op = v;
                r.erase("op");
                return true;
            }
            if (state_ == Inputs) {
                doc_.nodes.back().inputs.push_back({true, v, {}});
                return true;
            }
            if (state_ == Outputs) {
                doc_.nodes.back().outputs.emplace_back().name = v;
                return true;
            }
            if (state_ == Output && (key_ == "name" || key_ == "type")) {
                OutRec& o = doc_.nodes.back().outputs.back();
                (key_ == "name" ? o.hasName : o.hasType) = true;
                (key_ == "name" ? o.name : o.type) = v;
                if (o.extra.is_object()) o.extra.erase(key_);
                return true;
            }
        }
        return slow(0, [&](Dom& d) { return d.string(v); });
    }
    bool key(std::string& k) {
        place_.key(k);
        if (dom_) return dom_->key(k);
        key_ = k;
        return true;
    }
    bool start_object(std::size_t n) {
        place_.open(false);
        if (!dom_) {
            if (state_ == Root) {
                doc_.owned = json::object();
                state_ = Top;
                return true;
            }
            if (state_ == NodeList) {
                doc_.nodes.emplace_back();
                state_ = Node;
                return true;
            }
            if (state_ == Outputs) {
                doc_.nodes.back().outputs.emplace_back().form = OutRec::Object;
                state_ = Output;
                return true;
            }
        }
        return slow(1, [&](Dom& d) { return d.start_object(n); });
    }
    bool end_object() {
        place_.close();
        if (dom_) return slow(-1, [](Dom& d) { return d.end_object(); });
        state_ = state_ == Output ? Outputs : state_ == Node ? NodeList : Done;
        return true;
    }
    bool start_array(std::size_t n) {
        place_.open(true);
        if (!dom_) {
            if (state_ == Top && key_ == "nodes") {
                if (doc_.owned.is_object()) doc_.owned.erase("nodes");
                doc_.nodes.clear();
                doc_.nodesList = true;
                state_ = NodeList;
                return true;
            }
            if (state_ == Node && (key_ == "inputs" || key_ == "outputs")) {
                NodeRec& r = doc_.nodes.back();
                if (key_ == "inputs") {
                    r.hasInputs = true;
                    r.inputs.clear();
                    state_ = Inputs;
                } else {
                    r.hasOutputs = true;
                    r.outputs.clear();
                    state_ = Outputs;
                }
                r.erase(key_);
                return true;
            }
        }
        return slow(1, [&](Dom& d) { return d.start_array(n); });
    }
    bool end_array() {
        place_.close();
        if (dom_) return slow(-1, [](Dom& d) { return d.end_array(); });
        state_ = state_ == NodeList ? Top : Node;
        return true;
    }
    template <class Exception> bool parse_error(std::size_t, const std::string&, const Exception& e) { throw e; }

private:
    using Dom = nlohmann::detail::json_sax_dom_parser<json>;
    enum State { Root, Top, NodeList, Node, Inputs, Outputs, Output, Done };

    // A value that is not unpacked: built as JSON at the place target() gives, until it ends.
    template <class F> bool slow(int nest, F&& forward) {
        if (!dom_) {
            dom_.emplace(*target());
            depth_ = 0;
        }
        const bool ok = forward(*dom_);
        depth_ += nest;
        if (depth_ == 0) dom_.reset();
        return ok;
    }

    json* target() {
        switch (state_) {
        case Root: state_ = Done; return &doc_.owned;
        case Top:
            if (key_ == "nodes") {
                doc_.nodes.clear();
                doc_.nodesList = false;
            }
            return &doc_.owned[key_];
        case NodeList: {
            NodeRec& r = doc_.nodes.emplace_back();
            r.object = false;
            return &r.raw;
        }
        case Node: {
            NodeRec& r = doc_.nodes.back();
            if (key_ == "op") r.hasOp = false;
            if (key_ == "inputs") r.hasInputs = false;
            if (key_ == "outputs") r.hasOutputs = false;
            return &r.other[key_];
        }
        case Inputs: {
            InRec& in = doc_.nodes.back().inputs.emplace_back();
            in.isName = false;
            return &in.literal;
        }
        case Outputs: {
            OutRec& o = doc_.nodes.back().outputs.emplace_back();
            o.form = OutRec::Other;
            return &o.extra;
        }
        case Output: {
            OutRec& o = doc_.nodes.back().outputs.back();
            if (key_ == "name") o.hasName = false;
            if (key_ == "type") o.hasType = false;
            return &o.extra[key_];
        }
        case Done: break;
        }
        throw Error("graph JSON reader: a value after the end of the document"); // the parser stops first
    }

    GraphDoc& doc_;
    JsonPlace& place_;
    State state_ = Root;
    std::string key_;
    std::optional<Dom> dom_;
    int depth_ = 0;
};

} // namespace

GraphDoc graphDocOf(const json& doc) {
    GraphDoc d;
    d.dom = &doc;
    if (doc.is_object()) {
        auto it = doc.find("nodes");
        if (it != doc.end() && it->is_array()) {
            d.nodesList = true;
            d.nodes.reserve(it->size());
            for (const json& n : *it) d.nodes.push_back(nodeRecOf(n));
        }
    }
    return d;
}

GraphDoc parseGraphDoc(const std::string& text, const std::string& label) {
    GraphDoc d;
    JsonPlace place;
    GraphSax sax(d, place);
    parseJsonSax(text, label, sax, place);
    return d;
}

} // namespace passlens::graphjson
