// The compact session format, version 2 (docs/SESSION_FORMAT.md): a fixed header, then one
// zlib stream holding the metadata as JSON, tables of strings, types, ops and constant data
// (each stored once), the source graph and the events as LEB128 varints.
#include "passlens/io/SessionFile.h"

#include "passlens/io/Encoding.h"
#include "passlens/io/Failure.h"
#include "passlens/io/GraphJson.h"
#include "passlens/io/JsonFile.h"
#include "passlens/io/Limits.h"
#include "passlens/ir/Error.h"
#include "passlens/trace/Trace.h"

#include <zlib.h>

#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace passlens {

namespace {
using json = nlohmann::json;

constexpr std::size_t kHeaderSize = 36;
constexpr std::uint64_t kMaxInflateRatio = 1032; // deflate never expands data more than this

void putLe(std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint64_t getLe(std::string_view in, std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
    return v;
}

// Appends LEB128 varints, zigzag signed values, length-prefixed strings and doubles. Ids are
// written as the difference to the previous id of the stream (ids are mostly sequential).
class Writer {
public:
    std::string out;
    void u(std::uint64_t v) {
        while (v >= 0x80) {
            out += static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        out += static_cast<char>(v);
    }
    void s(std::int64_t v) { u((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63)); }
    void str(std::string_view v) {
        u(v.size());
        out.append(v);
    }
    void f64(double v) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        putLe(out, bits, 8);
    }
    void id(std::int64_t v) {
        s(v - m_lastId);
        m_lastId = v;
    }

private:
    std::int64_t m_lastId = 0;
};

// Reads what Writer writes. Each read checks the bytes left; `count` checks that a count of
// items, each at least `minBytes` long, fits in what is left before anything is allocated.
class Reader {
public:
    explicit Reader(std::string_view in)
        : m_in(in) {}
    std::size_t offset() const { return m_pos; }
    bool atEnd() const { return m_pos == m_in.size(); }
    std::uint64_t u() {
        std::uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            if (m_pos >= m_in.size()) throw Error("unexpected end of data");
            const auto b = static_cast<unsigned char>(m_in[m_pos++]);
            if (shift == 63 && b > 1) throw Error("varint does not fit 64 bits");
            v |= std::uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
    }
    std::int64_t s() {
        const std::uint64_t v = u();
        return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
    }
    std::size_t count(std::size_t minBytes, const char* what) {
        const std::uint64_t n = u();
        if (n > (m_in.size() - m_pos) / minBytes)
            throw Error(std::string(what) + ": count " + std::to_string(n) + " is more than the " +
                        std::to_string(m_in.size() - m_pos) + " bytes left can hold");
        return static_cast<std::size_t>(n);
    }
    std::string_view str() {
        const std::uint64_t n = u();
        if (n > m_in.size() - m_pos)
            throw Error("a string of " + std::to_string(n) + " bytes runs past the end of the data");
        const std::string_view v = m_in.substr(m_pos, static_cast<std::size_t>(n));
        m_pos += static_cast<std::size_t>(n);
        return v;
    }
    // A string that is text (a name, a table entry): well-formed UTF-8, which JSON output needs.
    std::string_view text() {
        const std::string_view v = str();
        if (!isValidUtf8(v)) throw Error("text that is not valid UTF-8: '" + escapeInvalidUtf8(v) + "'");
        return v;
    }
    double f64() {
        if (m_in.size() - m_pos < 8) throw Error("unexpected end of data");
        const std::uint64_t bits = getLe(m_in, m_pos, 8);
        m_pos += 8;
        double v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
    }
    std::int64_t id() {
        m_lastId += s();
        return m_lastId;
    }
    template <class T> std::size_t index(const std::vector<T>& table, const char* what) {
        const std::uint64_t i = u();
        if (i >= table.size())
            throw Error(std::string(what) + " index " + std::to_string(i) + " out of range (the table has " +
                        std::to_string(table.size()) + ")");
        return static_cast<std::size_t>(i);
    }

private:
    std::string_view m_in;
    std::size_t m_pos = 0;
    std::int64_t m_lastId = 0;
};

std::string compress(const std::string& body) {
    uLongf size = compressBound(static_cast<uLong>(body.size()));
    std::string out(size, '\0');
    const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(body.data()),
                             static_cast<uLong>(body.size()), Z_BEST_SPEED);
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK) throw Error("cannot compress the session (zlib error " + std::to_string(rc) + ")");
    out.resize(size);
    return out;
}

