// Adaptive average pooling to an output size known only when the graph runs (ops_pool_runtime.cpp).
#pragma once

#include "convert/context.h"

namespace oxport::convert {

// adaptive_avg_pool{1,2,3}d(self, output_size) whose output_size is computed from the input's
// shape (F.interpolate(mode='area', scale_factor=s) asks for floor(in * s)).
Status adaptiveAvgRuntimeSize(Context& ctx, const Node& n, size_t nd);

}  // namespace oxport::convert
