// A small op library as a vendor's QAT toolkit ships one: a fake-quantization op registered with
// TORCH_LIBRARY in its own namespace (oxtest::fake_quant). Built by the tests against this
// libtorch; make_models.py loads it in Python (torch.ops.load_library) to trace a model with it.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor fakeQuant(const at::Tensor& x, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max) {
  return (at::clamp(at::round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale;
}

}  // namespace

TORCH_LIBRARY(oxtest, m) {
  m.def("fake_quant(Tensor x, float scale, int zero_point, int quant_min, int quant_max) -> Tensor");
}

TORCH_LIBRARY_IMPL(oxtest, CPU, m) { m.impl("fake_quant", fakeQuant); }
