// .npy reading and writing: round trips for every dtype, files written by NumPy (C and Fortran
// order, big-endian, format 2.0 and 3.0), files we write read back by NumPy, and the errors
// a user sees for bad files.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "oxport/npy.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "oxport-npy-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

const DType kAllDTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                            DType::Int8,    DType::UInt8,   DType::Int16,   DType::Int32,
                            DType::Int64,   DType::Bool};

// Deterministic bytes for a tensor (bool gets 0/1, as NumPy requires).
HostTensor patterned(DType t, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  const size_t size = dtypeSize(t);
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * size);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = t == DType::Bool ? static_cast<unsigned char>(i % 3 == 0)
                                : static_cast<unsigned char>((i * 37 + 11) & 0xff);
  return HostTensor::fromVector<unsigned char>(t, std::move(shape), std::move(bytes));
}

void writeBytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string npyHeader(const std::string& dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string pre = "\x93NUMPY";
  pre += '\x01';
  pre += '\x00';
  pre += static_cast<char>(h.size() & 0xff);
  pre += static_cast<char>(h.size() >> 8);
  return pre + h;
}

int runPython(const std::string& script_path) {
  const std::string cmd = std::string(OXPORT_PYTHON) + " " + script_path;
  return std::system(cmd.c_str());
}

}  // namespace

TEST_F(NpyTest, RoundTripsEveryDTypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {7}, {2, 3}, {2, 0, 4}, {1, 3, 4, 5}};
  for (DType t : kAllDTypes) {
    for (const auto& shape : shapes) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + ::testing::PrintToString(shape));
      const HostTensor in = patterned(t, shape);
      const fs::path f = dir_ / "t.npy";
      auto w = writeNpy(f, in);
      ASSERT_TRUE(w.ok()) << w.error().message();
      auto r = readNpy(f);
      ASSERT_TRUE(r.ok()) << r.error().message();
      EXPECT_EQ(r->dtype, t);
      EXPECT_EQ(r->shape, shape);
      ASSERT_EQ(r->nbytes, in.nbytes);
      EXPECT_EQ(0, in.nbytes ? std::memcmp(r->data, in.data, in.nbytes) : 0);
      // The data starts on a 64-byte boundary, as NumPy writes it.
      EXPECT_EQ((fs::file_size(f) - in.nbytes) % 64, 0u);
    }
  }
}

TEST_F(NpyTest, ReadsWhatNumPyWrites) {
  // value(i) for element i in C order, per dtype; the script below writes the same.
  const fs::path script = dir_ / "make.py";
  std::ofstream(script) << R"(import sys, numpy as np
from numpy.lib import format as F
d = sys.argv[1]
def vals(dt, n):
    i = np.arange(n)
    if dt == 'bool': return (i % 3 == 0)
    if dt.startswith('float'): return (i * 0.5 - 3).astype(dt)
    if dt == 'uint8': return (i * 7 % 256).astype(dt)
    if dt == 'int64': return (i * 1000000007 - 2**40).astype(dt)
    return (i * 3 - 5).astype(dt)
for dt in ['float32', 'float64', 'float16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool']:
    a = vals(dt, 24).reshape(2, 3, 4)
    np.save(f'{d}/c_{dt}.npy', a)
    np.save(f'{d}/f_{dt}.npy', np.asfortranarray(a))
    np.save(f'{d}/be_{dt}.npy', a.astype(a.dtype.newbyteorder('>')))
    with open(f'{d}/v2_{dt}.npy', 'wb') as f: F.write_array(f, a, version=(2, 0))
    with open(f'{d}/v3_{dt}.npy', 'wb') as f: F.write_array(f, a, version=(3, 0))
np.save(f'{d}/scalar.npy', np.float32(2.5))
np.save(f'{d}/empty.npy', np.zeros((0, 5), np.int32))
np.save(f'{d}/transposed.npy', np.arange(6, dtype=np.float32).reshape(2, 3).T)
)";
  ASSERT_EQ(runPython(script.string() + " " + dir_.string()), 0)
      << "could not run " << OXPORT_PYTHON << " with numpy; run tools/setup.sh";

  const std::vector<std::pair<std::string, DType>> dts = {
      {"float32", DType::Float32}, {"float64", DType::Float64}, {"float16", DType::Float16},
      {"int8", DType::Int8},       {"uint8", DType::UInt8},     {"int16", DType::Int16},
      {"int32", DType::Int32},     {"int64", DType::Int64},     {"bool", DType::Bool}};
  for (const auto& [name, dt] : dts) {
    for (const char* prefix : {"c_", "f_", "be_", "v2_", "v3_"}) {
      SCOPED_TRACE(prefix + name);
      auto r = readNpy(dir_ / (prefix + name + ".npy"));
      ASSERT_TRUE(r.ok()) << r.error().message();
      ASSERT_EQ(r->dtype, dt);
      ASSERT_EQ(r->shape, (std::vector<int64_t>{2, 3, 4}));
      for (int64_t i = 0; i < 24; ++i) {
        double want;
        if (dt == DType::Bool)
          want = i % 3 == 0;
        else if (dt == DType::Float32 || dt == DType::Float64 || dt == DType::Float16)
          want = i * 0.5 - 3;
        else if (dt == DType::UInt8)
          want = i * 7 % 256;
        else if (dt == DType::Int64)
          want = 0;  // checked exactly below
        else
          want = i * 3 - 5;
        if (dt == DType::Int64)
          ASSERT_EQ(r->as<int64_t>()[i], i * 1000000007LL - (1LL << 40)) << "element " << i;
        else
          ASSERT_EQ(r->at(i), want) << "element " << i;
      }
    }
  }
  auto s = readNpy(dir_ / "scalar.npy");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(s->shape.empty());
  EXPECT_EQ(s->at(0), 2.5);

  auto e = readNpy(dir_ / "empty.npy");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->shape, (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(e->nbytes, 0u);

  // A transposed view is saved in Fortran order; we hand it out row-major.
  auto t = readNpy(dir_ / "transposed.npy");
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 2}));
  const float want[] = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->as<float>()[i], want[i]) << i;
}

