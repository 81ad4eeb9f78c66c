#pragma once
// Opening FILE for render / report: the core use case (pipeline/OpenAndOptimize.h) with its
// warnings and run messages printed on stderr as "warning: ...".
#include <passlens/pipeline/OpenAndOptimize.h>

#include <string>

namespace passlens::cli {

/// openAndOptimize(file, {pipeline}, pipelineGiven), warnings printed. Throws passlens::Error
/// naming FILE (or the pipeline file) for anything that cannot be read or optimized.
OpenedTrace openTrace(const std::string& file, const std::string& pipeline, bool pipelineGiven);

/// The file name of the trace's source model, for captions.
std::string sourceLabel(const OpenedTrace& in);

} // namespace passlens::cli
