// Cancelling the write: writeModel polls the CancelToken after each block of weights it writes
// (plain, transposed in tiles, to external data), so a cancel stops a large write at once; the
// temporary file is removed and an earlier file at the path is left byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/writer.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

constexpr int64_t kSide = 2048;  // a 2048 x 2048 float32 weight: 16 MiB, four blocks

fs::path scratchDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("oxport_writer_cancel_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> names(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

onnx_ir::ValueInfo square(const std::string& name) {
  onnx_ir::ValueInfo vi;
  vi.name = name;
  vi.dtype = DType::Float32;
  vi.has_shape = true;
  vi.shape = {onnx_ir::Dim::fixed(kSide), onnx_ir::Dim::fixed(kSide)};
  return vi;
}

// y = x + w, with w a big initializer (stored as is, or as the transpose of another tensor).
onnx_ir::Model bigModel(bool transposed) {
  std::vector<float> values(static_cast<size_t>(kSide * kSide));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000);
  HostTensor t = HostTensor::fromVector(DType::Float32, {kSide, kSide}, std::move(values));
  onnx_ir::Model m;
  m.opset_imports[""] = 13;
  m.ir_version = 7;
  m.graph.name = "big";
  onnx_ir::Initializer init;
  init.name = "w";
  init.tensor = t;
  if (transposed) init.transposed_of = std::make_shared<const HostTensor>(t);
  m.graph.initializers.push_back(init);
  onnx_ir::Node add;
  add.op_type = "Add";
  add.inputs = {"x", "w"};
  add.outputs = {"y"};
  m.graph.nodes.push_back(add);
  m.graph.inputs.push_back(square("x"));
  m.graph.outputs.push_back(square("y"));
  return m;
}

struct Recorder {
  std::vector<double> fractions;  // of the Serialize reports after a block
  CancelToken cancel;
  size_t cancel_after = 0;  // blocks; 0: never
  ProgressFn fn() {
    return [this](Phase phase, double fraction, const std::string&) {
      if (phase != Phase::Serialize || fraction <= 0.0) return;
      fractions.push_back(fraction);
      if (cancel_after && fractions.size() == cancel_after) cancel.cancel();
    };
  }
};

onnx_ir::WriteSettings settingsFor(Recorder& r) {
  onnx_ir::WriteSettings ws;
  ws.check = false;  // the check is not what is tested, and costs time on a big model
  ws.progress = r.fn();
  ws.cancel = r.cancel;
  return ws;
}

void expectCancelledAfterOneBlock(bool transposed, bool external) {
  const fs::path dir = scratchDir(std::string(transposed ? "t" : "p") + (external ? "x" : "i"));
  const fs::path out = dir / "m.onnx";
  { std::ofstream(out, std::ios::binary) << "EARLIER MODEL"; }
  if (external) std::ofstream(dir / "m.onnx.data", std::ios::binary) << "EARLIER DATA";
  Recorder r;
  r.cancel_after = 1;
  auto ws = settingsFor(r);
  if (external) ws.external_data_threshold = 1024;
  auto res = onnx_ir::writeModel(bigModel(transposed), OutputTarget::toFile(out), ws);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code(), "cancelled");
  // Stopped right after the block that cancelled: one report, a quarter of the weights.
  ASSERT_EQ(r.fractions.size(), 1u);
  EXPECT_DOUBLE_EQ(r.fractions[0], 0.25);
  EXPECT_EQ(slurp(out), "EARLIER MODEL");
  if (external) {
    EXPECT_EQ(slurp(dir / "m.onnx.data"), "EARLIER DATA");
  }
  const std::vector<std::string> expected =
      external ? std::vector<std::string>{"m.onnx", "m.onnx.data"} : std::vector<std::string>{"m.onnx"};
  EXPECT_EQ(names(dir), expected) << "a temporary file was left behind";
}

}  // namespace

TEST(WriterCancel, PlainWeights) { expectCancelledAfterOneBlock(false, false); }
TEST(WriterCancel, TransposedInTiles) { expectCancelledAfterOneBlock(true, false); }
TEST(WriterCancel, ExternalData) { expectCancelledAfterOneBlock(false, true); }

TEST(WriterCancel, CancelledBeforeWritingWritesNothing) {
  const fs::path dir = scratchDir("before");
  Recorder r;
  r.cancel.cancel();
  auto res = onnx_ir::writeModel(bigModel(false), OutputTarget::toFile(dir / "m.onnx"), settingsFor(r));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code(), "cancelled");
  EXPECT_TRUE(r.fractions.empty());
  EXPECT_TRUE(names(dir).empty());
}

TEST(WriterCancel, StreamStopsToo) {
  std::ostringstream os;
  Recorder r;
  r.cancel_after = 2;
  auto res = onnx_ir::writeModel(bigModel(false), OutputTarget::toStream(os), settingsFor(r));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code(), "cancelled");
  EXPECT_LT(os.str().size(), size_t(kSide * kSide * 4) * 3 / 4);
}

TEST(WriterCancel, UncancelledWriteReportsEveryBlock) {
  for (bool transposed : {false, true}) {
    const fs::path dir = scratchDir(transposed ? "full_t" : "full_p");
    Recorder r;
    auto res = onnx_ir::writeModel(bigModel(transposed), OutputTarget::toFile(dir / "m.onnx"), settingsFor(r));
    ASSERT_TRUE(res.ok()) << res.error().message();
    EXPECT_EQ(r.fractions, (std::vector<double>{0.25, 0.5, 0.75, 1.0}));
    EXPECT_GT(fs::file_size(dir / "m.onnx"), uint64_t(kSide * kSide * 4));
    EXPECT_EQ(names(dir), std::vector<std::string>{"m.onnx"});
  }
}
