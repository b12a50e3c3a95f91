// Passes over the core's ONNX IR, run after conversion. The export pipeline
// (core/src/pipeline/pipeline.cpp) names them and runs them in order.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_ir.h"
#include "oxport/diagnostic.h"
#include "oxport/progress.h"

namespace oxport::onnx_ir {

// Removes nodes whose outputs nothing uses (graph outputs are used).
int eliminateDeadNodes(Graph& g);
// Removes initializers no node or output uses.
int removeUnusedInitializers(Graph& g);
// Writes the initializers that are not weights (what the export computed: shapes, scales,
// axes, index tables) as Constant nodes before their first use, as torch.onnx does, so that no
// runtime treats them as inputs a caller may override. Tensors over `max_bytes` stay
// initializers (never graph inputs), so that they can go to external data. Returns the count.
int constantsAsNodes(Graph& g, size_t max_bytes);
// Initializers with identical dtype, shape and bytes are kept once. Hashing the bytes of a large
// model takes seconds: the cancel is polled before each initializer is hashed, and a cancel
// returns -1 with the graph unchanged.
int deduplicateInitializers(Graph& g, const CancelToken& cancel = {});
// Folds BatchNormalization (inference form) into a preceding Conv whose weights are
// initializers and whose output feeds only that BatchNormalization.
int foldBatchNormIntoConv(Graph& g);
// Removes Identity nodes whose output is not a graph output.
int eliminateIdentities(Graph& g);
// A Cast of a small computed constant (not a weight, at most 64 elements) becomes a constant of
// the target dtype, as torch.onnx folds `x * 2` into a float constant. Returns the count.
int foldConstantCasts(Graph& g);
// Removes arithmetic with a neutral 0-d constant (x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1)
// whose output is not a graph output, and writes a floating 1 / x as Reciprocal(x): converters
// write such steps for general formulas (linspace from 0, a step of 1 / (n - 1)), and ONNX
// Runtime 1.20's own rewrite of Div(1, x) feeding a Mul (its DivMulFusion) crashes on float64
// graphs. Returns the count of nodes removed or rewritten.
int eliminateNoops(Graph& g);
// ONNX Runtime (1.20) rewrites Cast(to=bool) of a Cast from a float to an integer into one Cast
// from the float to bool, losing the truncation: (x * 10).long().bool() gives true for
// 0 < |10x| < 1. Such a Cast to bool of a Cast to an integer type is written as Not(Equal(x, 0)),
// which computes the same and which the runtime leaves alone (narrower integers compare in int32:
// Equal-7 and ONNX Runtime's kernels take int32/int64). Subgraphs too. Returns the count.
int guardCastsToBool(Graph& g);
// Renames a tensor everywhere (node inputs and outputs, graph inputs/outputs, value_info).
void renameTensor(Graph& g, const std::string& from, const std::string& to);

}  // namespace oxport::onnx_ir
