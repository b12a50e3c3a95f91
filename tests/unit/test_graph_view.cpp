// GraphView::toText: the one-line-per-node form the CLI's inspect prints.
#include <gtest/gtest.h>

#include "oxport/graph_view.h"

namespace oxport {
namespace {

GraphViewEdge edge(int id, std::string name, std::string type = {}) {
  GraphViewEdge e;
  e.id = id;
  e.name = std::move(name);
  e.type = std::move(type);
  return e;
}

GraphView sample() {
  GraphView g;
  g.title = "tiny";
  g.edges = {edge(0, "x", "Float(1, 3, 8, 8)"),
             edge(1, "conv1.weight", "Float(4, 3, 3, 3)"),
             edge(2, "y"),
             edge(3, "g"),
             edge(4, ""),
             edge(5, "a", "Float(1)")};
  g.edges[0].is_graph_input = true;
  g.edges[1].is_initializer = true;
  g.edges[5].is_graph_output = true;

  GraphViewNode conv;
  conv.id = 0;
  conv.op = "Conv";
  conv.inputs = {0, 1, -1};
  conv.outputs = {2};
  conv.attributes = {{"strides", "[1, 1]"}, {"group", "1"}};
  conv.module_path = "layer1.0.conv1";
  conv.location = {"/home/me/project/model.py", 12, 0};

  GraphViewNode gelu;
  gelu.id = 1;
  gelu.op = "Gelu";
  gelu.domain = "com.microsoft";
  gelu.inputs = {2};
  gelu.outputs = {3};

  GraphViewNode split;
  split.id = 2;
  split.op = "aten::split";
  split.inputs = {3};
  split.outputs = {5, 4};
  split.location = {"C:\\src\\net.py", 3, 0};

  GraphViewNode sink;  // no outputs, no inputs, only a module
  sink.id = 3;
  sink.op = "prim::RaiseException";
  sink.module_path = "head";

  g.nodes = {conv, gelu, split, sink};
  g.inputs = {0};
  g.outputs = {5};
  return g;
}

TEST(GraphView, ToText) {
  EXPECT_EQ(sample().toText(),
            "graph tiny  (4 nodes, 1 initializer)\n"
            "  input  %x : Float(1, 3, 8, 8)\n"
            "  %y = Conv(%x, %conv1.weight, _) {strides=[1, 1], group=1}  # layer1.0.conv1  model.py:12\n"
            "  %g = com.microsoft.Gelu(%y)\n"
            "  %a, %4 = aten::split(%g)  # net.py:3\n"
            "  prim::RaiseException()  # head\n"
            "  output %a : Float(1)\n");
}

TEST(GraphView, EmptyGraph) { EXPECT_EQ(GraphView{}.toText(), "graph (0 nodes)\n"); }

TEST(GraphView, BadEdgeIdsDoNotCrash) {
  GraphView g = sample();
  g.nodes[1].inputs = {42};
  g.outputs = {99};
  const std::string text = g.toText();
  EXPECT_NE(text.find("com.microsoft.Gelu(%<bad edge 42>)"), std::string::npos) << text;
  EXPECT_NE(text.find("output %<bad edge 99>"), std::string::npos) << text;
}

TEST(GraphView, LocationWithoutFile) {
  GraphView g;
  GraphViewNode n;
  n.op = "Relu";
  n.location.line = 7;
  g.nodes = {n};
  EXPECT_EQ(g.toText(), "graph (1 node)\n  Relu()  # line 7\n");
}

}  // namespace
}  // namespace oxport
