// Private: forward of a half-precision module with its float16/bfloat16 weights widened to float32
// where each is read, for the reference run of a model that libtorch 1.13 cannot run on the CPU in
// its own type. Unlike a float32 copy of the whole module (twice the weights' bytes on top of the
// weights), a widened weight lives only until its last use in the run: the extra memory is one
// weight at a time, not the model.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <torch/script.h>

#include "oxport/diagnostic.h"

namespace torch::jit {
struct Code;
}

namespace oxport {

struct WidenedForward {
  std::shared_ptr<torch::jit::Graph> graph;  // forward, inlined, with a Cast to float32 after each half read
  std::shared_ptr<torch::jit::Code> code;    // the interpreter's code for it (no graph executor)
  size_t widened_reads = 0;                  // the reads of half tensors given a Cast
  // With round_to: the same graph with each op's result rounded to the half type (a half run).
  std::shared_ptr<torch::jit::Graph> rounded_graph;
  std::shared_ptr<torch::jit::Code> rounded_code;
  size_t rounded_results = 0;  // the op results rounded to the half type
};

// forward() of `m`, inlined, each read of a float16/bfloat16 tensor attribute (parameters, buffers,
// on a static path from self) or tensor constant followed by a cast to float32. An error when
// forward cannot be inlined into one graph (then the caller falls back to a float32 copy).
// With `round_to` (the model's half type), also `rounded_graph`: each op's floating result rounded
// to that type and back, where a run in that type rounds it (a GPU's half kernels; ONNX Runtime's
// CPU kernels round at some of those places, and run chains of ops without half kernels in
// float32). Ops that only move or pick elements, and values the model itself casts to float32,
// are not rounded. Verification uses the two runs' difference as the measure of how far float16's
// own rounding moves the outputs (verify.cpp).
Result<WidenedForward> widenedForward(const torch::jit::Module& m,
                                      std::optional<at::ScalarType> round_to = std::nullopt);

// Runs it (`rounded`: the rounded graph) on `inputs` (forward's arguments without self; half
// tensors among them are widened to float32 too). Errors carry libtorch's message without its
// backtrace.
Result<c10::IValue> runWidenedForward(const WidenedForward& f, const torch::jit::Module& m,
                                      const std::vector<c10::IValue>& inputs, bool rounded = false);

}  // namespace oxport
