#pragma once
/// @file SessionFile.h
/// Session files: a recorded optimization run (trace/Trace.h) saved and reopened. Two formats,
/// recognised by content: the compact session (docs/SESSION_FORMAT.md, version 2, written by
/// default) and the JSON session of FORMAT.md §2 (version 1, still read and, on request, written).
#include "passlens/io/GraphJson.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace passlens {

class Trace;

/// Reader and writer of session files (a friend of Trace: it fills the recorded state).
class SessionFile {
public:
    /// The format written: compact (version 2) or JSON (version 1).
    enum class Format { Compact, Json };
    /// First bytes of a compact session file (docs/SESSION_FORMAT.md).
    static constexpr std::string_view kCompactMagic = "passlens.session";
    /// The version of the compact format this build writes and reads.
    static constexpr unsigned kCompactVersion = 2;

    /// Writes the session of `trace` atomically (AtomicFile.h). `source`: the file the graph came
    /// from (path and sha256 recorded when it exists); `profiles` (FORMAT §2 profiles) may be
    /// empty, then the trace's own profiles are written; `view`, an object or null, is the
    /// window's state (the step shown), read back by Trace::view(). Throws passlens::Error.
    static void save(const Trace& trace, const std::filesystem::path& path, const std::filesystem::path& source,
                     const nlohmann::json& profiles = nlohmann::json::array(), const nlohmann::json& view = nullptr,
                     Format format = Format::Compact);
    /// Reads a session file of either format. Throws passlens::Error("FILE: PLACE: reason"),
    /// e.g. "s.passlens: events[3].nodes[0]: type index 9 out of range (the table has 4)";
    /// nothing half-loaded.
    static Trace load(const std::filesystem::path& path);
    /// As load, from the file's bytes; `label` names the file in messages, `baseDir` resolves
    /// `{"file"}` constants of JSON sessions.
    static Trace read(std::string_view bytes, const std::string& label, const std::filesystem::path& baseDir);
    /// True when `head` (the first bytes of a file) starts a compact session.
    static bool isCompact(std::string_view head);

    /// The compact session file's bytes (docs/SESSION_FORMAT.md): header, then zlib-compressed
    /// tables and records; each distinct constant's data stored once. Throws passlens::Error.
    static std::string toCompact(const Trace& trace, const std::filesystem::path& source,
                                 const nlohmann::json& profiles = nlohmann::json::array(),
                                 const nlohmann::json& view = nullptr);
    /// The trace of a compact session's bytes. Every count and index is checked against the bytes
    /// left and the tables before anything is allocated; a variable must be defined before it is
    /// used. Throws passlens::Error("LABEL: PLACE: reason"), the place a header field, a table
    /// entry or `events[i].nodes[k]`.
    static Trace fromCompact(std::string_view bytes, const std::string& label, const std::filesystem::path& baseDir);

    /// The JSON session document of `trace` (FORMAT.md §2, version 1); arguments as save's.
    static nlohmann::json toJson(const Trace& trace, const std::filesystem::path& source,
                                 const nlohmann::json& profiles = nlohmann::json::array());
    /// A session document as text with "format" and "version" first (readers sniff the head),
    /// member by member without a reordered copy of the document. Throws passlens::Error when
    /// memory runs out (MemoryReserve).
    static std::string dumpJson(const nlohmann::json& doc);
    /// The trace of a parsed JSON session document (version 1). `label` names the file in
    /// messages (also in those of Trace::graphAfter when the events do not replay), `baseDir`
    /// resolves `{"file"}` constants. Throws passlens::Error("LABEL: PLACE: reason"), e.g.
    /// "s.passlens.json: events[3].nodes[0]: type must be string, but is number".
    static Trace fromJson(const nlohmann::json& doc, const std::string& label, const std::filesystem::path& baseDir);

private:
    // Graph JSON in sessions (a JSON session's source graph, nested graphs of ops in both
    // formats): with ids, constants of more than 64 elements as base64.
    static GraphJsonWriteOptions graphWriteOptions();
    // The members both formats write as JSON: format, version, source, pipeline, phases,
    // lifting, profiles and view.
    static nlohmann::json metaJson(const Trace& trace, const std::filesystem::path& source,
                                   const nlohmann::json& profiles, const nlohmann::json& view, unsigned version);
    // Reads those members into `t`. Throws passlens::Error("LABEL: PLACE: reason").
    static void readMeta(Trace& t, const nlohmann::json& doc, const std::string& label);
};

} // namespace passlens
