// Which sizes of the graph may change when the file runs: the axes of each tensor that follow a
// dynamic axis of a graph input (dynamic_axes) or a value read from the inputs' data, and the
// numbers (sizes, counts) that do. A converter that would fix a size seen in the example run asks
// here whether that size can change (adaptive pooling: a plain AveragePool over axes that cannot,
// windows computed at run time over axes that can).
//
// The answer errs towards "may change": an op without a rule here makes every axis of its
// results dynamic as soon as anything it reads is, and values inside If/Loop bodies count as
// dynamic whenever the graph has any dynamic input.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/ts_ir.h"

namespace oxport::convert {

class AxisDynamics {
 public:
  // `inputs`: for each graph input, which of its axes are dynamic (missing: none).
  AxisDynamics(const ts::Graph& g, const std::unordered_map<const ts::Value*, std::vector<bool>>& inputs);

  // Whether axis `axis` (negative counts from the end) of tensor `v` may have another size at run time.
  bool axisMayVary(const ts::Value* v, int64_t axis) const;
  // Whether any axis of tensor `v` may, or (not a tensor) whether the number or list `v` may change.
  bool mayVary(const ts::Value* v) const;

 private:
  struct Facts {
    std::vector<bool> axes;   // tensors: per axis
    bool data = false;        // tensors: the values depend on the inputs' data
    bool value = false;       // numbers, lists, tuples: the value may change
    std::vector<bool> elems;  // lists/tuples of numbers with a known layout: per element
  };
  const Facts* find(const ts::Value* v) const;
  bool anyAxis(const ts::Value* v) const;
  bool dataVaries(const ts::Value* v) const;
  bool axis(const ts::Value* v, int64_t a) const;
  void visitBlock(const std::vector<ts::Node*>& nodes);
  void visit(const ts::Node& n);
  bool inferTensor(const ts::Node& n, size_t out, Facts& f) const;

  std::unordered_map<const ts::Value*, Facts> facts_;
  bool any_dynamic_input_ = false;
};

}  // namespace oxport::convert
