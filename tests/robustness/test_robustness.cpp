// Bad input never crashes and never loses data. Each case runs what a user runs (the `oxport`
// command, in-process through runCli, or the core API the studio uses), checks the message the
// user sees, and checks that an earlier output file of the same name is untouched and that no
// temporary file is left beside it.
//
// Fixtures (made at build time by gen_fixtures.py): OXPORT_ROBUSTNESS_DIR/*.pt, see its header.
// The mutation run (Mutation.*) is bounded by OXPORT_MUTATION_RUNS (default 300) and
// OXPORT_MUTATION_SECONDS (default 12); OXPORT_MUTATION_SEED changes the seed (default 1);
// OXPORT_MUTATION_VERBOSE=1 names each mutant before it is loaded (to find a crashing one).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "oxport/cli.h"
#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"
#include "load/torch_archive.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

const fs::path kData = OXPORT_ROBUSTNESS_DIR;
const fs::path kSamples = fs::path(OXPORT_SOURCE_DIR) / "resources" / "samples";
const std::string kEarlier = "EARLIER OUTPUT - must survive every failure\n";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun cli(const std::vector<std::string>& args) {
  CliRun r;
  std::ostringstream out, err;
  r.code = runCli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A fresh folder per test, removed afterwards (unmounting anything a test mounted there).
class Robustness : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "oxport-robust-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const auto& m : mounts_) ::umount2(m.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Mounts a small tmpfs at dir_/name; false (and the test should skip) where mounting is not
  // permitted (not root, or a container without CAP_SYS_ADMIN).
  bool mountTmpfs(const std::string& name, const std::string& opts, fs::path* where) {
    *where = dir_ / name;
    fs::create_directories(*where);
    if (::mount("tmpfs", where->c_str(), "tmpfs", 0, opts.c_str()) != 0) return false;
    mounts_.push_back(*where);
    return true;
  }
  // The earlier output: written before a failing run, compared after it.
  fs::path earlier(const fs::path& p) {
    spit(p, kEarlier);
    return p;
  }
  void expectUntouched(const fs::path& p) {
    EXPECT_EQ(slurp(p), kEarlier) << p << " was changed by a failed run";
    for (const auto& e : fs::directory_iterator(p.parent_path()))
      EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos)
          << "temporary file left behind: " << e.path();
  }
  fs::path dir_;
  std::vector<fs::path> mounts_;
};

// ---------------------------------------------------------------- bad model files

struct BadModel {
  const char* name;     // test name
  const char* file;     // fixture file, or "" for cases made in the test
  const char* code;     // diagnostic code
  const char* message;  // text the user must see
};

class BadModelFile : public Robustness, public ::testing::WithParamInterface<BadModel> {};

TEST_P(BadModelFile, ClearErrorAndEarlierOutputKept) {
  const BadModel& c = GetParam();
  fs::path model;
  if (std::string(c.name) == "empty") {
    model = dir_ / "empty.pt";
    spit(model, "");
  } else if (std::string(c.name) == "directory") {
    model = dir_ / "folder.pt";
    fs::create_directories(model);
  } else if (std::string(c.name) == "missing") {
    model = dir_ / "missing.pt";
  } else {
    model = kData / c.file;
  }
  const fs::path out = earlier(dir_ / "out.onnx");
  CliRun r = cli({"export", model.string(), "-o", out.string(), "--arg", "2x4"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(std::string("error[") + c.code + "]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: "), std::string::npos) << "no hint for the user: " << r.err;
  EXPECT_EQ(r.err.find("inline_container"), std::string::npos) << "libtorch internals leak: " << r.err;
  expectUntouched(out);

  // The same through the API the studio uses.
  auto m = Model::load(model);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code(), c.code);

  // `oxport info` says the same.
  CliRun i = cli({"info", model.string()});
  EXPECT_EQ(i.code, 1);
  EXPECT_NE(i.err.find(c.message), std::string::npos) << i.err;
}

