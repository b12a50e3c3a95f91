// Diagnostics about the traced graph that do not stop an export: sizes baked by tracing into
// what should follow a dynamic axis.
#pragma once

#include <string>
#include <vector>

#include "ir/ts_ir.h"
#include "oxport/options.h"

namespace oxport {

// A dynamic axis of a graph input with the size it had in the example run.
struct DynamicSize {
  std::string input;  // graph input name
  int64_t axis = 0;
  int64_t size = 0;
  std::string label;  // the dim_param name
};

std::vector<DynamicSize> dynamicSizes(const ts::Graph& g, const std::vector<std::string>& input_names,
                                      const ExportOptions& options);

// Warnings (code "baked-dynamic-size") for constants that equal the example size of a dynamic
// axis and feed a shape-like argument (view/reshape/expand/repeat/new tensors/arange/slice/
// interpolate sizes), or constant tensors (not parameters) that have such a size and meet the
// inputs. A note (code "dynamic-axis-size-one") when a dynamic axis was traced at size 1, where
// tracing cannot tell it from a constant.
std::vector<Diagnostic> findBakedSizes(const ts::Graph& g, const std::vector<DynamicSize>& sizes);

}  // namespace oxport
