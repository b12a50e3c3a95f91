// The shared library's own translation unit: the versions it was built with (the stages are
// linked into it whole; see core/CMakeLists.txt).
#include <google/protobuf/stubs/common.h>
#include <torch/version.h>

#include "oxport/model.h"

namespace oxport {

Versions versions() {
  Versions v;
  v.oxport = OXPORT_VERSION;
  v.libtorch = TORCH_VERSION;
  v.onnx = "1.12";
#ifdef ONNX_VERSION
  v.onnx = ONNX_VERSION;
#endif
  int pv = GOOGLE_PROTOBUF_VERSION;
  v.protobuf = std::to_string(pv / 1000000) + "." + std::to_string(pv / 1000 % 1000) + "." + std::to_string(pv % 1000);
  return v;
}

}  // namespace oxport