INSTANTIATE_TEST_SUITE_P(
    Files, BadModelFile,
    ::testing::Values(
        BadModel{"empty", "", "empty-file", "is empty"},
        BadModel{"directory", "", "not-a-file", "is a directory, not a model file"},
        BadModel{"missing", "", "file-not-found", "does not exist"},
        BadModel{"text", "text.pt", "not-torchscript", "is not a TorchScript archive (it is not a zip file)"},
        BadModel{"legacy_pickle", "pickle.pt", "not-torchscript", "it is not a zip file"},
        BadModel{"plain_zip", "plain.zip", "not-torchscript", "is a zip archive but not a TorchScript archive"},
        BadModel{"state_dict", "state_dict.pt", "saved-with-torch-save", "was saved with torch.save, not torch.jit.save"},
        BadModel{"truncated", "truncated.pt", "corrupt-model", "is damaged or truncated: the zip directory at its end is missing"},
        BadModel{"no_central_dir", "no_central_dir.pt", "corrupt-model", "is damaged or truncated"},
        BadModel{"garbage", "garbage.pt", "corrupt-model", "is damaged or truncated"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(Robustness, FlippedWeightByteFailsItsCrc) {
  // libtorch itself does not check the CRC-32 of stored entries: without oxport's own check a
  // damaged weight would export silently with a wrong value.
  std::string bytes = slurp(kData / "linear.pt");
  auto entries = readZipDirectory(kData / "linear.pt");
  ASSERT_TRUE(entries.ok()) << entries.error().message();
  const ArchiveEntry* weights = nullptr;
  for (const auto& e : *entries)
    if (e.name.size() > 7 && e.name.compare(e.name.size() - 7, 7, "/data/0") == 0) weights = &e;
  ASSERT_NE(weights, nullptr);
  bytes[weights->data_offset + 5] ^= 0x40;
  const fs::path model = dir_ / "damaged.pt";
  spit(model, bytes);
  const fs::path out = earlier(dir_ / "out.onnx");
  CliRun r = cli({"export", model.string(), "-o", out.string(), "--arg", "2x4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error[corrupt-model]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fails its CRC-32 check"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(weights->name), std::string::npos) << "the damaged entry is not named: " << r.err;
  expectUntouched(out);
}

TEST_F(Robustness, GoodArchivesPassTheCheck) {
  for (const fs::path p : {kData / "linear.pt", kData / "view.pt", kData / "sample_stored.pt", kSamples / "sample_cnn.pt"}) {
    Status s = checkTorchScriptArchive(p);
    EXPECT_TRUE(s.ok()) << p << ": " << s.error().message();
  }
}

// ---------------------------------------------------------------- the model fails on its inputs

TEST_F(Robustness, ForwardFailsOnTheGivenShape) {
  const fs::path out = earlier(dir_ / "out.onnx");
  CliRun r = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--arg", "2x5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error[forward-failed]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was not written"), std::string::npos) << r.err;
  expectUntouched(out);

  CliRun v = cli({"export", (kData / "view.pt").string(), "-o", out.string(), "--arg", "2x5"});
  EXPECT_EQ(v.code, 1);
  EXPECT_NE(v.err.find("shape '[3, 4]' is invalid for input of size 10"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("at aten::view"), std::string::npos) << v.err;
  expectUntouched(out);
}

TEST_F(Robustness, WrongDtypeAndWrongArgumentCount) {
  const fs::path out = earlier(dir_ / "out.onnx");
  CliRun r = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--arg", "2x4:int64"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error[forward-failed]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dtype"), std::string::npos) << r.err;
  expectUntouched(out);

  CliRun two = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--arg", "2x4", "--arg", "2x4"});
  EXPECT_EQ(two.code, 1) << two.err;
  EXPECT_NE(two.err.find("error["), std::string::npos) << two.err;
  expectUntouched(out);

  CliRun bad = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--arg", "2x4:float33"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("did you mean \"float32\"?"), std::string::npos) << bad.err;
  expectUntouched(out);
}

// ---------------------------------------------------------------- bad presets

TEST_F(Robustness, PresetWithWrongTypesAndUnknownKeys) {
  const fs::path out = earlier(dir_ / "out.onnx");
  const fs::path preset = dir_ / "bad.oxport.json";
  spit(preset, R"({"opset_version": "eleven", "verbos": true, "args": [{"tensor": {"shape": [2, "x"]}}]})");
  CliRun r = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--preset", preset.string()});
  EXPECT_EQ(r.code, 2);
  // Every problem at once, each naming its key.
  EXPECT_NE(r.err.find("opset_version must be an integer, not a string (\"eleven\")"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown key \"verbos\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean \"verbose\"?"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("args[0].tensor.shape[1] must be an integer"), std::string::npos) << r.err;
  expectUntouched(out);

  const std::map<std::string, std::string> cases = {
      {"", "the preset is not valid JSON: line 1, column 1"},
      {"{\"opset_version\": 11", "the preset is not valid JSON: line 1"},
      {"[1, 2]", "the preset must be a JSON object"},
      {"\xff\xfe{}", "the preset is not valid JSON"},
      {"{\"opset_version\": 99}", "opset_version"},
      {"{\"dynamic_axes\": {\"x\": {\"zero\": \"batch\"}}}", "dynamic_axes"},
  };
  for (const auto& [text, message] : cases) {
    spit(preset, text);
    CliRun c = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--preset", preset.string()});
    EXPECT_EQ(c.code, 2) << text;
    EXPECT_NE(c.err.find(message), std::string::npos) << "preset " << text << "\n" << c.err;
    expectUntouched(out);
  }

  CliRun folder = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--preset", dir_.string()});
  EXPECT_EQ(folder.code, 2);
  EXPECT_NE(folder.err.find("it is a folder"), std::string::npos) << folder.err;
  expectUntouched(out);
}

// ---------------------------------------------------------------- unwritable outputs

TEST_F(Robustness, OutputPathNotWritable) {
  const std::string model = (kData / "linear.pt").string();
  CliRun missing = cli({"export", model, "-o", (dir_ / "no" / "such" / "folder" / "m.onnx").string(), "--arg", "2x4"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("error[io.write-failed]"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("the folder does not exist"), std::string::npos) << missing.err;

  spit(dir_ / "afile", "x");
  CliRun under_file = cli({"export", model, "-o", (dir_ / "afile" / "m.onnx").string(), "--arg", "2x4"});
  EXPECT_EQ(under_file.code, 1);
  EXPECT_NE(under_file.err.find("Not a directory"), std::string::npos) << under_file.err;
  EXPECT_EQ(slurp(dir_ / "afile"), "x");

  fs::create_directories(dir_ / "out_is_a_folder.onnx");
  CliRun is_dir = cli({"export", model, "-o", (dir_ / "out_is_a_folder.onnx").string(), "--arg", "2x4"});
  EXPECT_EQ(is_dir.code, 1);
  EXPECT_NE(is_dir.err.find("it is a folder"), std::string::npos) << is_dir.err;
  EXPECT_TRUE(fs::is_directory(dir_ / "out_is_a_folder.onnx"));
}

TEST_F(Robustness, OutputOnReadOnlyFileSystem) {
  fs::path ro;
  if (!mountTmpfs("ro", "size=64k", &ro)) GTEST_SKIP() << "mounting a tmpfs is not permitted here";
  const fs::path out = earlier(ro / "out.onnx");
  ASSERT_EQ(::mount("tmpfs", ro.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=64k"), 0) << std::strerror(errno);
  CliRun r = cli({"export", (kData / "linear.pt").string(), "-o", out.string(), "--arg", "2x4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the file system is read-only; choose another output path"), std::string::npos) << r.err;
  expectUntouched(out);
}

TEST_F(Robustness, OutputOnAFullDisk) {
  fs::path small;
  if (!mountTmpfs("full", "size=64k", &small)) GTEST_SKIP() << "mounting a tmpfs is not permitted here";
  const fs::path out = earlier(small / "sample.onnx");
  // Leave about 8 KiB free: less than the sample's ~23 KiB model.
  spit(small / "filler", std::string(48 * 1024, 'f'));
  const fs::path report = small / "report.json";
  CliRun r = cli({"export", (kSamples / "sample_cnn.pt").string(), "--preset",
                  (kSamples / "sample_cnn.preset.json").string(), "-o", out.string()});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("free some disk space, or choose another output path"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was not written"), std::string::npos) << r.err;
  expectUntouched(out);

  // The same disk can still take a small model: nothing was leaked by the failed write.
  fs::remove(small / "filler");
  CliRun ok = cli({"export", (kData / "linear.pt").string(), "-o", (small / "linear.onnx").string(), "--arg", "2x4"});
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// ---------------------------------------------------------------- cancel at every phase

const char* phaseText(Phase p) {
  static const char* const names[] = {"load", "passes", "trace", "convert", "fold", "optimize", "serialize", "check", "verify"};
  const int i = static_cast<int>(p);
  return i >= 0 && i < kPhaseCount ? names[i] : "?";
}

TEST_F(Robustness, CancelAtEveryProgressCall) {
  auto preset = loadPreset(kSamples / "sample_cnn.preset.json");
  ASSERT_TRUE(preset.ok());
  const ExportOptions& options = preset->options;

  // Loading: cancel at the first progress call.
  {
    CancelToken cancel;
    auto m = Model::load(kSamples / "sample_cnn.pt", [&](Phase, double, const std::string&) { cancel.cancel(); }, cancel);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code(), "cancelled");
    EXPECT_EQ(m.error().first().message, "loading was cancelled");
  }
  auto model = Model::load(kSamples / "sample_cnn.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();

  // A reference run: how many progress calls, in which phases.
  std::vector<Phase> calls;
  {
    auto r = model->exportOnnx(options, OutputTarget::toFile(dir_ / "reference.onnx"),
                               [&](Phase p, double, const std::string&) { calls.push_back(p); });
    ASSERT_TRUE(r.ok()) << r.error().message();
  }
  ASSERT_GE(calls.size(), 4u);
  const std::string reference = slurp(dir_ / "reference.onnx");

  // Already cancelled before the start.
  {
    CancelToken cancel;
    cancel.cancel();
    const fs::path out = earlier(dir_ / "out.onnx");
    auto r = model->exportOnnx(options, OutputTarget::toFile(out), {}, cancel);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), "cancelled");
    expectUntouched(out);
  }

  std::map<Phase, int> cancelled_in, completed_in;
  for (size_t k = 0; k < calls.size(); ++k) {
    CancelToken cancel;
    size_t n = 0;
    const fs::path out = earlier(dir_ / "out.onnx");
    auto r = model->exportOnnx(options, OutputTarget::toFile(out),
                               [&](Phase, double, const std::string&) {
                                 if (n++ == k) cancel.cancel();
                               },
                               cancel);
    SCOPED_TRACE("cancelled at progress call " + std::to_string(k) + " (" + phaseText(calls[k]) + ")");
    if (!r.ok()) {
      EXPECT_EQ(r.error().code(), "cancelled") << r.error().message();
      EXPECT_EQ(r.error().first().message, "the export was cancelled");
      expectUntouched(out);
      ++cancelled_in[calls[k]];
    } else {
      // Too late to stop: then the whole model was written, never a part of it.
      EXPECT_EQ(slurp(out), reference);
      ++completed_in[calls[k]];
    }
  }
  // Up to the writing of the file, a cancel always stops the export.
  for (const auto& [phase, count] : completed_in)
    EXPECT_GE(static_cast<int>(phase), static_cast<int>(Phase::Serialize))
        << count << " cancel(s) in phase " << phaseText(phase) << " were ignored";
  std::string summary;
  for (const auto& [phase, count] : cancelled_in) summary += std::string(phaseText(phase)) + ":" + std::to_string(count) + " ";
  std::cout << "[ cancel   ] " << calls.size() << " progress calls; cancelled in " << summary << "\n";
  EXPECT_GE(cancelled_in.size(), 3u);

  // The model is still usable after all those cancels.
  auto again = model->exportOnnx(options, OutputTarget::toFile(dir_ / "again.onnx"));
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(slurp(dir_ / "again.onnx"), reference);
}

// Stands in for ONNX Runtime in the verify phase: answers with libtorch's own outputs for the
// inputs it gets (what a correct export gives), so a sweep over every progress call does not
// start node dozens of times. It reads the ONNX file as the real runner would.
class ReferenceRuntime : public OnnxRuntime {
 public:
  ReferenceRuntime(const Model& model, ExportOptions options) : model_(model), options_(std::move(options)) {}
  Result<std::vector<NamedTensor>> run(const fs::path& onnx, const std::vector<NamedTensor>& inputs) override {
    ++runs;
    if (slurp(onnx).empty()) return Error("runtime-failed", "cannot read " + onnx.string());
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& in : inputs) shapes.push_back(in.tensor.shape);
    return model_.runReference(options_, shapes);
  }
  std::string describe() const override { return "libtorch standing in for ONNX Runtime"; }
  int runs = 0;

 private:
  const Model& model_;
  ExportOptions options_;
};

// What the studio and the CLI do with one model: load, export, verify; one progress callback and
// one cancel token for the whole job. Returns "ok" or the error code of the step that stopped.
struct JobOutcome {
  std::string code = "ok";
  std::string message;
  std::string step;  // load, export, verify
};

JobOutcome runJob(const fs::path& model_file, const ExportOptions& options, const fs::path& out,
                  const ProgressFn& progress, const CancelToken& cancel) {
  JobOutcome o;
  auto fail = [&](const std::string& step, const Error& e) {
    o.code = e.code();
    o.message = e.first().message;
    o.step = step;
    return o;
  };
  auto model = Model::load(model_file, progress, cancel);
  if (!model.ok()) return fail("load", model.error());
  auto exported = model->exportOnnx(options, OutputTarget::toFile(out), progress, cancel);
  if (!exported.ok()) return fail("export", exported.error());
  ReferenceRuntime runtime(*model, options);
  auto verified = verifyExport(*model, options, out, runtime, VerifyOptions{}, cancel, progress);
  if (!verified.ok()) return fail("verify", verified.error());
  if (!verified->passed) o.code = "verify-failed";
  return o;
}

// Cancel at every progress call of a whole job, in every phase (load, the export's phases,
// verify): the job ends `cancelled` with that step's message; the output is the earlier file
// byte for byte (cancelled before the rename) or the complete new model (cancelled after it,
// while verifying), never a part of one; no temporary file is left.
TEST_F(Robustness, CancelAtEveryPhaseOfLoadExportAndVerify) {
  auto preset = loadPreset(kSamples / "sample_cnn.preset.json");
  ASSERT_TRUE(preset.ok());
  const ExportOptions& options = preset->options;
  ASSERT_FALSE(options.dynamic_axes.empty()) << "the sample should verify at several sizes";
  const fs::path model = kSamples / "sample_cnn.pt";

  // The reference job: every progress call, in order.
  std::vector<Phase> calls;
  const JobOutcome full = runJob(model, options, dir_ / "reference.onnx",
                                 [&](Phase p, double, const std::string&) { calls.push_back(p); }, {});
  ASSERT_EQ(full.code, "ok") << full.step << ": " << full.message;
  const std::string reference = slurp(dir_ / "reference.onnx");
  std::map<Phase, int> per_phase;
  for (Phase p : calls) ++per_phase[p];
  EXPECT_GE(per_phase[Phase::Load], 4) << "load reports each of its steps";
  // Batch 1, then 2 (traced size + 1 and 2x coincide): two shape sets and the end.
  EXPECT_EQ(per_phase[Phase::Verify], 3) << "verify reports each distinct shape set and the end";
  EXPECT_GE(per_phase.size(), 6u);

  const std::map<std::string, std::string> messages = {{"load", "loading was cancelled"},
                                                       {"export", "the export was cancelled"},
                                                       {"verify", "verification was cancelled"}};
  std::map<std::string, int> stopped_in;
  for (size_t k = 0; k < calls.size(); ++k) {
    SCOPED_TRACE("cancelled at progress call " + std::to_string(k) + " of " + std::to_string(calls.size()) +
                 " (" + phaseText(calls[k]) + ")");
    const fs::path out = earlier(dir_ / "out.onnx");
    CancelToken cancel;
    size_t n = 0;
    const JobOutcome o = runJob(model, options, out,
                                [&](Phase, double, const std::string&) {
                                  if (n++ == k) cancel.cancel();
                                },
                                cancel);
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << "temporary file left: " << e.path();
    const std::string now = slurp(out);
    if (k + 1 == calls.size()) {
      // The last call reports the finished verification: nothing is left to stop.
      EXPECT_EQ(o.code, "ok") << o.message;
      EXPECT_EQ(now, reference);
      continue;
    }
    ASSERT_EQ(o.code, "cancelled") << o.step << ": " << o.message;
    EXPECT_EQ(o.message, messages.at(o.step));
    ++stopped_in[o.step];
    if (calls[k] == Phase::Load) {
      // Cancelled while loading (or at "loaded", then the export stops at once): nothing written.
      EXPECT_NE(o.step, "verify");
      EXPECT_EQ(now, kEarlier);
    } else if (calls[k] == Phase::Verify) {
      EXPECT_EQ(o.step, "verify");
      EXPECT_EQ(now, reference) << "verification changed the file it checks";
    } else if (static_cast<int>(calls[k]) < static_cast<int>(Phase::Serialize)) {
      EXPECT_EQ(o.step, "export");
      EXPECT_EQ(now, kEarlier) << "an export cancelled before writing changed the earlier file";
    } else {
      EXPECT_TRUE(now == kEarlier || now == reference) << "a partial model was left: " << now.size() << " bytes";
    }
  }
  EXPECT_GT(stopped_in["load"], 0);
  EXPECT_GT(stopped_in["export"], 0);
  EXPECT_GT(stopped_in["verify"], 0);
  std::string summary;
  for (const auto& [step, count] : stopped_in) summary += step + ":" + std::to_string(count) + " ";
  std::cout << "[ cancel   ] " << calls.size() << " progress calls in a job; stopped in " << summary << "\n";
}

// A cancel while ONNX Runtime itself runs (the real runner: node, a temporary run folder) stops
// the verification after that run; the run folder is removed and the verified file untouched.
TEST_F(Robustness, CancelDuringAnOnnxRuntimeRun) {
  auto real = makeDefaultRuntime();
  if (!real.ok()) GTEST_SKIP() << "ONNX Runtime is not installed here: " << real.error().message();
  auto preset = loadPreset(kSamples / "sample_cnn.preset.json");
  ASSERT_TRUE(preset.ok());
  auto model = Model::load(kSamples / "sample_cnn.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const fs::path out = dir_ / "verified.onnx";
  ASSERT_TRUE(model->exportOnnx(preset->options, OutputTarget::toFile(out)).ok());
  const std::string written = slurp(out);

  // The runner's folders go to TMPDIR: give it one of the test's own to look into.
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string saved = old_tmp ? old_tmp : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);

  struct CancellingRuntime : OnnxRuntime {
    OnnxRuntime& inner;
    CancelToken cancel;
    int runs = 0;
    explicit CancellingRuntime(OnnxRuntime& r) : inner(r) {}
    Result<std::vector<NamedTensor>> run(const fs::path& m, const std::vector<NamedTensor>& in) override {
      if (++runs == 2) cancel.cancel();  // during the second run (traced size + 1)
      return inner.run(m, in);
    }
    std::string describe() const override { return inner.describe(); }
  } runtime(**real);
  const auto tmp_before = fs::last_write_time(tmp);
  auto report = verifyExport(*model, preset->options, out, runtime, VerifyOptions{}, runtime.cancel);
  if (old_tmp) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");

  ASSERT_FALSE(report.ok()) << "the verification ran to the end despite the cancel";
  EXPECT_EQ(report.error().code(), "cancelled");
  EXPECT_EQ(report.error().first().message, "verification was cancelled");
  EXPECT_EQ(runtime.runs, 2) << "a run started after the cancel";
  EXPECT_EQ(slurp(out), written);
  EXPECT_NE(fs::last_write_time(tmp), tmp_before) << "the runner made no run folder in TMPDIR";
  EXPECT_TRUE(fs::is_empty(tmp)) << "the ONNX Runtime run folder was left in " << tmp;
}

// ---------------------------------------------------------------- mutated .pt files

long envOr(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

void putU32(std::string& b, uint64_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Rewrites the CRC-32 of `e` in its local header and in the central directory, so that a
// mutation of the entry's bytes gets past the CRC check and reaches libtorch's readers.
void fixCrc(std::string& b, const ArchiveEntry& e, size_t cd_offset) {
  const uint32_t crc = crc32Update(0, b.data() + e.data_offset, e.compressed_size);
  putU32(b, e.local_header_offset + 14, crc);
  for (size_t p = cd_offset; p + 46 <= b.size();) {
    if (std::memcmp(b.data() + p, "PK\x01\x02", 4) != 0) break;
    auto u16 = [&](size_t at) { return static_cast<size_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8); };
    const size_t n = u16(p + 28), x = u16(p + 30), c = u16(p + 32);
    if (b.compare(p + 46, n, e.name) == 0) putU32(b, p + 16, crc);
    p += 46 + n + x + c;
  }
}

TEST_F(Robustness, MutatedModelsNeverCrash) {
  const long runs = envOr("OXPORT_MUTATION_RUNS", 300);
  const double seconds = static_cast<double>(envOr("OXPORT_MUTATION_SECONDS", 12));
  const unsigned seed = static_cast<unsigned>(envOr("OXPORT_MUTATION_SEED", 1));
  const bool verbose = envOr("OXPORT_MUTATION_VERBOSE", 0) != 0;  // name each mutant before loading it
  auto preset = loadPreset(kSamples / "sample_cnn.preset.json");
  ASSERT_TRUE(preset.ok());
  const fs::path source = kData / "sample_stored.pt";
  const std::string original = slurp(source);
  auto entries = readZipDirectory(source);
  ASSERT_TRUE(entries.ok()) << entries.error().message();
  // The central directory follows the last entry's data in the files zipfile writes.
  size_t cd_offset = 0;
  for (const auto& e : *entries) cd_offset = std::max(cd_offset, static_cast<size_t>(e.data_offset + e.compressed_size));
  ASSERT_EQ(original.compare(cd_offset, 4, "PK\x01\x02"), 0);

  // Where a crash leaves its reproducer: the file being loaded when the test process died.
  const fs::path mutant = fs::path(OXPORT_ROBUSTNESS_DIR) / ".." / "mutant-last.pt";
  std::mt19937 rng(seed);
  std::map<std::string, int> outcomes;
  const auto t0 = std::chrono::steady_clock::now();
  long done = 0;
  for (; done < runs; ++done) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) break;
    std::string b = original;
    const int kind = static_cast<int>(rng() % 5);
    auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
    const ArchiveEntry& e = (*entries)[pick(entries->size())];
    switch (kind) {
      case 0:  // flip bits anywhere (the CRC or directory check must catch it)
        for (int i = 0, n = 1 + pick(4); i < n; ++i) b[pick(b.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1:  // truncate
        b.resize(pick(b.size()));
        break;
      case 2:  // damage the zip directory or a local header
        for (int i = 0, n = 1 + pick(3); i < n; ++i) {
          const size_t at = rng() % 2 ? cd_offset + pick(b.size() - cd_offset) : e.local_header_offset + pick(30);
          b[at] = static_cast<char>(rng());
        }
        break;
      default:  // change an entry's content (pickles, code text, tensors) and fix its CRC-32
        if (e.compressed_size == 0) break;
        for (int i = 0, n = 1 + pick(kind == 3 ? 2 : 8); i < n; ++i) {
          const size_t at = e.data_offset + pick(e.compressed_size);
          b[at] = kind == 3 ? static_cast<char>(b[at] ^ (1 << pick(8))) : static_cast<char>(rng());
        }
        fixCrc(b, e, cd_offset);
        break;
    }
    spit(mutant, b);
    if (verbose) std::cerr << "mutant " << done << ": kind " << kind << ", entry " << e.name << std::endl;
    auto m = Model::load(mutant);
    std::string outcome;
    if (!m.ok()) {
      EXPECT_FALSE(m.error().first().message.empty());
      outcome = "load:" + m.error().code();
    } else {
      std::ostringstream os;
      auto r = m->exportOnnx(preset->options, OutputTarget::toStream(os));
      if (r.ok()) outcome = "exported";
      else {
        EXPECT_FALSE(r.error().first().message.empty());
        outcome = "export:" + r.error().code();
      }
    }
    ++outcomes[outcome];
  }
  std::error_code ec;
  fs::remove(mutant, ec);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ mutation ] " << done << " mutants of " << source.filename() << " in " << secs << " s (seed " << seed
            << "):";
  for (const auto& [k, v] : outcomes) std::cout << " " << k << "=" << v;
  std::cout << "\n";
  EXPECT_GE(done, 20) << "too few mutants ran in the time allowed";
}

}  // namespace
