// Host tensors: dtype names and sizes, ONNX element types, element access.
#include "oxport/tensor.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "base/enum_names.h"

namespace oxport {

namespace {
constexpr EnumName<DType> kDTypeNames[] = {
    {DType::Float32, "float32"}, {DType::Float64, "float64"}, {DType::Float16, "float16"},
    {DType::BFloat16, "bfloat16"}, {DType::Int8, "int8"}, {DType::UInt8, "uint8"}, {DType::Int16, "int16"},
    {DType::Int32, "int32"}, {DType::Int64, "int64"}, {DType::Bool, "bool"}};
}  // namespace

const char* dtypeName(DType t) { return enumName(kDTypeNames, t); }

std::optional<DType> parseDType(const std::string& s) {
  std::string n;
  n.reserve(s.size());
  for (char c : s) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // torch.float32 is how users print a dtype in Python.
  if (n.rfind("torch.", 0) == 0) n.erase(0, 6);

  // PyTorch's names and aliases.
  struct Alias {
    const char* name;
    DType dtype;
  };
  static const Alias kAliases[] = {
      {"float32", DType::Float32}, {"float", DType::Float32}, {"float64", DType::Float64},   {"double", DType::Float64},
      {"float16", DType::Float16}, {"half", DType::Float16},  {"bfloat16", DType::BFloat16}, {"int8", DType::Int8},
      {"uint8", DType::UInt8},     {"int16", DType::Int16},   {"short", DType::Int16},       {"int32", DType::Int32},
      {"int", DType::Int32},       {"int64", DType::Int64},   {"long", DType::Int64},        {"bool", DType::Bool},
  };
  for (const Alias& a : kAliases)
    if (n == a.name) return a.dtype;
  return std::nullopt;
}

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::Float64:
    case DType::Int64: return 8;
    case DType::Float32:
    case DType::Int32: return 4;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16: return 2;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool: return 1;
  }
  return 0;
}

bool isFloating(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

// Values of onnx::TensorProto_DataType (onnx.proto), written out so this file needs no ONNX header.
namespace onnx_type {
constexpr int kFloat = 1, kUint8 = 2, kInt8 = 3, kInt16 = 5, kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10,
              kDouble = 11, kBFloat16 = 16;
}

int onnxDataType(DType t) {
  switch (t) {
    case DType::Float32: return onnx_type::kFloat;
    case DType::Float64: return onnx_type::kDouble;
    case DType::Float16: return onnx_type::kFloat16;
    case DType::BFloat16: return onnx_type::kBFloat16;
    case DType::Int8: return onnx_type::kInt8;
    case DType::UInt8: return onnx_type::kUint8;
    case DType::Int16: return onnx_type::kInt16;
    case DType::Int32: return onnx_type::kInt32;
    case DType::Int64: return onnx_type::kInt64;
    case DType::Bool: return onnx_type::kBool;
  }
  return 0;  // UNDEFINED
}

std::optional<DType> fromOnnxDataType(int t) {
  switch (t) {
    case onnx_type::kFloat: return DType::Float32;
    case onnx_type::kDouble: return DType::Float64;
    case onnx_type::kFloat16: return DType::Float16;
    case onnx_type::kBFloat16: return DType::BFloat16;
    case onnx_type::kInt8: return DType::Int8;
    case onnx_type::kUint8: return DType::UInt8;
    case onnx_type::kInt16: return DType::Int16;
    case onnx_type::kInt32: return DType::Int32;
    case onnx_type::kInt64: return DType::Int64;
    case onnx_type::kBool: return DType::Bool;
    default: return std::nullopt;
  }
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

HostTensor HostTensor::fromBytes(DType dtype, std::vector<int64_t> shape, std::vector<unsigned char> bytes) {
  return fromVector<unsigned char>(dtype, std::move(shape), std::move(bytes));
}

namespace {

template <class T>
T load(const void* base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// IEEE 754 binary16 -> binary32, including subnormals, infinities and NaN.
float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: normalise the mantissa.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// bfloat16 is the upper half of a binary32.
float bfloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

double HostTensor::at(int64_t i) const {
  const size_t size = dtypeSize(dtype);
  if (i < 0 || data == nullptr || static_cast<uint64_t>(i) >= nbytes / size)
    throw std::out_of_range("HostTensor::at: element " + std::to_string(i) + " is outside a " +
                            std::string(dtypeName(dtype)) + " tensor of " + std::to_string(nbytes) + " bytes");
  switch (dtype) {
    case DType::Float32: return load<float>(data, i);
    case DType::Float64: return load<double>(data, i);
    case DType::Float16: return halfToFloat(load<uint16_t>(data, i));
    case DType::BFloat16: return bfloat16ToFloat(load<uint16_t>(data, i));
    case DType::Int8: return load<int8_t>(data, i);
    case DType::UInt8: return load<uint8_t>(data, i);
    case DType::Int16: return load<int16_t>(data, i);
    case DType::Int32: return load<int32_t>(data, i);
    case DType::Int64: return static_cast<double>(load<int64_t>(data, i));
    case DType::Bool: return load<uint8_t>(data, i) != 0 ? 1.0 : 0.0;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool HostTensor::sameContent(const HostTensor& o) const {
  if (dtype != o.dtype || shape != o.shape || nbytes != o.nbytes) return false;
  if (nbytes == 0) return true;
  if (data == nullptr || o.data == nullptr) return data == o.data;
  return std::memcmp(data, o.data, nbytes) == 0;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

double dtypeEpsilon(DType t) {
  switch (t) {
    case DType::Float16: return std::ldexp(1.0, -10);
    case DType::BFloat16: return std::ldexp(1.0, -7);
    default: return 0;
  }
}

std::string HostTensor::shapeString() const { return shapeText(shape); }

bool wellFormed(const HostTensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0) return false;
    n *= d;
  }
  return static_cast<size_t>(n) * dtypeSize(t.dtype) == t.nbytes && (t.nbytes == 0 || t.data);
}

}  // namespace oxport