std::string inflateBody(std::string_view data, std::uint64_t size) {
    std::string out(static_cast<std::size_t>(size), '\0');
    uLongf got = static_cast<uLongf>(size);
    uLong used = static_cast<uLong>(data.size());
    const int rc =
        uncompress2(reinterpret_cast<Bytef*>(out.data()), &got, reinterpret_cast<const Bytef*>(data.data()), &used);
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK || got != size || used != data.size())
        throw Error("corrupt compressed data (zlib: " +
                    std::string(rc == Z_BUF_ERROR    ? "more data than the header announces or a cut stream"
                                : rc == Z_DATA_ERROR ? "invalid deflate data or checksum"
                                : rc == Z_OK         ? "less data than the header announces"
                                                     : "error " + std::to_string(rc)) +
                    ")");
    return out;
}

Location parseLocation(std::string_view s) {
    if (s == "host") return Location::host();
    if (s == "gpu") return Location::gpu();
    if (s.starts_with("gpu:")) return Location::gpu(std::string(s.substr(4)));
    throw Error("bad location '" + std::string(s) + "'");
}

struct TypeHash {
    std::size_t operator()(const Type& t) const { return t.hash(); }
};

bool sameContent(const TensorData& a, const TensorData& b) {
    if (a.dtype != b.dtype || a.shape != b.shape || a.missing != b.missing || a.loaded() != b.loaded()) return false;
    return !a.loaded() || a.bytes == b.bytes || *a.bytes == *b.bytes;
}

// The tables a session refers to by index, filled while the graph and events are encoded.
struct Tables {
    std::vector<std::string> strings;
    std::unordered_map<std::string, std::uint32_t> stringIndex;
    std::vector<const Type*> types;
    std::unordered_map<Type, std::uint32_t, TypeHash> typeIndex;
    std::vector<const Op*> ops;
    std::unordered_map<const Op*, std::uint32_t> opIndex;
    std::vector<const TensorData*> blobs;
    std::unordered_map<const TensorData*, std::uint32_t> blobByPointer;
    std::unordered_multimap<std::uint64_t, std::uint32_t> blobByHash;

    std::uint32_t string(const std::string& s) {
        auto [it, added] = stringIndex.try_emplace(s, static_cast<std::uint32_t>(strings.size()));
        if (added) strings.push_back(s);
        return it->second;
    }
    std::uint32_t type(const Type& t) {
        auto [it, added] = typeIndex.try_emplace(t, static_cast<std::uint32_t>(types.size()));
        if (added) types.push_back(&it->first);
        return it->second;
    }
    std::uint32_t op(const Op& o) {
        auto [it, added] = opIndex.try_emplace(&o, static_cast<std::uint32_t>(ops.size()));
        if (added) ops.push_back(&o);
        return it->second;
    }
    // Constant data is stored once per content (dtype, shape, bytes), found by its content hash.
    std::uint32_t blob(const TensorData& t) {
        if (auto it = blobByPointer.find(&t); it != blobByPointer.end()) return it->second;
        const std::uint64_t h = t.loaded() ? t.contentHash() : std::hash<std::string>{}(t.missing);
        auto [first, last] = blobByHash.equal_range(h);
        for (auto it = first; it != last; ++it)
            if (sameContent(*blobs[it->second], t)) return blobByPointer[&t] = it->second;
        const auto i = static_cast<std::uint32_t>(blobs.size());
        blobs.push_back(&t);
        blobByHash.emplace(h, i);
        return blobByPointer[&t] = i;
    }
};

// A tag's text: empty for no tag (null: NodeDef's default) and for an empty object.
std::string tagText(const json& tag) {
    return tag.is_null() || (tag.is_object() && tag.empty()) ? std::string() : tag.dump();
}

void writeNode(Writer& w, Tables& tb, const NodeDef& d) {
    w.id(d.id);
    w.u(tb.op(*d.opPtr));
    w.str(d.name);
    w.str(tagText(d.tag));
    w.u(d.inputs.size());
    for (VarId v : d.inputs) w.id(v);
    w.u(d.outputs.size());
    for (const auto& o : d.outputs) {
        w.id(o.id);
        w.u(tb.type(o.type));
        w.str(o.name);
    }
}

void writeConstant(Writer& w, Tables& tb, const ConstantDef& c) {
    w.id(c.id);
    w.str(c.name);
    w.u(tb.string(c.location.str()));
    w.u(tb.blob(*c.data));
}
} // namespace

