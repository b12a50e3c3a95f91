// The bytes of an initializer written transposed (a linear layer's weight for MatMul) are the
// plain transpose, for every element width (bool/int8 1 byte, float16/bfloat16 2, float32 4,
// float64/int64 8) and for shapes whose sides are not multiples of the kernel's 8x8 blocks, also
// when the output spans several 4 MiB blocks (the buffer is reused between blocks and tensors).
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/onnx_ir.h"

using namespace oxport;

namespace {

std::string transposedBytes(DType dtype, int64_t rows, int64_t cols, std::string* expected, size_t* blocks) {
  const size_t es = dtypeSize(dtype);
  std::vector<unsigned char> src(static_cast<size_t>(rows * cols) * es);
  uint32_t x = 12345;
  for (auto& b : src) b = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  expected->assign(src.size(), '\0');
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      for (size_t k = 0; k < es; ++k)
        (*expected)[static_cast<size_t>(j * rows + i) * es + k] = static_cast<char>(src[static_cast<size_t>(i * cols + j) * es + k]);
  onnx_ir::Initializer init;
  init.name = "w";
  HostTensor t = HostTensor::fromBytes(dtype, {rows, cols}, std::move(src));
  init.transposed_of = std::make_shared<const HostTensor>(t);
  init.tensor = t;
  init.tensor.shape = {cols, rows};
  init.tensor.data = nullptr;
  std::ostringstream os;
  *blocks = 0;
  EXPECT_TRUE(onnx_ir::writeInitializerBytes(os, init, [&](size_t) { return ++*blocks, true; }));
  return os.str();
}

struct Case {
  DType dtype;
  int64_t rows, cols;
};

}  // namespace

TEST(TransposeWrite, EqualsThePlainTranspose) {
  for (const Case& c : {Case{DType::Float32, 1, 1}, Case{DType::Float32, 3, 5}, Case{DType::Float32, 64, 192},
                        Case{DType::Float32, 1027, 333}, Case{DType::Float16, 13, 1029}, Case{DType::BFloat16, 256, 96},
                        Case{DType::UInt8, 37, 91}, Case{DType::Bool, 8, 9}, Case{DType::Int64, 71, 17},
                        Case{DType::Float64, 8, 8}}) {
    SCOPED_TRACE(std::string(dtypeName(c.dtype)) + " " + std::to_string(c.rows) + "x" + std::to_string(c.cols));
    std::string expected;
    size_t blocks = 0;
    EXPECT_TRUE(transposedBytes(c.dtype, c.rows, c.cols, &expected, &blocks) == expected);
  }
}

TEST(TransposeWrite, SeveralBlocksAndAPowerOfTwoRowLength) {
  // 1024 x 1536 float32: 6 MiB, two blocks of output rows; the row length is GPT-2 medium's d.
  for (DType dtype : {DType::Float32, DType::Float16}) {
    SCOPED_TRACE(dtypeName(dtype));
    std::string expected;
    size_t blocks = 0;
    EXPECT_TRUE(transposedBytes(dtype, 1024, 1539, &expected, &blocks) == expected);
    EXPECT_EQ(blocks, dtype == DType::Float32 ? 2u : 1u);
  }
}
