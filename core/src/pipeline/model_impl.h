// Private: the libtorch side of oxport::Model. Included only by the stages that see libtorch.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include <torch/script.h>

#include "oxport/model.h"
#include "pipeline/widened_forward.h"

namespace oxport {

struct Model::Impl {
  torch::jit::Module module;
  ModelInfo info;
  mutable std::mutex mutex;  // one export/run at a time per model (training flags are toggled)
  // A half-precision model that libtorch cannot run on the CPU: its reference outputs come from
  // forward with each half weight widened to float32 where it is read (`widened`), or, where
  // forward cannot be run so (it cannot be inlined, or reads weights on paths not known before the
  // run), from a float32 copy of the module (`float_copy`, twice the weights' bytes). Made on the
  // first run that needed them and kept for the next ones (a verification runs the reference at
  // several sizes). Guarded by `mutex`.
  std::optional<WidenedForward> widened;
  std::optional<torch::jit::Module> float_copy;
  std::string float_copy_note;  // why: libtorch's missing kernel, for the report's note
  std::optional<at::ScalarType> float_copy_of;  // the half type it stands in for (either way)
};

// Converts libtorch exceptions to a one-line message without the C++ backtrace.
std::string torchErrorMessage(const std::exception& e);

}  // namespace oxport
