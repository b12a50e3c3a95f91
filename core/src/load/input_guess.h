// Private: example shapes for forward()'s tensor arguments, read from a loaded module's graph.
// A file saved by torch.jit.save keeps no input shapes, so the studio would otherwise start every
// tensor at [1]. See ModelInfo::InputGuess and docs/STUDIO.md ("Starting shapes").
#pragma once

#include <map>
#include <string>

#include <torch/script.h>

#include "oxport/model.h"

namespace oxport {

// One entry per tensor argument (by schema name) for which the graph shows something usable.
std::map<std::string, ModelInfo::InputGuess> guessInputShapes(const torch::jit::Module& module);

}  // namespace oxport
