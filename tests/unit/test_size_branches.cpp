// Reading a traced model's Python source for branches on tensor sizes: the recorded stacks, the
// function around a line, the branch forms and the names assigned from sizes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/diagnose.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<int> branchLines(const std::string& source, int line, const std::string& function) {
  std::vector<int> out;
  for (const auto& b : sizeBranchesInFunction(splitLines(source), line, function)) out.push_back(b.line);
  return out;
}

const char* kSource = R"(import torch


class Net(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 1:            # 6
            x = x * 2
        elif x.size(1) == 3:          # 8
            x = x + 1
        if x.dim() == 4:              # 10: rank, not a size
            x = x.flatten(1)
        if self.training:             # 12
            x = x - 1
        b, c = x.shape                # 14
        if b > c:                     # 15
            x = x.t()
        n = int(x.size(0))            # 17
        while n > 4:                  # 18
            n = n // 2
        for i in range(x.shape[1]):   # 20
            x = x + i
        y = x if x.numel() > 8 else -x  # 22
        feats = [x, y]
        if len(feats) > 1:            # 24: a list, not a tensor
            y = y + 1
        # if x.shape[0] > 1:          # 26: a comment
        return y

    def helper(self,
               x):
        h = x.shape[-1]               # 31
        if h % 2:                     # 32
            return x
        return x * 2


def unrelated(x):
    if x.shape[0] > 1:                # 38
        return x
    return x
)";

}  // namespace

TEST(SizeBranches, FindsEveryBranchFormInTheFunction) {
  EXPECT_EQ(branchLines(kSource, 7, "forward"), (std::vector<int>{6, 8, 15, 18, 20, 22}));
}

TEST(SizeBranches, AxisComesFromTheSourceWhenItSaysSo) {
  auto bs = sizeBranchesInFunction(splitLines(kSource), 7, "forward");
  ASSERT_EQ(bs.size(), 6u);
  EXPECT_EQ(bs[0].axis, std::optional<int64_t>(0));  // shape[0]
  EXPECT_EQ(bs[1].axis, std::optional<int64_t>(1));  // size(1)
  EXPECT_EQ(bs[2].axis, std::optional<int64_t>(0));  // b of `b, c = x.shape`
  EXPECT_EQ(bs[3].axis, std::optional<int64_t>(0));  // n = int(x.size(0))
  EXPECT_EQ(bs[4].axis, std::optional<int64_t>(1));  // range(x.shape[1])
  EXPECT_EQ(bs[5].axis, std::nullopt);               // numel()
  EXPECT_EQ(bs[0].code, "if x.shape[0] > 1:");
}

TEST(SizeBranches, MultiLineSignatureAndNegativeAxis) {
  auto bs = sizeBranchesInFunction(splitLines(kSource), 33, "helper");
  ASSERT_EQ(bs.size(), 1u);
  EXPECT_EQ(bs[0].line, 32);
  EXPECT_EQ(bs[0].axis, std::optional<int64_t>(-1));
}

TEST(SizeBranches, OnlyTheFunctionNamedAroundTheLine) {
  EXPECT_EQ(branchLines(kSource, 39, "unrelated"), (std::vector<int>{38}));
  EXPECT_TRUE(branchLines(kSource, 7, "helper").empty());   // line 7 is not in helper
  EXPECT_TRUE(branchLines(kSource, 200, "forward").empty());  // past the end
  EXPECT_TRUE(branchLines(kSource, 0, "forward").empty());
}

TEST(SizeBranches, StackFramesStopAtTheTraceCallAndSkipTorch) {
  const std::string stack =
      "/home/u/proj/model.py(12): helper\n"
      "/home/u/proj/model.py(9): forward\n"
      "/usr/lib/python3/dist-packages/torch/nn/modules/module.py(1182): _slow_forward\n"
      "/home/u/venv/lib/python3.11/site-packages/timm/layers/x.py(3): forward\n"
      "/usr/lib/python3/dist-packages/torch/jit/_trace.py(976): trace_module\n"
      "/home/u/proj/export.py(30): main\n"
      "/home/u/proj/export.py(40): <module>\n";
  auto frames = userFramesOfTraceStack(stack);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].file, "/home/u/proj/model.py");
  EXPECT_EQ(frames[0].line, 12);
  EXPECT_EQ(frames[0].function, "helper");
  EXPECT_EQ(frames[1].function, "forward");
  EXPECT_TRUE(userFramesOfTraceStack("<stdin>(5): forward\n").empty());
  EXPECT_TRUE(userFramesOfTraceStack("  File \"m.py\", line 4\n    def forward(self, x):\n").empty());
}

TEST(SizeBranches, WarnsOnlyForDynamicAxesAndFindsTheFileBesideTheModel) {
  const fs::path dir = fs::temp_directory_path() / ("oxport_size_branches_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "net.py") << kSource;
  // Recorded under a path that no longer exists: found by name next to the model.
  PythonFrame f{"/elsewhere/net.py", 7, "forward", "body"};
  std::vector<DynamicSize> batch{{"x", 0, 4, "batch"}};
  auto ds = findSizeBranches({f}, batch, dir);
  std::vector<int> lines;
  for (const auto& d : ds) {
    EXPECT_EQ(d.code, "python-size-branch");
    EXPECT_EQ(d.severity, Severity::Warning);
    EXPECT_EQ(d.location.file, "/elsewhere/net.py");
    EXPECT_EQ(d.module_path, "body");
    lines.push_back(d.location.line);
  }
  // Axis 1 branches (8, 20) are left out: axis 1 is not dynamic. numel() (22) may be any axis.
  EXPECT_EQ(lines, (std::vector<int>{6, 15, 18, 22}));
  EXPECT_NE(ds.front().message.find("'batch'"), std::string::npos) << ds.front().message;
  EXPECT_TRUE(findSizeBranches({f}, {}, dir).empty());                       // no dynamic axis
  EXPECT_TRUE(findSizeBranches({{"/nowhere/gone.py", 7, "forward", ""}}, batch, dir).empty());
  fs::remove_all(dir);
}

// len(x.shape) is the rank (Stable Diffusion's `while len(emb_out.shape) < len(h.shape)`): no size read.
TEST(SizeBranches, LenOfShapeIsARankNotASize) {
  const char* src = R"(class ResBlock:
    def forward(self, h, emb_out):
        while len(emb_out.shape) < len(h.shape):   # 3
            emb_out = emb_out[..., None]
        if len(h.size()) == 4 and h.shape[1] > 2:  # 5: also reads a size
            h = h * 2
        return h + emb_out
)";
  EXPECT_EQ(branchLines(src, 4, "forward"), (std::vector<int>{5}));
}
