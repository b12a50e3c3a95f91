// Private: judging outputs that differ only because ONNX Runtime and libtorch order tied
// candidates differently (TopK over a heatmap with plateaus, ArgMax over equal logits, sort).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "oxport/runtime.h"
#include "verify/graph_deps.h"

namespace oxport::verify_detail {

struct TieRerun {
  // false: the file's TopK/ArgMax/ArgMin picks a position whose value differs from the one
  // libtorch picks (a real difference, not tie order); `note` says where.
  bool ties_only = false;
  int64_t tied_elements = 0;               // index elements that differ between the two orders
  std::vector<NamedTensor> outputs;        // the file's outputs computed from libtorch's order
  std::string note;
};

// Runs the file with the tie nodes' data and indices exposed, recomputes each node's indices
// with libtorch (torch.topk / argmax / argmin) from the data ONNX Runtime gave it, checks that
// where the two orders differ the selected values are equal, and runs the rest of the graph again
// from libtorch's indices. Copies of the file are written next to it and removed.
Result<TieRerun> rerunWithLibtorchTieOrder(const std::filesystem::path& onnx_file, const std::vector<TieNode>& ties,
                                           const std::vector<NamedTensor>& inputs, OnnxRuntime& runtime);

}  // namespace oxport::verify_detail
