// Private: nn.TransformerEncoder's nested-tensor fast path, rewritten on the TorchScript graph
// before the example run into padded-tensor ops that ONNX can express.
#pragma once

#include <memory>
#include <string>

#include <torch/csrc/jit/ir/ir.h>

#include "oxport/options.h"

namespace oxport {

// torch 1.13's nn.TransformerEncoder (enable_nested_tensor=True, eval, no grad) packs its input
// into a nested tensor when src_key_padding_mask is given, every export-time condition on the
// first layer holds and `torch._nested_tensor_from_mask_left_aligned(src, mask.logical_not())` is
// true (a test on the mask's values), runs the layers' fast path on the unpadded tokens and returns
// `output.to_padded_tensor(0.)`: padding positions are zeros and the length is the longest row's.
// Otherwise the layers run on the padded input with the mask. On the valid positions both paths
// compute the same thing (the layers' fast-path conditions are the encoder's, and each token
// attends to the valid tokens of its row either way), so the rewrite:
//  - decides the encoder's conditions as if the mask were left-aligned (the left-aligned test
//    becomes true; foldExportConstants then keeps the nested branch only where every other
//    condition holds);
//  - runs the layers of that branch on the padded input with the mask (the padded path:
//    _nested_tensor_from_mask(x, valid) becomes x, the None mask handed to the layers the mask);
//  - replaces to_padded_tensor(y, 0.) by the test computed with tensor ops and, where it holds,
//    zeroed padding positions and a slice to the longest row (a Where, no If).
// With mask_check=False (no test) the branch always packs the first sum(valid) tokens of each row:
// the layers then see that left-aligned mask and the output is always zeroed and sliced.
// Returns an empty string, or why a nested op is left as it is (the example run then refuses it
// with `nested-tensor`).
std::string lowerNestedFastPath(std::shared_ptr<torch::jit::Graph>& g, const c10::IValue& self,
                                TrainingMode training);

}  // namespace oxport
