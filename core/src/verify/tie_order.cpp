// rerunWithLibtorchTieOrder: see tie_order.h. libtorch is the judge of its own order: the indices
// it would pick from the very data the file's node saw (the exposed run) are fed back into the
// file in place of ONNX Runtime's, so everything computed from them (x = idx % W, a gather, a
// one-hot) is recomputed by the file itself; the caller compares those outputs with the reference
// by the usual rule. A wrong index (an off-by-one after the TopK, a TopK that keeps the smallest)
// still differs, either in the selected values or in the recomputed outputs.
#include "verify/tie_order.h"

#include <torch/torch.h>
#include <unistd.h>

#include <map>

#include "frontend/frontend.h"

namespace oxport::verify_detail {

namespace {

namespace fs = std::filesystem;

// A copy's path beside the file (external data is found relative to the model's folder).
fs::path besides(const fs::path& file, const std::string& what) {
  return file.parent_path() / (file.filename().string() + "." + what + "." + std::to_string(::getpid()) + ".onnx");
}

struct Removed {
  fs::path p;
  ~Removed() {
    std::error_code ec;
    fs::remove(p, ec);
  }
};

}  // namespace

Result<TieRerun> rerunWithLibtorchTieOrder(const fs::path& onnx_file, const std::vector<TieNode>& ties,
                                           const std::vector<NamedTensor>& inputs, OnnxRuntime& runtime) {
  TieRerun out;
  Removed exposed{besides(onnx_file, "tie-exposed")};
  OXPORT_TRY(writeTieExposed(onnx_file, ties, exposed.p));
  OXPORT_ASSIGN(auto seen, runtime.run(exposed.p, inputs));
  std::map<std::string, HostTensor> by_name;
  for (auto& t : seen) by_name[t.name] = t.tensor;
  std::vector<NamedTensor> fed = inputs;
  for (const auto& t : ties) {
    if (!by_name.count(t.data) || !by_name.count(t.indices)) {
      out.note = "ONNX Runtime did not return the data and indices of " + t.op_type + " '" + t.name + "'";
      return out;
    }
    const at::Tensor x = atFromHostTensor(by_name[t.data]);
    at::Tensor ort = atFromHostTensor(by_name[t.indices]).to(at::kLong);
    const int64_t axis = t.axis < 0 ? t.axis + x.dim() : t.axis;
    if (axis < 0 || axis >= std::max<int64_t>(x.dim(), 1)) {
      out.note = t.op_type + " '" + t.name + "' has axis " + std::to_string(t.axis) + " outside its input's rank";
      return out;
    }
    const bool squeezed = t.op_type != "TopK" && !t.keepdims && x.dim() > 0;
    if (squeezed) ort = ort.unsqueeze(axis);
    // libtorch's order is that of the op the user called: sort and topk order ties differently,
    // and so may max(dim) and argmax.
    at::Tensor mine;
    const std::string& kind = t.torch_kind;
    if (t.op_type == "TopK" && (kind == "aten::sort" || kind == "aten::argsort" || kind == "aten::msort") &&
        ort.size(axis) == x.size(axis)) {
      mine = std::get<1>(x.sort(axis, /*descending=*/t.largest));
    } else if (t.op_type == "TopK") {
      mine = std::get<1>(x.topk(ort.size(axis), axis, t.largest, /*sorted=*/true));
    } else if ((kind == "aten::max" || kind == "aten::min") && !t.select_last) {
      mine = std::get<1>(t.largest ? x.max(axis, true) : x.min(axis, true));
    } else {
      const at::Tensor xs = t.select_last ? x.flip({axis}) : x;
      mine = t.largest ? xs.argmax(axis, true) : xs.argmin(axis, true);
      if (t.select_last) mine = (x.size(axis) - 1) - mine;
    }
    if (ort.sizes() != mine.sizes() || (ort.numel() > 0 && (ort.min().item<int64_t>() < 0 ||
                                                            ort.max().item<int64_t>() >= x.size(axis)))) {
      out.note = t.op_type + " '" + t.name + "' returns indices of shape or range libtorch's does not";
      return out;
    }
    const at::Tensor a = x.gather(axis, ort), b = x.gather(axis, mine);
    const at::Tensor same = a.eq(b).logical_or(a.isnan().logical_and(b.isnan()));
    if (const int64_t bad = same.logical_not().sum().item<int64_t>(); bad > 0) {
      out.note = t.op_type + " '" + t.name + "' picks " + std::to_string(bad) +
                 " element(s) whose values differ from those libtorch picks from the same data: not a tie";
      return out;
    }
    out.tied_elements += ort.ne(mine).sum().item<int64_t>();
    if (squeezed) mine = mine.squeeze(axis);
    fed.push_back({t.indices, hostTensorFromAt(mine.contiguous())});
  }
  Removed substituted{besides(onnx_file, "tie-substituted")};
  OXPORT_TRY(writeTieSubstituted(onnx_file, ties, substituted.p));
  OXPORT_ASSIGN(out.outputs, runtime.run(substituted.p, fed));
  out.ties_only = true;
  return out;
}

}  // namespace oxport::verify_detail
