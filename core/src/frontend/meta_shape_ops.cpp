// The example run on meta tensors: ops libtorch 1.13 has no Meta kernel for in C++ whose results'
// shapes, strides and dtypes follow from their arguments' shapes, dtypes and static values alone
// (never from a dynamic tensor's data). One such op (Swin's roll, MViT's and S3D's max_pool3d,
// RAFT's grid_sampler) used to send the whole model back to a real forward pass; now that op
// alone runs on zero-filled CPU tensors of its arguments' sizes and strides, and its results
// become meta again, so the rest of the run stays meta (meta_rules.h).
#include <unordered_set>

#include "frontend/meta_rules.h"

#include "frontend/frontend.h"
#include "pipeline/model_impl.h"

namespace oxport {

namespace jit = torch::jit;

namespace {

// Shape-only ops: an output's size never depends on a tensor argument's values, and no tensor
// value makes the op fail where another of the same size and dtype succeeds. Ops whose result
// size follows data (nonzero, unique, masked_select, repeat_interleave with a tensor of counts),
// that index with a tensor (index_select, gather: an index out of range fails) or that read a
// tensor as a number (item, arange with a tensor bound) must never be listed.
const std::unordered_set<std::string>& shapeOnlyOps() {
  static const std::unordered_set<std::string> kinds = {
      "aten::roll",
      "aten::max_pool3d",
      "aten::max_pool3d_with_indices",
      "aten::avg_pool3d",
      "aten::adaptive_avg_pool3d",
      "aten::_adaptive_avg_pool3d",
      "aten::adaptive_max_pool3d",
      "aten::grid_sampler",
      "aten::grid_sampler_2d",
      "aten::grid_sampler_3d",
      "aten::im2col",
      "aten::col2im",
      "aten::reflection_pad3d",
      "aten::replication_pad3d",
      "aten::upsample_nearest3d",
      "aten::upsample_trilinear3d",
  };
  return kinds;
}

// A real tensor for a meta one: the same sizes, strides and dtype, filled with zeros.
at::Tensor zerosLike(const at::Tensor& t) {
  if (!t.defined() || !t.is_meta()) return t;
  at::Tensor z = at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kCPU));
  z.zero_();
  return z;
}

}  // namespace

bool isShapeOnlyOp(const std::string& kind) { return shapeOnlyOps().count(kind) != 0; }

void runShapeOnlyOp(const std::string& kind, jit::Operation& op, jit::Stack& stack) {
  for (auto& v : stack) {
    if (v.isDevice() && v.toDevice().is_meta()) v = c10::IValue(c10::Device(at::kCPU));
    else v = mapTensors(v, zerosLike);
  }
  try {
    op(stack);
  } catch (const std::exception& e) {
    // What the real op rejects: the real run reports it at the node.
    std::string msg = torchErrorMessage(e);
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    throw MetaFallback(kind + " on zero-filled tensors: " + msg);
  }
  for (auto& v : stack) v = toMeta(v);
}

}  // namespace oxport
