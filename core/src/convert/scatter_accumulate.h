// Exact scatter-add below opset 16, where ScatterElements/ScatterND have no reduction="add"
// (torch.onnx writes a plain ScatterElements there: wrong when an index repeats).
#pragma once

#include <string>

#include "convert/context.h"

namespace oxport::convert {

// self + the rows of src added at idx along dim: index_add, and scatter_add with a 1-D index
// broadcast over the other dims. idx: any shape, flattened to the K rows of src (src has self's
// shape with dim of size K); negative indices wrap. One MatMul of a [D, K] one-hot by src's
// [K, rest] rows. Any opset.
std::string addRowsAlong(Context& ctx, const std::string& self, const std::string& idx, DType idx_dt,
                         const std::string& src, int64_t dim, int rank, DType dt);

// index_put(accumulate=True) in ScatterND's layout: xp has the n indexed dims first, stacked
// [*B, n] holds the indices, upd [*B, *rest] the values. The indices are made one linear index
// into the indexed dims, then addRowsAlong on the flattened dims. Any opset.
std::string addAtStackedIndices(Context& ctx, const std::string& xp, const std::string& stacked, int n,
                                const std::string& upd, int batch_rank, DType dt);

// scatter_add with any index: a Loop over the index's slices along dim. Within one slice the
// targets are distinct (they differ in another coordinate), so ScatterElements without reduction
// of GatherElements(acc, I_k) + upd_k is exact. idx and upd have the same shape. Opset 11+.
std::string scatterAddLoop(Context& ctx, const std::string& self, const std::string& idx, const std::string& upd,
                           int64_t dim, DType dt);

// scatter_add (and scatter reduce='add') below opset 16: addRowsAlong when the index is a 1-D index
// broadcast along the other dims (expand / expand_as of a tensor that is 1 on every dim but dim
// and covers self on the other dims, judged from the index's producer and the example shapes),
// else scatterAddLoop (opset 11+, needs-opset below). upd: the updates cut to the index's shape.
Result<std::string> scatterAddExact(Context& ctx, const Value* self, const Value* index, const std::string& x,
                            const std::string& idx, const std::string& upd, int64_t dim);

}  // namespace oxport::convert