bool SessionFile::isCompact(std::string_view head) { return head.starts_with(kCompactMagic); }

std::string SessionFile::toCompact(const Trace& trace, const std::filesystem::path& source, const json& profiles,
                                   const json& view) {
    Tables tb;
    Writer g; // source graph and events, written after the tables they refer to
    g.str(trace.m_sourceName);
    g.u(trace.m_sourceInputs.size());
    for (const auto& i : trace.m_sourceInputs) {
        g.id(i.id);
        g.u(tb.type(i.type));
        g.str(i.name);
        g.str(tagText(i.tag));
    }
    g.u(trace.m_sourceConstants.size());
    for (const auto& c : trace.m_sourceConstants) writeConstant(g, tb, c);
    g.u(trace.m_sourceNodes.size());
    for (const auto& d : trace.m_sourceNodes) writeNode(g, tb, d);
    g.u(trace.m_sourceOutputs.size());
    for (VarId v : trace.m_sourceOutputs) g.id(v);
    g.u(trace.m_events.size());
    for (const auto& e : trace.m_events) {
        MemoryReserve::throwIfSpent();
        g.u(static_cast<std::uint8_t>(e.status));
        g.u(tb.string(e.phase));
        g.u(tb.string(e.rewriter));
        g.id(e.node);
        g.u(tb.string(e.reason));
        g.f64(e.timeUs);
        g.u(e.removed.size());
        for (NodeId id : e.removed) g.id(id);
        g.u(e.added.size());
        for (NodeId id : e.added) g.id(id);
        g.u(e.replaced.size());
        for (const auto& [a, b] : e.replaced) {
            g.id(a);
            g.id(b);
        }
        g.u(e.constants.size()); // constants first: the nodes may use them
        for (const auto& c : e.constants) writeConstant(g, tb, c);
        g.u(e.nodes.size());
        for (const auto& d : e.nodes) writeNode(g, tb, d);
    }

    Writer body;
    body.str(dumpJson(metaJson(trace, source, profiles, view, kCompactVersion)));
    body.u(tb.strings.size());
    for (const auto& s : tb.strings) body.str(s);
    body.u(tb.types.size());
    for (const Type* t : tb.types) body.str(t->str());
    body.u(tb.ops.size());
    for (const Op* o : tb.ops) {
        body.str(o->kind());
        body.str(o->attrs().empty() ? std::string() : o->attrs().dump());
        body.u(o->subgraphs().size());
        for (const Subgraph& s : o->subgraphs()) {
            body.str(s.attribute);
            body.str(writeGraphJson(*s.graph, graphWriteOptions()).dump());
        }
    }
    body.u(tb.blobs.size());
    for (const TensorData* t : tb.blobs) {
        body.str(dtypeName(t->dtype));
        body.u(t->shape.size());
        for (std::int64_t d : t->shape) body.s(d);
        body.str(t->missing);
        body.str(t->loaded() ? std::string_view(*t->bytes) : std::string_view());
    }
    body.out += g.out;
    g.out = std::string();
    MemoryReserve::throwIfSpent();

    std::string file(kCompactMagic);
    putLe(file, 0, 1);
    putLe(file, kCompactVersion, 1);
    putLe(file, 0, 2);
    putLe(file, body.out.size(), 8);
    const std::string packed = compress(body.out);
    putLe(file, packed.size(), 8);
    file += packed;
    return file;
}

