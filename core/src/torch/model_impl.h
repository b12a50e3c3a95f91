// Private: the libtorch side of oxport::Model. Included only by core/src/torch/*.cpp.
#pragma once

#include <mutex>

#include <torch/script.h>

#include "oxport/model.h"

namespace oxport {

struct Model::Impl {
  torch::jit::Module module;
  ModelInfo info;
  mutable std::mutex mutex;  // one export/run at a time per model (training flags are toggled)
};

// Converts libtorch exceptions to a one-line message without the C++ backtrace.
std::string torchErrorMessage(const std::exception& e);

}  // namespace oxport
