#pragma once
/// @file GuiExecution.h
/// The window's ExecutionBackend over passlens_kernels (app/ is where ui and kernels meet).
#include "passlens/ui/ExecutionBackend.h"

#include <memory>

namespace passlens {

/// The CPU/CUDA executor and profiler of passlens_kernels behind the window's interface.
std::shared_ptr<ExecutionBackend> makeGuiExecutionBackend();

} // namespace passlens