Trace SessionFile::fromCompact(std::string_view bytes, const std::string& label, const std::filesystem::path& baseDir) {
    auto fail = [&](const std::string& where, const std::string& why) {
        return Error(label + ": " + where + ": " + why);
    };
    if (!isCompact(bytes))
        throw fail("byte 0",
                   "not a compact session file (it does not start with \"" + std::string(kCompactMagic) + "\")");
    if (bytes.size() < kHeaderSize)
        throw fail("header", "truncated: the file has " + std::to_string(bytes.size()) + " bytes, the header " +
                                 std::to_string(kHeaderSize));
    const auto version = getLe(bytes, 17, 1);
    if (version != kCompactVersion)
        throw fail("header", "unsupported session version " + std::to_string(version) + " (this build reads 1 and " +
                                 std::to_string(kCompactVersion) + ")");
    const std::uint64_t bodySize = getLe(bytes, 20, 8);
    const std::uint64_t packedSize = getLe(bytes, 28, 8);
    if (packedSize != bytes.size() - kHeaderSize)
        throw fail("header", "the header announces " + std::to_string(packedSize) + " compressed bytes, the file has " +
                                 std::to_string(bytes.size() - kHeaderSize) +
                                 (packedSize > bytes.size() - kHeaderSize ? " (truncated)" : ""));
    if (bodySize / kMaxInflateRatio > packedSize)
        throw fail("header", "the header announces " + std::to_string(bodySize) +
                                 " bytes of data, more than its compressed size can hold");
    std::string body;
    try {
        body = inflateBody(bytes.substr(kHeaderSize), bodySize);
    } catch (const Error& e) {
        throw fail("byte " + std::to_string(kHeaderSize), e.what());
    }

    Trace t;
    t.m_label = label;
    Reader r(body);
    // The place being read, for messages: a section and up to two indices, formatted on error.
    std::string section = "metadata";
    std::size_t i1 = SIZE_MAX, i2 = SIZE_MAX;
    const char* sub = nullptr;
    auto place = [&] {
        std::string p = section;
        if (i1 != SIZE_MAX) p += "[" + std::to_string(i1) + "]";
        if (sub) p += std::string(".") + sub;
        if (i2 != SIZE_MAX) p += "[" + std::to_string(i2) + "]";
        return p;
    };
    try {
        readMeta(t, parseJson(std::string(r.str()), label + ": metadata"), label);
        section = "strings";
        std::vector<std::string> strings(r.count(1, "strings"));
        for (auto& s : strings) s = r.text();
        section = "types";
        std::vector<Type> types(r.count(1, "types"));
        for (i1 = 0; i1 < types.size(); ++i1) types[i1] = Type::parse(r.str());
        i1 = SIZE_MAX;
        section = "ops";
        std::vector<const Op*> ops(r.count(3, "ops"));
        for (i1 = 0; i1 < ops.size(); ++i1) {
            const std::string kind(r.text());
            const std::string_view attrText = r.str();
            const json attrs =
                attrText.empty() ? json::object() : parseJson(std::string(attrText), label + ": " + place());
            std::vector<Subgraph> subs(r.count(2, "subgraphs"));
            for (auto& s : subs) {
                s.attribute = r.text();
                const std::string where = label + ": " + place() + ".subgraphs." + s.attribute;
                s.graph = readGraphJson(parseJson(std::string(r.str()), where), where, baseDir).graph;
            }
            ops[i1] = &Op::get(kind, attrs, std::move(subs));
        }
        i1 = SIZE_MAX;
        section = "constants";
        std::vector<std::shared_ptr<const TensorData>> blobs(r.count(5, "constants"));
        for (i1 = 0; i1 < blobs.size(); ++i1) {
            auto d = std::make_shared<TensorData>();
            const std::string_view dt = r.str();
            const auto dtype = parseDType(dt);
            if (!dtype) throw Error("unknown dtype '" + std::string(dt) + "'");
            d->dtype = *dtype;
            d->shape.resize(r.count(1, "dims"));
            for (auto& dim : d->shape) {
                dim = r.s();
                if (dim < 0) throw Error("negative dim " + std::to_string(dim));
            }
            d->missing = r.text();
            const std::string_view data = r.str();
            if (d->missing.empty()) {
                if (isString(d->dtype)) {
                    if (const std::string why = d->bytesProblem(data); !why.empty()) throw Error("data " + why);
                } else if (const std::uint64_t need = tensorBytes(d->dtype, d->shape); data.size() != need) {
                    throw Error("data has " + std::to_string(data.size()) + " bytes, the type needs " +
                                std::to_string(need));
                }
                d->bytes = std::make_shared<const std::string>(data);
            }
            blobs[i1] = std::move(d);
        }
        i1 = SIZE_MAX;
        // Every variable a node or a replacement names must be defined earlier in the file.
        std::unordered_set<VarId> defined;
        auto use = [&](VarId v) {
            if (!defined.contains(v))
                throw Error("variable " + std::to_string(v) + " is used before anything defines it");
        };
        auto define = [&](VarId v) { defined.insert(v); };
        auto readNode = [&](NodeDef& d) {
            d.id = r.id();
            d.opPtr = ops[r.index(ops, "op")];
            d.name = r.text();
            const std::string_view tag = r.str();
            if (!tag.empty()) d.tag = parseJson(std::string(tag), label + ": " + place() + ".tag");
            d.inputs.resize(r.count(1, "inputs"));
            for (VarId& v : d.inputs) {
                v = r.id();
                use(v);
            }
            const std::size_t nOut = r.count(3, "outputs");
            d.outputs.reserve(nOut);
            for (std::size_t k = 0; k < nOut; ++k) {
                const VarId id = r.id();
                const Type& ty = types[r.index(types, "type")];
                d.outputs.push_back({id, ty, std::string(r.text())});
                define(id);
            }
        };
        auto readConstant = [&](ConstantDef& c) {
            c.id = r.id();
            c.name = r.text();
            c.location = parseLocation(strings[r.index(strings, "string")]);
            c.data = blobs[r.index(blobs, "constant")];
            define(c.id);
        };
        section = "graph";
        t.m_sourceName = r.text();
        section = "graph.inputs";
        t.m_sourceInputs.resize(r.count(4, "inputs"));
        for (i1 = 0; i1 < t.m_sourceInputs.size(); ++i1) {
            auto& in = t.m_sourceInputs[i1];
            in.id = r.id();
            in.type = types[r.index(types, "type")];
            in.name = r.text();
            const std::string_view tag = r.str();
            in.tag = tag.empty() ? json::object() : parseJson(std::string(tag), label + ": " + place() + ".tag");
            define(in.id);
        }
        section = "graph.constants";
        t.m_sourceConstants.resize(r.count(4, "constants"));
        for (i1 = 0; i1 < t.m_sourceConstants.size(); ++i1) readConstant(t.m_sourceConstants[i1]);
        section = "graph.nodes";
        t.m_sourceNodes.resize(r.count(6, "nodes"));
        for (i1 = 0; i1 < t.m_sourceNodes.size(); ++i1) readNode(t.m_sourceNodes[i1]);
        i1 = SIZE_MAX;
        section = "graph.outputs";
        t.m_sourceOutputs.resize(r.count(1, "outputs"));
        for (VarId& v : t.m_sourceOutputs) {
            v = r.id();
            use(v);
        }
        section = "events";
        std::size_t nodeRecords = t.m_sourceNodes.size();
        t.m_events.resize(r.count(15, "events"));
        for (i1 = 0; i1 < t.m_events.size(); ++i1) {
            RewriteEvent& e = t.m_events[i1];
            e.seq = static_cast<int>(i1) + 1;
            const std::uint64_t status = r.u();
            if (status > 2)
                throw Error("status " + std::to_string(status) + " is not applied (0), rejected (1) or declined (2)");
            e.status = static_cast<EventStatus>(status);
            e.phase = strings[r.index(strings, "string")];
            e.rewriter = strings[r.index(strings, "string")];
            e.node = r.id();
            e.reason = strings[r.index(strings, "string")];
            e.timeUs = r.f64();
            e.removed.resize(r.count(1, "removed"));
            for (NodeId& id : e.removed) id = r.id();
            e.added.resize(r.count(1, "added"));
            for (NodeId& id : e.added) id = r.id();
            // The replacement's new nodes and constants are defined after its pairs in the file,
            // so the pairs are checked once the event is read.
            e.replaced.resize(r.count(2, "replaced"));
            for (auto& [a, b] : e.replaced) {
                a = r.id();
                b = r.id();
            }
            sub = "constants";
            e.constants.resize(r.count(4, "constants"));
            for (i2 = 0; i2 < e.constants.size(); ++i2) readConstant(e.constants[i2]);
            sub = "nodes";
            e.nodes.resize(r.count(6, "nodes"));
            for (i2 = 0; i2 < e.nodes.size(); ++i2) readNode(e.nodes[i2]);
            sub = "replaced";
            for (i2 = 0; i2 < e.replaced.size(); ++i2) {
                use(e.replaced[i2].first);
                use(e.replaced[i2].second);
            }
            sub = nullptr;
            i2 = SIZE_MAX;
            nodeRecords += e.nodes.size();
            t.allowDenseIds(nodeRecords);
            for (NodeId id : e.added) t.m_created.set(id, e.seq);
            for (NodeId id : e.removed) t.m_removed.set(id, e.seq);
        }
        i1 = SIZE_MAX;
        section = "end";
        if (!r.atEnd()) throw Error(std::to_string(body.size() - r.offset()) + " bytes after the last event");
    } catch (const json::exception& e) {
        throw fail(place(), jsonErrorReason(e));
    } catch (const Error& e) {
        const std::string what = e.what();
        if (what.starts_with(label + ": ")) throw;
        throw fail(place(), what);
    }
    return t;
}

} // namespace passlens
