#pragma once
/// @file Report.h
/// passlens/report/Report.h under the path ui/src/MainWindow.cpp still includes; remove this
/// file once that include names passlens/report/Report.h.
#include "passlens/report/Report.h"
