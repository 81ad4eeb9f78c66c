#pragma once
/// @file SessionFile.h
/// Session files: a recorded optimization run (trace/Trace.h) saved and reopened. The JSON
/// session of FORMAT.md §2 (version 1) is read and written here.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace passlens {

class Trace;

/// Reader and writer of session files (a friend of Trace: it fills the recorded state).
class SessionFile {
public:
    /// The session document of `trace` (FORMAT.md §2, version 1). `source`: the file the graph
    /// came from (path and sha256 recorded when it exists); `profiles` (FORMAT §2 profiles) may
    /// be empty, then the trace's own profiles are written.
    static nlohmann::json toJson(const Trace& trace, const std::filesystem::path& source,
                                 const nlohmann::json& profiles = nlohmann::json::array());
    /// A session document as text with "format" and "version" first (readers sniff the head),
    /// member by member without a reordered copy of the document. Throws passlens::Error when
    /// memory runs out (MemoryReserve).
    static std::string dumpJson(const nlohmann::json& doc);
    /// The trace of a parsed session document. `label` names the file in messages (also in those
    /// of Trace::graphAfter when the events do not replay), `baseDir` resolves `{"file"}`
    /// constants. Throws passlens::Error("LABEL: PLACE: reason"), e.g.
    /// "s.passlens.json: events[3].nodes[0]: type must be string, but is number".
    static Trace fromJson(const nlohmann::json& doc, const std::string& label, const std::filesystem::path& baseDir);
    /// Writes the session of `trace` atomically (AtomicFile.h). Throws passlens::Error.
    static void save(const Trace& trace, const std::filesystem::path& path, const std::filesystem::path& source,
                     const nlohmann::json& profiles = nlohmann::json::array());
    /// Reads a session file. Throws passlens::Error("FILE: PLACE: reason"); nothing half-loaded.
    static Trace load(const std::filesystem::path& path);
};

} // namespace passlens
