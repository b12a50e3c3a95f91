// Lists as ONNX sequences (opset 11+), shared by the list converters (ops_sequence.cpp), the
// control-flow converters (ops_control.cpp) and the readers of lists (cat, stack, len, indexing).
#pragma once

#include "convert/context.h"

namespace oxport::convert {

// A list of tensors (the kind that can be an ONNX sequence).
bool isTensorList(const Value* v);
// The dtype of the tensors of list `v`, from the example run (its elements, or those of the
// `related` lists: a loop's output, its body's values), Float32 when none was seen.
DType listElemDType(const Value* v, std::initializer_list<const Value*> related = {});
// The sequence for `v` as an output of subgraph `g`: a copy when `g` does not make it itself.
Result<std::string> sequenceSubgraphOutput(Context& ctx, onnx_ir::Graph& g, const Value* v, DType elem);
// Below opset 13 a Loop or If cannot carry a sequence (ONNX Loop-11/If-11 take tensors only):
// the list crosses it packed into one tensor, its elements stacked on a new axis 0 (they must have
// one shape; an empty list is an empty tensor), and is unpacked into a sequence on the other side
// (SplitToSequence).
bool packListsAtBoundaries(const Context& ctx);
// The packed tensor of sequence `seq` (an If on its length: empty, or ConcatFromSequence).
std::string packList(Context& ctx, const std::string& seq, DType elem);
std::string unpackList(Context& ctx, const std::string& packed);
// Refuses (naming the list) packing a list whose elements had different shapes in the example run.
Status checkPackable(Context& ctx, const Value* list, std::initializer_list<const Value*> related);
// l[a:b:c] of a list of tensors: the elements when they are known here, else the sequence packed,
// sliced on axis 0 and unpacked (its tensors must have one shape).
Status sliceTensorList(Context& ctx, const Node& n);
// cat/stack(tensors, dim) of a list bound as a sequence: ConcatFromSequence (`new_axis` for stack).
Status concatSequence(Context& ctx, const Node& n, bool new_axis);

}  // namespace oxport::convert
