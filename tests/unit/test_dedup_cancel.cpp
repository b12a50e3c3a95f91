// deduplicateInitializers hashes every initializer's bytes (seconds for a large model): a cancel
// before it is done returns -1 and leaves the graph as it was; without one, duplicates go.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx/passes.h"

using namespace oxport;

namespace {

onnx_ir::Graph twoSameWeights() {
  onnx_ir::Graph g;
  for (const char* name : {"a", "b"}) {
    onnx_ir::Initializer init;
    init.name = name;
    init.weight = true;
    init.tensor = HostTensor::fromVector(DType::Float32, {4}, std::vector<float>{1, 2, 3, 4});
    g.initializers.push_back(init);
  }
  onnx_ir::Node add;
  add.op_type = "Add";
  add.inputs = {"a", "b"};
  add.outputs = {"y"};
  g.nodes.push_back(add);
  return g;
}

}  // namespace

TEST(DedupCancel, CancelledLeavesTheGraph) {
  onnx_ir::Graph g = twoSameWeights();
  CancelToken cancel;
  cancel.cancel();
  EXPECT_EQ(onnx_ir::deduplicateInitializers(g, cancel), -1);
  ASSERT_EQ(g.initializers.size(), 2u);
  EXPECT_EQ(g.initializers[1].name, "b");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"a", "b"}));
}

TEST(DedupCancel, UncancelledKeepsOne) {
  onnx_ir::Graph g = twoSameWeights();
  EXPECT_EQ(onnx_ir::deduplicateInitializers(g, CancelToken()), 1);
  ASSERT_EQ(g.initializers.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"a", "a"}));
}
