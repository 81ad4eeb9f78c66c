#pragma once
// Attribute validation of op kinds, run by OpRegistry before it interns an op.
#include "passlens/ir/OpRegistry.h"

#include <string>

namespace passlens::opkinds {

/// Checks `attrs` (null: no attributes) of an op of `kind`, described by `info`: each attribute
/// against its AttrSpec (unless the kind allows unknown attributes), defaults filled in, then the
/// kind's own checks (scalar op known, composite expression parses, dtypes, DimShuffle order,
/// Subtensor idx, Pool / AbstractConv2d geometry). Throws passlens::Error naming the kind and
/// the attribute ("Elemwise: unknown scalar op 'foo'").
void completeAttrs(const std::string& kind, const OpKindInfo& info, Attrs& attrs);

} // namespace passlens::opkinds
