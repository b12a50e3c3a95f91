// Precompiled for the libtorch-facing sources of core only.
#pragma once
#include <torch/script.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
