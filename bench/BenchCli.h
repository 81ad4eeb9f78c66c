#pragma once
// Command-line parsing shared by the bench programs (CLI11, as passlens-cli): `--help` prints
// the usage and exits 0, an unknown option or a bad value exits 2 with CLI11's message.
#include <CLI/CLI.hpp>

#include <optional>

namespace passlens::bench {

/// Parses argv into `app`. Returns nullopt when the program should go on, else its exit status:
/// 0 after --help (usage on stdout), 2 for a usage error (message and a pointer to --help on stderr).
inline std::optional<int> parseCommandLine(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    return std::nullopt;
}

} // namespace passlens::bench
