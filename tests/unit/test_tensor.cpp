// DTypes, ONNX element types and HostTensor element access.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "oxport/tensor.h"

namespace oxport {
namespace {

const DType kAll[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                      DType::UInt8,   DType::Int16,   DType::Int32,   DType::Int64,    DType::Bool};

TEST(DType, NamesRoundTrip) {
  for (DType t : kAll) {
    const auto parsed = parseDType(dtypeName(t));
    ASSERT_TRUE(parsed) << dtypeName(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_STREQ(dtypeName(DType::Float32), "float32");
  EXPECT_STREQ(dtypeName(DType::BFloat16), "bfloat16");
  EXPECT_STREQ(dtypeName(DType::Bool), "bool");
}

TEST(DType, PyTorchAliases) {
  EXPECT_EQ(parseDType("float"), DType::Float32);
  EXPECT_EQ(parseDType("torch.float32"), DType::Float32);
  EXPECT_EQ(parseDType("double"), DType::Float64);
  EXPECT_EQ(parseDType("torch.float64"), DType::Float64);
  EXPECT_EQ(parseDType("half"), DType::Float16);
  EXPECT_EQ(parseDType("torch.half"), DType::Float16);
  EXPECT_EQ(parseDType("bfloat16"), DType::BFloat16);
  EXPECT_EQ(parseDType("short"), DType::Int16);
  EXPECT_EQ(parseDType("int"), DType::Int32);
  EXPECT_EQ(parseDType("long"), DType::Int64);
  EXPECT_EQ(parseDType("torch.long"), DType::Int64);
  EXPECT_EQ(parseDType("Float32"), DType::Float32);
  EXPECT_EQ(parseDType("torch.uint8"), DType::UInt8);
}

TEST(DType, UnknownNames) {
  for (const char* s : {"", "float128", "int63", "torch.", "uint16", "complex64", "float32 ", "torch.torch.int8"})
    EXPECT_FALSE(parseDType(s)) << '"' << s << '"';
}

TEST(DType, SizesAndFloating) {
  EXPECT_EQ(dtypeSize(DType::Float32), 4u);
  EXPECT_EQ(dtypeSize(DType::Float64), 8u);
  EXPECT_EQ(dtypeSize(DType::Float16), 2u);
  EXPECT_EQ(dtypeSize(DType::BFloat16), 2u);
  EXPECT_EQ(dtypeSize(DType::Int8), 1u);
  EXPECT_EQ(dtypeSize(DType::UInt8), 1u);
  EXPECT_EQ(dtypeSize(DType::Int16), 2u);
  EXPECT_EQ(dtypeSize(DType::Int32), 4u);
  EXPECT_EQ(dtypeSize(DType::Int64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  for (DType t : kAll) {
    const bool floating = t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
    EXPECT_EQ(isFloating(t), floating) << dtypeName(t);
  }
}

TEST(DType, OnnxElementTypes) {
  // TensorProto.DataType in onnx.proto.
  EXPECT_EQ(onnxDataType(DType::Float32), 1);
  EXPECT_EQ(onnxDataType(DType::UInt8), 2);
  EXPECT_EQ(onnxDataType(DType::Int8), 3);
  EXPECT_EQ(onnxDataType(DType::Int16), 5);
  EXPECT_EQ(onnxDataType(DType::Int32), 6);
  EXPECT_EQ(onnxDataType(DType::Int64), 7);
  EXPECT_EQ(onnxDataType(DType::Bool), 9);
  EXPECT_EQ(onnxDataType(DType::Float16), 10);
  EXPECT_EQ(onnxDataType(DType::Float64), 11);
  EXPECT_EQ(onnxDataType(DType::BFloat16), 16);
  for (DType t : kAll) EXPECT_EQ(fromOnnxDataType(onnxDataType(t)), t) << dtypeName(t);
  // UNDEFINED, UINT16, STRING, UINT32, UINT64, COMPLEX64, COMPLEX128, FLOAT8...
  for (int t : {0, 4, 8, 12, 13, 14, 15, 17, -1, 1000}) EXPECT_FALSE(fromOnnxDataType(t)) << t;
}

TEST(HostTensor, NumelAndShapeString) {
  const auto t = HostTensor::fromVector<float>(DType::Float32, {2, 3}, std::vector<float>(6, 1.f));
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes, 24u);
  EXPECT_EQ(t.shapeString(), "[2, 3]");

  const auto scalar = HostTensor::fromVector<int64_t>(DType::Int64, {}, {42});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.shapeString(), "[]");
  EXPECT_EQ(scalar.at(0), 42.0);

  const auto empty = HostTensor::fromVector<float>(DType::Float32, {4, 0, 2}, {});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.shapeString(), "[4, 0, 2]");
}

TEST(HostTensor, AtConvertsIntegersAndBool) {
  EXPECT_EQ(HostTensor::fromVector<int8_t>(DType::Int8, {2}, {-128, 127}).at(0), -128.0);
  EXPECT_EQ(HostTensor::fromVector<uint8_t>(DType::UInt8, {2}, {0, 255}).at(1), 255.0);
  EXPECT_EQ(HostTensor::fromVector<int16_t>(DType::Int16, {1}, {-300}).at(0), -300.0);
  EXPECT_EQ(HostTensor::fromVector<int32_t>(DType::Int32, {2}, {7, -70000}).at(1), -70000.0);
  EXPECT_EQ(HostTensor::fromVector<int64_t>(DType::Int64, {1}, {int64_t{1} << 40}).at(0), std::ldexp(1.0, 40));
  EXPECT_EQ(HostTensor::fromVector<double>(DType::Float64, {1}, {0.1}).at(0), 0.1);
  EXPECT_EQ(HostTensor::fromVector<float>(DType::Float32, {1}, {0.1f}).at(0), static_cast<double>(0.1f));
  const auto b = HostTensor::fromVector<uint8_t>(DType::Bool, {3}, {0, 1, 2});
  EXPECT_EQ(b.at(0), 0.0);
  EXPECT_EQ(b.at(1), 1.0);
  EXPECT_EQ(b.at(2), 1.0);
}

TEST(HostTensor, AtConvertsFloat16) {
  const auto t = HostTensor::fromVector<uint16_t>(
      DType::Float16, {11}, {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x7C00, 0xFC00, 0x7E00, 0x8000, 0x3555});
  EXPECT_EQ(t.at(0), 1.0);
  EXPECT_EQ(t.at(1), -2.0);
  EXPECT_EQ(t.at(2), 65504.0);                  // largest finite half
  EXPECT_EQ(t.at(3), std::ldexp(1.0, -24));     // smallest subnormal
  EXPECT_EQ(t.at(4), std::ldexp(1023.0, -24));  // largest subnormal
  EXPECT_EQ(t.at(5), std::ldexp(1.0, -14));     // smallest normal
  EXPECT_EQ(t.at(6), std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.at(7), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.at(8)));
  EXPECT_EQ(t.at(9), 0.0);
  EXPECT_TRUE(std::signbit(t.at(9)));
  EXPECT_EQ(t.at(10), 0.333251953125);
}

TEST(HostTensor, AtConvertsBFloat16) {
  const auto t = HostTensor::fromVector<uint16_t>(DType::BFloat16, {5}, {0x3F80, 0xC0A0, 0x4049, 0x7F80, 0x0001});
  EXPECT_EQ(t.at(0), 1.0);
  EXPECT_EQ(t.at(1), -5.0);
  EXPECT_EQ(t.at(2), 3.140625);
  EXPECT_EQ(t.at(3), std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.at(4), std::ldexp(1.0, -133));  // a float32 subnormal
}

TEST(HostTensor, AtRejectsOutOfRange) {
  const auto t = HostTensor::fromVector<float>(DType::Float32, {2}, {1.f, 2.f});
  EXPECT_THROW(t.at(2), std::out_of_range);
  EXPECT_THROW(t.at(-1), std::out_of_range);
  EXPECT_THROW(HostTensor{}.at(0), std::out_of_range);
}

TEST(HostTensor, FromBytesKeepsBytes) {
  std::vector<unsigned char> bytes(8);
  const float values[2] = {1.5f, -2.25f};
  std::memcpy(bytes.data(), values, 8);
  const auto t = HostTensor::fromBytes(DType::Float32, {1, 2}, bytes);
  EXPECT_EQ(t.nbytes, 8u);
  EXPECT_EQ(t.at(0), 1.5);
  EXPECT_EQ(t.at(1), -2.25);
  EXPECT_TRUE(t.holder);
}

TEST(HostTensor, SameContent) {
  const auto a = HostTensor::fromVector<float>(DType::Float32, {2}, {1.f, 2.f});
  EXPECT_TRUE(a.sameContent(HostTensor::fromVector<float>(DType::Float32, {2}, {1.f, 2.f})));
  EXPECT_FALSE(a.sameContent(HostTensor::fromVector<float>(DType::Float32, {2}, {1.f, 3.f})));
  EXPECT_FALSE(a.sameContent(HostTensor::fromVector<float>(DType::Float32, {1, 2}, {1.f, 2.f})));
  EXPECT_FALSE(a.sameContent(HostTensor::fromVector<int32_t>(DType::Int32, {2}, {1, 2})));
  const auto e1 = HostTensor::fromVector<float>(DType::Float32, {0}, {});
  EXPECT_TRUE(e1.sameContent(HostTensor::fromVector<float>(DType::Float32, {0}, {})));
}

}  // namespace
}  // namespace oxport
