// Complex values in the converted graph (docs/ARCHITECTURE.md, "Complex values"): a real tensor of
// PyTorch's shape + [2] (real, imag), torch.view_as_real's layout. Helpers shared by ops_complex.cpp
// and ops_spectral.cpp.
#pragma once

#include <string>

#include "convert/context.h"

namespace oxport::convert {

// Component k (0 real, 1 imag) of a pair tensor whose PyTorch rank is `rank`: a real tensor.
std::string pairPart(Context& ctx, const std::string& pair, int rank, int k);
// The pair tensor of two real tensors of the same shape.
std::string makePair(Context& ctx, const std::string& re, const std::string& im);
// The same for parts of a known rank: the new axis is named by its position (opsets below 11
// take no negative axes in Unsqueeze and Concat, and ONNX's shape inference then loses the shape).
std::string makePair(Context& ctx, const std::string& re, const std::string& im, int rank);

}  // namespace oxport::convert
