// Seed writer for fuzz_session and fuzz_graphjson: for each model given writes
// OUTDIR/<n>.graph.json (the model as graph JSON) and a session of the `theano` pipeline in both
// formats the session reader takes: OUTDIR/<n>.passlens (compact, docs/SESSION_FORMAT.md) and
// OUTDIR/<n>.passlens.json (JSON, FORMAT.md §2). Not a fuzz target; scripts/fuzz.sh runs it
// before those two targets.
#include <passlens/io/AtomicFile.h>
#include <passlens/io/GraphJson.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/io/SessionFile.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: fuzz_seeds OUTDIR MODEL...\n");
        return 2;
    }
    const std::filesystem::path out = argv[1];
    std::filesystem::create_directories(out);
    int written = 0;
    for (int i = 2; i < argc; ++i) {
        try {
            passlens::LoadedGraph lg = passlens::loadGraphFile(argv[i]);
            passlens::GraphJsonWriteOptions wo;
            wo.base64 = true; // no .npy files beside the seed
            passlens::writeFileAtomic(out / (std::to_string(i - 1) + ".graph.json"),
                                      passlens::writeGraphJson(*lg.graph, wo).dump());
            const passlens::Pipeline p = passlens::Pipeline::builtin("theano");
            passlens::Trace trace;
            const passlens::PipelineRun run = p.run(*lg.graph, &trace);
            trace.finish(run, *lg.graph, p.buildContext().caps);
            trace.save(out / (std::to_string(i - 1) + ".passlens"), argv[i]);
            passlens::SessionFile::save(trace, out / (std::to_string(i - 1) + ".passlens.json"), argv[i],
                                        nlohmann::json::array(), nullptr, passlens::SessionFile::Format::Json);
            ++written;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fuzz_seeds: %s: skipped: %s\n", argv[i], e.what());
        }
    }
    std::printf("fuzz_seeds: %d graphs and sessions in %s\n", written, out.c_str());
    return written > 0 ? 0 : 1;
}
