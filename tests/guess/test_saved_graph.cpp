// Model::savedGraph: forward's graph as saved, drawn by the studio before the example run. It must
// carry the structure the full preview (Model::inspect) shows: the same operators in the same
// modules, parameters by name, constants as attributes, and no chains of GetAttr nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "oxport/model.h"

namespace oxport {
namespace {

std::multiset<std::string> convModules(const GraphView& g) {
  std::multiset<std::string> out;
  for (const auto& n : g.nodes)
    if (n.op == "aten::_convolution") out.insert(n.module_path);
  return out;
}

TEST(SavedGraph, Resnet18MatchesThePreviewsStructureWithoutARun) {
  auto m = Model::load(std::string(OXPORT_GUESS_DIR) + "/resnet18.pt");
  ASSERT_TRUE(m.ok()) << m.error().message();
  auto saved = m->savedGraph();
  ASSERT_TRUE(saved.ok()) << saved.error().message();

  for (const auto& n : saved->nodes) {
    EXPECT_NE(n.op, "prim::Constant");
    EXPECT_NE(n.op, "prim::GetAttr");
  }
  // 20 convolutions (17 in the blocks, conv1, 2 downsamples), each in its module.
  const auto convs = convModules(*saved);
  EXPECT_EQ(convs.size(), 20u);
  EXPECT_EQ(convs.count("conv1"), 1u);
  EXPECT_EQ(convs.count("layer2.0.downsample.0"), 1u);

  // Parameters are edges named by their attribute path, feeding the node that reads them.
  auto weight = std::find_if(saved->edges.begin(), saved->edges.end(),
                             [](const GraphViewEdge& e) { return e.name == "layer1.0.conv1.weight"; });
  ASSERT_NE(weight, saved->edges.end());
  EXPECT_TRUE(weight->is_initializer);
  ASSERT_EQ(weight->consumers.size(), 1u);
  EXPECT_EQ(saved->nodes[weight->consumers[0]].module_path, "layer1.0.conv1");
  // Constant arguments are attributes, named from the schema.
  const auto& conv1 = *std::find_if(saved->nodes.begin(), saved->nodes.end(),
                                    [](const GraphViewNode& n) { return n.module_path == "conv1"; });
  auto stride = std::find_if(conv1.attributes.begin(), conv1.attributes.end(),
                             [](const auto& a) { return a.first == "stride"; });
  ASSERT_NE(stride, conv1.attributes.end());
  EXPECT_EQ(stride->second, "[2, 2]");
  ASSERT_EQ(saved->inputs.size(), 1u);
  ASSERT_EQ(saved->outputs.size(), 1u);
  EXPECT_GE(conv1.location.line, 1);

  // The full preview (after the example run) has the same convolutions in the same modules.
  ExportOptions o;
  TensorSpec t;
  t.shape = {1, 3, 64, 64};
  o.args = {ArgValue::tensor(t)};
  auto full = m->inspect(o);
  ASSERT_TRUE(full.ok()) << full.error().message();
  EXPECT_EQ(convModules(*full), convs);
}

}  // namespace
}  // namespace oxport
