// Host tensors: dtype, shape and bytes, independent of libtorch and protobuf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

enum class DType { Float32, Float64, Float16, BFloat16, Int8, UInt8, Int16, Int32, Int64, Bool };

const char* dtypeName(DType t);                        // "float32"
std::optional<DType> parseDType(const std::string& s);  // accepts "float32", "float", "int64", "long", ...
size_t dtypeSize(DType t);
bool isFloating(DType t);
int onnxDataType(DType t);                              // onnx::TensorProto_DataType value
// One rounding step of a floating type relative to 1 (float16 2^-10, bfloat16 2^-7; 0 for the
// types whose rounding is below any tolerance we use: float32, float64, integers).
double dtypeEpsilon(DType t);
// "[1, 3, 224, 224]"
std::string shapeText(const std::vector<int64_t>& shape);
std::optional<DType> fromOnnxDataType(int t);

// A dense row-major tensor. The bytes are shared and immutable; `holder` keeps the owner alive
// (a std::vector, an at::Tensor, a mapped file ...), so weights are not copied on the way out.
struct HostTensor {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::shared_ptr<const void> holder;
  const void* data = nullptr;
  size_t nbytes = 0;

  int64_t numel() const;
  template <class T> const T* as() const { return static_cast<const T*>(data); }

  static HostTensor fromBytes(DType dtype, std::vector<int64_t> shape, std::vector<unsigned char> bytes);
  template <class T>
  static HostTensor fromVector(DType dtype, std::vector<int64_t> shape, std::vector<T> values) {
    auto owner = std::make_shared<std::vector<T>>(std::move(values));
    HostTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data = owner->data();
    t.nbytes = owner->size() * sizeof(T);
    t.holder = std::move(owner);
    return t;
  }
  // Element i converted to double (for comparisons and summaries).
  double at(int64_t i) const;
  bool sameContent(const HostTensor& o) const;  // dtype, shape and bytes equal
  std::string shapeString() const;              // "[1, 3, 224, 224]"
};

// Whether a tensor's byte count matches its shape and dtype (and it has data when it has bytes).
bool wellFormed(const HostTensor& t);

struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

}  // namespace oxport
OXPORT_API_END
