#pragma once
/// @file TraceSteps.h
/// passlens/trace/TraceSteps.h under the path ui/src/DebugSession.cpp still includes; remove
/// this file once that include names passlens/trace/TraceSteps.h.
#include "passlens/trace/TraceSteps.h"
