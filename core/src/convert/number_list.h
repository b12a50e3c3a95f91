// A TorchScript list of numbers (int[], float[], bool[]; elements may be dynamic) as a 1-D tensor:
// what list reductions, list.index() and indexing with a dynamic index read.
#pragma once

#include <string>

#include "convert/context.h"

namespace oxport::convert {

// The list as a 1-D tensor of `dt`: an int list as intsTensor gives it (sizes and slices of
// them included), any other as the Concat of its elements. "" for an empty list that is not an
// int list (its callers decide what that means).
Result<std::string> numberListTensor(Context& ctx, const Value* list, DType dt);

}  // namespace oxport::convert
