// Antialiased bilinear/bicubic resizing below ONNX Resize's antialias (opset 18), shared by the
// traced _upsample_*_aa ops (ops_resize_aa.cpp) and a scripted F.interpolate (ops_resize.cpp).
#pragma once

#include <string>
#include <vector>

#include "convert/context.h"

namespace oxport::convert {

// x [N, C, H, W] (dtype dt) resized as PyTorch's antialiased kernels do: to `sizes` ([2] int64)
// or, when `sizes` is empty, to floor(input size * scales). scales[i] > 0 also sets the scale of
// axis i's coordinates (PyTorch's scales_h/scales_w); 0: in / out.
Result<std::string> resizeAntialiased(Context& ctx, const std::string& x, DType dt, bool cubic, bool align,
                                      const std::string& sizes, const std::vector<double>& scales);

}  // namespace oxport::convert