TEST_F(NpyTest, NumPyReadsWhatWeWrite) {
  for (DType t : kAllDTypes) {
    if (t == DType::BFloat16) continue;  // NumPy has no bfloat16 without ml_dtypes
    ASSERT_TRUE(writeNpy(dir_ / (std::string(dtypeName(t)) + ".npy"), patterned(t, {2, 3, 5})).ok());
    std::vector<unsigned char> raw(static_cast<size_t>(30) * dtypeSize(t));
    const HostTensor p = patterned(t, {2, 3, 5});
    std::memcpy(raw.data(), p.data, p.nbytes);
    std::ofstream(dir_ / (std::string(dtypeName(t)) + ".raw"), std::ios::binary)
        .write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  }
  const fs::path script = dir_ / "check.py";
  std::ofstream(script) << R"(import sys, numpy as np
d = sys.argv[1]
for dt in ['float32', 'float64', 'float16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool']:
    a = np.load(f'{d}/{dt}.npy')
    want = np.fromfile(f'{d}/{dt}.raw', dtype=dt).reshape(2, 3, 5)
    assert a.dtype == np.dtype(dt), (dt, a.dtype)
    assert a.shape == (2, 3, 5), (dt, a.shape)
    assert a.tobytes() == want.tobytes(), dt
print('numpy read all files')
)";
  EXPECT_EQ(runPython(script.string() + " " + dir_.string()), 0);
}

TEST_F(NpyTest, MissingFileNamesPathAndReason) {
  auto r = readNpy(dir_ / "nope.npy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), "npy.io");
  EXPECT_NE(r.error().first().message.find("nope.npy"), std::string::npos);
  EXPECT_NE(r.error().first().message.find("No such file"), std::string::npos);
  EXPECT_FALSE(r.error().first().hint.empty());
}

TEST_F(NpyTest, NotAnNpyFile) {
  writeBytes(dir_ / "text.npy", "hello, this is text\n");
  auto r = readNpy(dir_ / "text.npy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), "npy.bad-magic");
  EXPECT_NE(r.error().first().hint.find("numpy.save"), std::string::npos);

  writeBytes(dir_ / "arch.npz", std::string("PK\x03\x04rest of a zip", 18));
  auto z = readNpy(dir_ / "arch.npz");
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.error().first().message.find(".npz"), std::string::npos);
}

TEST_F(NpyTest, TruncatedDataSaysHowMuchIsMissing) {
  writeBytes(dir_ / "short.npy",
             npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") + std::string(8, '\0'));
  auto r = readNpy(dir_ / "short.npy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), "npy.truncated");
  EXPECT_NE(r.error().first().message.find("needs 24 bytes, the file has 8"), std::string::npos)
      << r.error().first().message;

  writeBytes(dir_ / "long.npy",
             npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") + std::string(12, '\0'));
  auto l = readNpy(dir_ / "long.npy");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().code(), "npy.trailing-data");

  writeBytes(dir_ / "cut.npy", npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }").substr(0, 30));
  auto c = readNpy(dir_ / "cut.npy");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), "npy.truncated");
}

TEST_F(NpyTest, UnsupportedAndMalformedHeaders) {
  struct Case {
    std::string header, code, needle;
  };
  const std::vector<Case> cases = {
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "npy.unsupported-dtype", "'<c8'"},
      {"{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", "npy.unsupported-dtype", "'<U3'"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", "npy.bad-header", "structured"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", "npy.bad-header", "non-negative"},
      {"{'descr': '<f4', 'fortran_order': False, }", "npy.bad-header", "'shape'"},
      {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }", "npy.bad-header", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "npy.bad-header", "malformed"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.header);
    writeBytes(dir_ / "h.npy", npyHeader(c.header) + std::string(64, '\0'));
    auto r = readNpy(dir_ / "h.npy");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), c.code);
    EXPECT_NE(r.error().first().message.find(c.needle), std::string::npos) << r.error().first().message;
    EXPECT_NE(r.error().first().message.find("h.npy"), std::string::npos);
  }

  std::string v9 = npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }") + "abcd";
  v9[6] = 9;
  writeBytes(dir_ / "v9.npy", v9);
  auto r = readNpy(dir_ / "v9.npy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), "npy.version");
  EXPECT_NE(r.error().first().message.find("9.0"), std::string::npos);
}

TEST_F(NpyTest, WriteRejectsInconsistentTensorAndBadPath) {
  HostTensor bad = HostTensor::fromVector<float>(DType::Float32, {2, 3}, {1, 2, 3});
  auto w = writeNpy(dir_ / "bad.npy", bad);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), "npy.bad-tensor");
  EXPECT_FALSE(fs::exists(dir_ / "bad.npy"));

  auto m = writeNpy(dir_ / "no" / "such" / "dir.npy", patterned(DType::Float32, {2}));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().first().message.find("dir.npy"), std::string::npos);
}

TEST_F(NpyTest, BoolIsNormalizedToZeroOne) {
  HostTensor t = HostTensor::fromVector<unsigned char>(DType::Bool, {3}, {0, 5, 255});
  ASSERT_TRUE(writeNpy(dir_ / "b.npy", t).ok());
  auto r = readNpy(dir_ / "b.npy");
  ASSERT_TRUE(r.ok());
  const auto* p = static_cast<const unsigned char*>(r->data);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 1);
  EXPECT_EQ(p[2], 1);
}
