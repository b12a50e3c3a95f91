// crc32Update (the .pt archive check) against the bytewise definition of the zip CRC-32: every
// length around the fast path's 64-byte minimum and 16-byte steps, unaligned starts, and chained
// calls that split the data anywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "load/torch_archive.h"

namespace {

uint32_t bytewise(const unsigned char* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xffffffffu;
}

std::vector<unsigned char> randomBytes(size_t n) {
  std::mt19937 rng(7);
  std::vector<unsigned char> b(n);
  for (auto& x : b) x = static_cast<unsigned char>(rng());
  return b;
}

TEST(Crc32, KnownValue) {
  const char* s = "123456789";  // the check value of CRC-32/ISO-HDLC
  EXPECT_EQ(oxport::crc32Update(0, s, 9), 0xcbf43926u);
  EXPECT_EQ(oxport::crc32Update(0, s, 0), 0u);
}

TEST(Crc32, EveryLengthAndOffset) {
  const auto b = randomBytes(5000);
  for (size_t off = 0; off < 17; ++off)
    for (size_t n = 0; n + off <= 300; ++n)
      ASSERT_EQ(oxport::crc32Update(0, b.data() + off, n), bytewise(b.data() + off, n)) << "offset " << off << ", length " << n;
  for (size_t n : {1024u, 4095u, 4096u, 4097u, 4999u})
    EXPECT_EQ(oxport::crc32Update(0, b.data() + 1, n), bytewise(b.data() + 1, n)) << n;
}

TEST(Crc32, ChainedCallsAgree) {
  const auto b = randomBytes(70000);
  const uint32_t whole = bytewise(b.data(), b.size());
  for (size_t cut : {0u, 1u, 15u, 63u, 64u, 65u, 1000u, 65536u, 69999u, 70000u}) {
    const uint32_t a = oxport::crc32Update(0, b.data(), cut);
    EXPECT_EQ(oxport::crc32Update(a, b.data() + cut, b.size() - cut), whole) << "cut at " << cut;
  }
  uint32_t c = 0;  // many small pieces of varying sizes
  for (size_t at = 0, step = 1; at < b.size(); at += step, step = step * 7 % 251 + 1)
    c = oxport::crc32Update(c, b.data() + at, std::min(step, b.size() - at));
  EXPECT_EQ(c, whole);
}

}  // namespace
