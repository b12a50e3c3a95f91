// The explicit converter registry: aten symbol + opset range -> converter. Each op family file
// ends in one register...Ops(Registry&) function; registry.cpp calls them all, in one list.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "convert/context.h"

namespace oxport::convert {

using ConvertFn = std::function<Status(Context&, const Node&)>;

struct OpEntry {
  std::string kind;   // "aten::conv2d"
  int min_opset = kMinOpset;
  int max_opset = kMaxOpset;
  ConvertFn fn;
  std::string family;  // "conv", "activation" ...
  bool complex = false;  // converts a node that reads or makes a complex value (addComplex)
};

class Registry {
 public:
  // Registers a converter for opsets [min_opset, max_opset]. Several entries per kind may
  // cover different opset ranges (the best form for each).
  void add(const std::string& kind, ConvertFn fn, int min_opset = kMinOpset, int max_opset = kMaxOpset);
  // A converter for the nodes of `kind` that read or make a complex value (real pair layout,
  // docs/ARCHITECTURE.md "Complex values"); the driver refuses such a node without one.
  void addComplex(const std::string& kind, ConvertFn fn, int min_opset = kMinOpset, int max_opset = kMaxOpset);
  void setFamily(std::string family) { family_ = std::move(family); }

  const OpEntry* find(const std::string& kind, int opset, bool complex = false) const;
  // Lowest opset at which `kind` converts, or 0 when it never does.
  int minOpset(const std::string& kind) const;
  bool knows(const std::string& kind) const { return entries_.count(kind) != 0; }
  std::vector<std::string> kinds() const;
  const std::vector<OpEntry>& entries(const std::string& kind) const;

 private:
  std::map<std::string, std::vector<OpEntry>> entries_;
  std::string family_;
};

// An op oxport refuses on purpose (refused.def): why, and what to do instead.
struct RefusedOp {
  const char* kind;
  const char* reason;
  const char* action;
};
// The entry for `kind`, or nullptr when it is not refused on purpose.
const RefusedOp* refusedOp(const std::string& kind);

// The registry with every built-in converter (built once, on first use, thread-safe).
const Registry& builtinRegistry();

// One function per op family (ops_<family>.cpp).
void registerStructuralOps(Registry& r);   // ops_misc.cpp: prim:: list/tuple plumbing, Int, size
void registerConvOps(Registry& r);
void registerNormOps(Registry& r);
void registerPoolOps(Registry& r);
void registerActivationOps(Registry& r);
void registerElementwiseOps(Registry& r);
void registerLinearOps(Registry& r);
void registerShapeOps(Registry& r);
void registerSplitOps(Registry& r);
void registerTensorOps(Registry& r);
void registerIndexOps(Registry& r);    // ops_index.cpp
void registerResizeOps(Registry& r);   // ops_resize.cpp: padding and upsampling
void registerReduceOps(Registry& r);
void registerQuantOps(Registry& r);    // ops_quant.cpp: fake quantization (QAT), quantize/dequantize
void registerSequenceOps(Registry& r);  // ops_sequence.cpp: lists mutated in loops as ONNX sequences
void registerControlOps(Registry& r);  // ops_control.cpp: prim::If / prim::Loop of scripted models
void registerMathOps(Registry& r);  // ops_math.cpp: fused arithmetic, modulo, logs, distances, small linalg
void registerSortOps(Registry& r);  // ops_sort.cpp: sort, argsort, topk, bucketize
void registerRnnOps(Registry& r);        // ops_rnn.cpp: lstm, gru, rnn_tanh/relu and their cells
void registerAttentionOps(Registry& r);  // ops_attention.cpp: fused MHA / encoder-layer fast paths
void registerLinalgOps(Registry& r);     // ops_linalg.cpp: tril/triu, einsum, outer, unflatten
void registerLossOps(Registry& r);       // ops_loss.cpp: mse, l1, smooth l1, huber, bce, nll, cross entropy
void registerRearrangeOps(Registry& r);  // ops_rearrange.cpp: rot90, fliplr, hstack, hsplit, channel_shuffle ...
void registerSpecialOps(Registry& r);    // ops_special.cpp: xlogy, logit, sinc, fmax, isclose, nansum, isin ...
void registerCumulativeOps(Registry& r);  // ops_cumulative.cpp: cumprod, cummax/cummin, logcumsumexp
void registerScatterReduceOps(Registry& r);  // ops_scatter_reduce.cpp: scatter_reduce, index_reduce
void registerMarginLossOps(Registry& r);  // ops_loss_margin.cpp: margin/embedding/triplet/poisson losses
void registerSpecialFunctionOps(Registry& r);  // ops_special_functions.cpp: lgamma, digamma, erfinv
void registerOrderStatsOps(Registry& r);  // ops_order_stats.cpp: msort, nanmedian, quantile, mode, histc
void registerProductOps(Registry& r);  // ops_products.cpp: kron, block_diag, cartesian_prod, linalg_vander
void registerNumberFunctionOps(Registry& r);  // ops_number_functions.cpp: i0, gcd, lcm
void registerVisionOps(Registry& r);  // ops_vision.cpp: torchvision's nms, roi_align, roi_pool
void registerSpectralOps(Registry& r);  // ops_spectral.cpp: stft, istft, torch.fft as exact DFT matmuls
void registerComplexOps(Registry& r);  // ops_complex.cpp: complex values as (real, imag) pairs
void registerSmallLinalgOps(Registry& r);  // ops_linalg_small.cpp: inverse, solve, cholesky, det below 11
void registerLinalgQrOps(Registry& r);  // ops_linalg_qr.cpp: Householder QR, pinv through it (n <= 8)
void registerFoldOps(Registry& r);  // ops_fold.cpp: col2im (F.fold)
void registerResizeAaOps(Registry& r);  // ops_resize_aa.cpp: antialiased bilinear/bicubic resize
void registerUniqueOps(Registry& r);  // ops_unique.cpp: unique_consecutive, bincount, pdist
void registerFloatTestOps(Registry& r);  // ops_float_tests.cpp: isposinf/isneginf/isreal, logaddexp2, xlog1py, ndtr
void registerCtcOps(Registry& r);  // ops_ctc.cpp: ctc_loss
void registerGridSampleOps(Registry& r);  // ops_grid_sample.cpp: grid_sampler
void registerStatsOps(Registry& r);      // ops_stats.cpp: cov, corrcoef, segment_reduce

}  // namespace oxport::convert
