// Which module tensors forward may write in place (found from each module type's TorchScript),
// and the snapshot that runs forward on copies of exactly those and restores every slot after.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <torch/script.h>

#include "pipeline/module_snapshot.h"

using namespace oxport;

namespace {

// "name" for each written slot of `m` itself, "sub.name" for a slot of its submodule `sub`.
std::set<std::string> written(const torch::jit::Module& m) {
  WrittenSlots w = writtenTensorSlots(m);
  EXPECT_TRUE(w.known);
  std::set<std::string> out;
  for (const auto& s : w.slots) {
    std::string prefix;
    for (const auto& child : m.named_children())
      if (child.value._ivalue() == s.object) prefix = child.name + ".";
    out.insert(prefix + s.object->type()->getAttributeName(s.index));
  }
  return out;
}

torch::jit::Module withBuffers(const std::string& name) {
  torch::jit::Module m(name);
  m.register_buffer("cache", torch::zeros({4, 3}));
  m.register_buffer("count", torch::zeros({}));
  m.register_buffer("table", torch::arange(12.0).view({4, 3}));
  return m;
}

}  // namespace

TEST(ModuleSnapshot, ReadOnlyBuffersAreNotWritten) {
  auto m = withBuffers("ReadOnly");
  m.define(R"(
def forward(self, x):
    return x + self.table[:2] * self.count
)");
  EXPECT_TRUE(written(m).empty());
}

TEST(ModuleSnapshot, WritesIntoTheTensorAndThroughViews) {
  auto m = withBuffers("Views");
  m.define(R"(
def forward(self, x):
    self.count.add_(1.0)
    self.cache[:2] += x
    return self.table.sum() + self.cache.sum()
)");
  EXPECT_EQ(written(m), (std::set<std::string>{"cache", "count"}));
  auto n = withBuffers("Narrow");
  n.define(R"(
def forward(self, x):
    c = self.cache.narrow(0, 1, 2).view(-1)
    c.copy_(x.view(-1))
    return self.table
)");
  EXPECT_EQ(written(n), (std::set<std::string>{"cache"}));
}

TEST(ModuleSnapshot, AliasesThroughBranchesLoopsAndLists) {
  auto m = withBuffers("Flow");
  m.define(R"(
def forward(self, x, flag: bool):
    y = self.table
    if flag:
        y = self.cache
    y.mul_(2.0)
    z = self.count
    for i in range(3):
        z = z.view(-1)
    z.add_(1.0)
    return x + z
)");
  EXPECT_EQ(written(m), (std::set<std::string>{"cache", "count", "table"}));
  auto l = withBuffers("List");
  l.define(R"(
def forward(self, x):
    ts = [self.table, x]
    ts[0].zero_()
    return x
)");
  EXPECT_EQ(written(l), (std::set<std::string>{"table"}));
}

TEST(ModuleSnapshot, BatchNormRunningStatsCountAsWritten) {
  // aten::batch_norm's schema marks nothing written, yet in training it updates the running stats.
  auto m = withBuffers("Norm");
  m.define(R"(
def forward(self, x, training: bool):
    return torch.batch_norm(x, None, None, self.cache[0], self.count.expand(3), training, 0.1, 1e-5, False)
)");
  EXPECT_EQ(written(m), (std::set<std::string>{"cache", "count"}));
}

TEST(ModuleSnapshot, SubmodulesAndCalls) {
  torch::jit::Module child("Child");
  child.register_buffer("state", torch::zeros({3}));
  child.register_buffer("fixed", torch::ones({3}));
  child.define(R"(
def forward(self, x, other):
    self.state.add_(x.sum(0))
    return x * self.fixed + other
)");
  auto m = withBuffers("Parent");
  m.register_module("sub", child);
  m.define(R"(
def forward(self, x):
    return self.sub.forward(x, self.table)
)");
  // The child's own write; the table passed to a call counts as written (not followed).
  EXPECT_EQ(written(m), (std::set<std::string>{"sub.state", "table"}));
}

TEST(ModuleSnapshot, RunsOnCopiesOfWrittenTensorsOnlyAndRestores) {
  auto m = withBuffers("Run");
  m.define(R"(
def forward(self, x):
    self.cache[:2] += x
    return self.cache + self.table
)");
  const at::Tensor cache = m.attr("cache").toTensor();
  const at::Tensor table = m.attr("table").toTensor();
  at::Tensor first;
  {
    ModuleSnapshot snapshot(m);
    EXPECT_FALSE(m.attr("cache").toTensor().is_same(cache));  // a copy for the run
    EXPECT_TRUE(m.attr("table").toTensor().is_same(table));   // read only: not copied
    EXPECT_EQ(snapshot.copiedBytes(), cache.nbytes());
    first = m.forward({torch::ones({2, 3})}).toTensor();
  }
  EXPECT_TRUE(m.attr("cache").toTensor().is_same(cache));
  EXPECT_EQ(cache.abs().sum().item<float>(), 0.0f);  // the saved state is untouched
  ModuleSnapshot again(m);
  EXPECT_TRUE(m.forward({torch::ones({2, 3})}).toTensor().equal(first));  // each run is a first call
}
