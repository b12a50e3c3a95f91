// Layout of graph views: geometry invariants on small hand-made graphs and a 10k-node synthetic
// transformer-like DAG.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "oxport/layout.h"

namespace oxport {
namespace {

// Builds GraphViews the way the core fills them: edges with producer/consumers, nodes with inputs
// and outputs, graph inputs and outputs listed.
class ViewBuilder {
 public:
  int input(const std::string& name, const std::string& type = "Float(1, 3, 8, 8)") {
    int e = edge(name, type, -1);
    g_.edges[e].is_graph_input = true;
    g_.inputs.push_back(e);
    return e;
  }
  int initializer(const std::string& name) {
    int e = edge(name, "Float(8, 8)", -1);
    g_.edges[e].is_initializer = true;
    g_.edges[e].summary = "float32[8, 8]";
    return e;
  }
  // Adds a node with one output value; returns the output edge id.
  int node(const std::string& op, const std::string& module, std::vector<int> inputs) {
    int id = static_cast<int>(g_.nodes.size());
    GraphViewNode n;
    n.id = id;
    n.name = "%" + std::to_string(id);
    n.op = op;
    n.module_path = module;
    n.inputs = inputs;
    int out = edge("v" + std::to_string(id), "Float(1, 8)", id);
    n.outputs.push_back(out);
    for (int e : inputs) g_.edges[e].consumers.push_back(id);
    g_.nodes.push_back(std::move(n));
    return out;
  }
  void output(int e) {
    g_.edges[e].is_graph_output = true;
    g_.outputs.push_back(e);
  }
  const GraphView& view() const { return g_; }

 private:
  int edge(const std::string& name, const std::string& type, int producer) {
    GraphViewEdge e;
    e.id = static_cast<int>(g_.edges.size());
    e.name = name;
    e.type = type;
    e.producer = producer;
    g_.edges.push_back(e);
    return e.id;
  }
  GraphView g_;
};

// A ResNet basic block with its ReLU module called twice, as TorchScript records it.
ViewBuilder basicBlock(int blocks = 2) {
  ViewBuilder b;
  int x = b.input("x");
  int w = b.initializer("conv1.weight");
  x = b.node("aten::_convolution", "conv1", {x, w});
  x = b.node("aten::relu", "relu", {x});
  for (int i = 0; i < blocks; ++i) {
    std::string p = "layer1." + std::to_string(i);
    int identity = x;
    int k = b.node("prim::Constant", p + ".conv1", {});
    int y = b.node("aten::_convolution", p + ".conv1", {x, b.initializer(p + ".conv1.weight"), k});
    y = b.node("aten::batch_norm", p + ".bn1", {y, b.initializer(p + ".bn1.weight")});
    y = b.node("aten::relu", p + ".relu", {y});
    y = b.node("aten::_convolution", p + ".conv2", {y, b.initializer(p + ".conv2.weight")});
    y = b.node("aten::batch_norm", p + ".bn2", {y, b.initializer(p + ".bn2.weight")});
    y = b.node("aten::add", p, {y, identity});
    x = b.node("aten::relu", p + ".relu", {y});
  }
  x = b.node("aten::adaptive_avg_pool2d", "avgpool", {x});
  x = b.node("aten::flatten", "", {x});
  x = b.node("aten::linear", "fc", {x, b.initializer("fc.weight"), b.initializer("fc.bias")});
  b.output(x);
  return b;
}

// Transformer-like DAG: embedding, `layers` blocks of attention + MLP with residuals and an
// attention mask read by every block (high fan-out), a head. About 40 nodes per block.
ViewBuilder transformer(int layers, int heads = 2, int* mask_value = nullptr) {
  ViewBuilder b;
  int ids = b.input("input_ids", "Long(1, 128)");
  int mask = b.input("attention_mask", "Long(1, 128)");
  int h = b.node("aten::embedding", "embed", {b.initializer("embed.weight"), ids});
  int pos = b.node("aten::arange", "embed", {b.node("prim::Constant", "embed", {})});
  h = b.node("aten::add", "embed", {h, b.node("aten::embedding", "embed.pos", {b.initializer("pos"), pos})});
  int m = b.node("aten::unsqueeze", "", {mask});
  m = b.node("aten::sub", "", {b.node("prim::Constant", "", {}), m});
  m = b.node("aten::mul", "", {m, b.node("prim::Constant", "", {})});
  if (mask_value) *mask_value = m;
  for (int l = 0; l < layers; ++l) {
    std::string p = "encoder.layers." + std::to_string(l);
    int res = h;
    int x = b.node("aten::layer_norm", p + ".ln1", {h, b.initializer(p + ".ln1.w"), b.initializer(p + ".ln1.b")});
    int q = b.node("aten::linear", p + ".attn.q", {x, b.initializer(p + ".q.w")});
    int k = b.node("aten::linear", p + ".attn.k", {x, b.initializer(p + ".k.w")});
    int v = b.node("aten::linear", p + ".attn.v", {x, b.initializer(p + ".v.w")});
    std::vector<int> outs;
    for (int hd = 0; hd < heads; ++hd) {
      std::string a = p + ".attn";
      int qh = b.node("aten::slice", a, {q});
      int kh = b.node("aten::slice", a, {k});
      int vh = b.node("aten::slice", a, {v});
      kh = b.node("aten::transpose", a, {kh});
      int s = b.node("aten::matmul", a, {qh, kh});
      s = b.node("aten::div", a, {s, b.node("prim::Constant", a, {})});
      s = b.node("aten::add", a, {s, m});
      s = b.node("aten::softmax", a, {s});
      s = b.node("aten::dropout", a + ".drop", {s});
      outs.push_back(b.node("aten::matmul", a, {s, vh}));
    }
    int cat = b.node("prim::ListConstruct", p + ".attn", outs);
    x = b.node("aten::cat", p + ".attn", {cat});
    x = b.node("aten::linear", p + ".attn.out", {x, b.initializer(p + ".o.w")});
    h = b.node("aten::add", p, {x, res});
    res = h;
    x = b.node("aten::layer_norm", p + ".ln2", {h, b.initializer(p + ".ln2.w")});
    x = b.node("aten::linear", p + ".mlp.fc1", {x, b.initializer(p + ".fc1.w")});
    x = b.node("aten::gelu", p + ".mlp.act", {x});
    x = b.node("aten::linear", p + ".mlp.fc2", {x, b.initializer(p + ".fc2.w")});
    x = b.node("aten::dropout", p + ".mlp.drop", {x});
    h = b.node("aten::add", p, {x, res});
  }
  h = b.node("aten::layer_norm", "final_norm", {h});
  int logits = b.node("aten::linear", "head", {h, b.initializer("head.w")});
  b.output(logits);
  b.output(h);
  return b;
}

// ---- invariants

// Returns the number of overlapping pairs among boxes (items and stubs), by a sweep over x.
int overlappingPairs(const std::vector<LayoutRect>& boxes) {
  std::vector<int> idx(boxes.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return boxes[a].x < boxes[b].x; });
  int bad = 0;
  for (size_t i = 0; i < idx.size(); ++i)
    for (size_t j = i + 1; j < idx.size() && boxes[idx[j]].x < boxes[idx[i]].right(); ++j)
      if (boxes[idx[i]].intersects(boxes[idx[j]])) ++bad;
  return bad;
}

std::vector<LayoutRect> allBoxes(const GraphLayout& L) {
  std::vector<LayoutRect> boxes;
  for (const auto& it : L.items) boxes.push_back(it.rect);
  for (const auto& s : L.stubs) boxes.push_back(s.rect);
  return boxes;
}

bool isAncestorOrSelf(const GraphLayout& L, int anc, int g) {
  for (; g >= 0; g = L.groups[g].parent)
    if (g == anc) return true;
  return false;
}

// Group frames nest like the module tree; a box lies inside a frame exactly when it belongs to it.
void expectFramesNest(const GraphLayout& L) {
  for (size_t gi = 0; gi < L.groups.size(); ++gi) {
    const auto& g = L.groups[gi];
    if (!g.visible) continue;
    if (g.parent >= 0) {
      EXPECT_TRUE(L.groups[g.parent].rect.contains(g.rect)) << g.path;
    }
    for (size_t gj = gi + 1; gj < L.groups.size(); ++gj) {
      const auto& h = L.groups[gj];
      if (!h.visible || h.parent != g.parent) continue;
      EXPECT_FALSE(g.rect.intersects(h.rect)) << g.path << " overlaps its sibling " << h.path;
    }
  }
  for (const auto& it : L.items) {
    int owner = it.kind == LayoutItemKind::Group ? L.groups[it.id].parent : it.group;
    for (size_t gi = 0; gi < L.groups.size(); ++gi) {
      const auto& g = L.groups[gi];
      if (!g.visible || g.collapsed) continue;
      bool member = isAncestorOrSelf(L, static_cast<int>(gi), owner);
      if (member) {
        EXPECT_TRUE(g.rect.contains(it.rect)) << "item " << it.id << " outside its group " << g.path;
      } else {
        EXPECT_FALSE(g.rect.intersects(it.rect)) << "item " << it.id << " inside foreign group " << g.path;
      }
    }
  }
  for (const auto& s : L.stubs) {
    int owner = L.items[s.item].group;
    for (size_t gi = 0; gi < L.groups.size(); ++gi) {
      const auto& g = L.groups[gi];
      if (!g.visible || g.collapsed) continue;
      if (isAncestorOrSelf(L, static_cast<int>(gi), owner)) {
        EXPECT_TRUE(g.rect.contains(s.rect)) << "stub of edge " << s.edge << " outside " << g.path;
      } else {
        EXPECT_FALSE(g.rect.intersects(s.rect)) << "stub of edge " << s.edge << " inside " << g.path;
      }
    }
  }
}

// Every forward route goes downwards from the producer's box to the consumer's box.
void expectRoutesFlowDown(const GraphLayout& L) {
  for (const auto& r : L.routes) {
    ASSERT_GE(r.points.size(), 2u);
    const LayoutRect& a = L.items[r.from].rect;
    const LayoutRect& b = L.items[r.to].rect;
    if (r.reversed) continue;
    EXPECT_LE(a.bottom(), b.y + 0.01) << "edge " << r.edge << " from item " << r.from << " to " << r.to;
    EXPECT_NEAR(r.points.front().y, a.bottom(), 0.01);
    EXPECT_NEAR(r.points.back().y, b.y, 0.01);
    EXPECT_GE(r.points.front().x, a.x - 0.01);
    EXPECT_LE(r.points.front().x, a.right() + 0.01);
    EXPECT_GE(r.points.back().x, b.x - 0.01);
    EXPECT_LE(r.points.back().x, b.right() + 0.01);
    for (size_t i = 1; i < r.points.size(); ++i)
      EXPECT_GE(r.points[i].y, r.points[i - 1].y - 0.01) << "route of edge " << r.edge << " goes up";
  }
}

int groupIndex(const GraphLayout& L, const std::string& path, int nth = 0) {
  for (size_t i = 0; i < L.groups.size(); ++i)
    if (L.groups[i].path == path && nth-- == 0) return static_cast<int>(i);
  return -1;
}

// ---- tests

TEST(Layout, ChainWithoutGroupsIsStraightAndOrdered) {
  ViewBuilder b;
  int x = b.input("x");
  for (int i = 0; i < 5; ++i) x = b.node("aten::relu", "", {x});
  b.output(x);
  GraphLayout L = layoutGraph(b.view());
  ASSERT_EQ(L.items.size(), 7u);  // input, 5 nodes, output
  EXPECT_EQ(L.stats.crossings, 0);
  EXPECT_EQ(overlappingPairs(allBoxes(L)), 0);
  expectRoutesFlowDown(L);
  // A chain lines up in one column.
  for (const auto& it : L.items) EXPECT_NEAR(it.rect.centerX(), L.items[1].rect.centerX(), 0.5);
  for (size_t i = 1; i < L.items.size(); ++i) EXPECT_GT(L.items[i].rect.y, L.items[i - 1].rect.y);
}

TEST(Layout, CountsAnUnavoidableCrossing) {
  // Two inputs each read by two nodes that both read the other: K(2,2) has exactly one crossing.
  ViewBuilder b;
  int a = b.input("a"), c = b.input("c");
  b.output(b.node("aten::add", "", {a, c}));
  b.output(b.node("aten::sub", "", {a, c}));
  LayoutOptions opt;
  GraphLayout L = layoutGraph(b.view(), opt);
  EXPECT_EQ(L.stats.crossings, 1);
}

TEST(Layout, ResidualBlocksGroupByModuleWithoutOverlap) {
  ViewBuilder b = basicBlock(2);
  GraphLayout L = layoutGraph(b.view());
  EXPECT_EQ(overlappingPairs(allBoxes(L)), 0);
  expectFramesNest(L);
  expectRoutesFlowDown(L);
  // layer1 > layer1.0 and layer1.1; single-node modules (conv1, bn1 ...) are not framed.
  int l1 = groupIndex(L, "layer1");
  ASSERT_GE(l1, 0);
  EXPECT_EQ(L.groups[l1].node_count, 14);
  int b0 = groupIndex(L, "layer1.0");
  ASSERT_GE(b0, 0);
  EXPECT_EQ(L.groups[b0].parent, l1);
  EXPECT_EQ(L.groups[b0].label, "0");
  EXPECT_EQ(groupIndex(L, "layer1.0.conv1"), -1);
  // The ReLU module called twice in a block is two separate calls, so no cycle is drawn.
  for (const auto& r : L.routes) EXPECT_FALSE(r.reversed);
  // The top-level ReLU feeding the first block sits above the blocks' frame, the pooling below.
  for (const auto& n : b.view().nodes) {
    if (n.module_path == "relu") {
      EXPECT_LE(L.items[L.itemOfNode(n.id)].rect.bottom(), L.groups[l1].rect.y);
    }
    if (n.module_path == "avgpool") {
      EXPECT_GE(L.items[L.itemOfNode(n.id)].rect.y, L.groups[l1].rect.bottom());
    }
  }
}

TEST(Layout, ConstantsAndInitializersBecomeStubsNextToTheirConsumer) {
  ViewBuilder b = basicBlock(1);
  GraphLayout L = layoutGraph(b.view());
  // No item for prim::Constant nodes or initializers.
  for (const auto& it : L.items) {
    if (it.kind == LayoutItemKind::Node) {
      EXPECT_NE(b.view().nodes[it.id].op, "prim::Constant");
    }
    if (it.kind == LayoutItemKind::Input) {
      EXPECT_FALSE(b.view().edges[it.id].is_initializer);
    }
  }
  ASSERT_FALSE(L.stubs.empty());
  int from_constant_node = 0;
  for (const auto& s : L.stubs) {
    const LayoutRect& host = L.items[s.item].rect;
    EXPECT_LE(s.rect.right(), host.x + 0.01);                        // left of its consumer
    EXPECT_LT(std::abs(s.rect.centerY() - host.centerY()), host.h);  // beside it
    if (s.node >= 0) {
      ++from_constant_node;
      EXPECT_EQ(b.view().nodes[s.node].op, "prim::Constant");
      EXPECT_EQ(L.itemOfNode(s.node), -1);
    }
  }
  EXPECT_EQ(from_constant_node, 1);
  // Routes never carry a stubbed value.
  for (const auto& r : L.routes) EXPECT_FALSE(b.view().edges[r.edge].is_initializer);
  EXPECT_EQ(overlappingPairs(allBoxes(L)), 0);
}

TEST(Layout, HighFanOutInputIsDrawnAsStubs) {
  ViewBuilder b;
  int x = b.input("x");
  int mask = b.input("mask");
  for (int i = 0; i < 10; ++i) x = b.node("aten::add", "", {x, mask});
  b.output(x);
  LayoutOptions opt;
  opt.fanout_limit = 6;
  GraphLayout L = layoutGraph(b.view(), opt);
  int mask_stubs = 0;
  for (const auto& s : L.stubs) mask_stubs += s.edge == mask ? 1 : 0;
  EXPECT_EQ(mask_stubs, 10);
  for (const auto& r : L.routes) EXPECT_NE(r.edge, mask);
  // The mask input keeps its box (no edges); the chain stays straight.
  EXPECT_GE(L.itemOfEdgeTerminal(mask, false), 0);
  EXPECT_EQ(L.stats.crossings, 0);

  opt.fanout_limit = 20;
  GraphLayout routed = layoutGraph(b.view(), opt);
  int mask_routes = 0;
  for (const auto& r : routed.routes) mask_routes += r.edge == mask ? 1 : 0;
  EXPECT_EQ(mask_routes, 10);
}

TEST(Layout, CollapsingAGroupHidesItsNodes) {
  ViewBuilder b = basicBlock(2);
  LayoutOptions opt;
  opt.collapsed = {"layer1"};
  GraphLayout L = layoutGraph(b.view(), opt);
  int l1 = groupIndex(L, "layer1");
  ASSERT_GE(l1, 0);
  const LayoutGroup& g = L.groups[l1];
  EXPECT_TRUE(g.collapsed);
  ASSERT_GE(g.item, 0);
  EXPECT_EQ(L.items[g.item].kind, LayoutItemKind::Group);
  EXPECT_EQ(L.groups[groupIndex(L, "layer1.0")].visible, false);
  int hidden = 0;
  for (const auto& n : b.view().nodes) {
    if (n.module_path.rfind("layer1", 0) != 0 || n.op == "prim::Constant") continue;
    EXPECT_EQ(L.itemOfNode(n.id), g.item) << n.module_path;
    ++hidden;
    for (const auto& it : L.items) EXPECT_FALSE(it.kind == LayoutItemKind::Node && it.id == n.id);
  }
  EXPECT_EQ(hidden, 14);
  for (const auto& s : L.stubs) EXPECT_NE(s.item, g.item);  // no stubs on a collapsed box
  // The collapsed box is connected in and out, like the block would be.
  int in = 0, outc = 0;
  for (const auto& r : L.routes) {
    in += r.to == g.item;
    outc += r.from == g.item;
  }
  EXPECT_EQ(in, 1);
  EXPECT_EQ(outc, 1);
  EXPECT_EQ(overlappingPairs(allBoxes(L)), 0);
  expectRoutesFlowDown(L);

  GraphLayout open = layoutGraph(b.view());
  EXPECT_LT(L.items.size(), open.items.size());
  EXPECT_LT(L.bounds.h, open.bounds.h);
}

TEST(Layout, CycleBetweenGroupsIsBrokenAndStillDisjoint) {
  // Module "a" is entered twice in one connected call: a.x -> b -> a.y, with a.x -> a.y inside a.
  ViewBuilder b;
  int in = b.input("in");
  int ax = b.node("aten::relu", "a.x", {in});
  int a2 = b.node("aten::relu", "a.x2", {ax});
  int bb = b.node("aten::neg", "b.p", {ax});
  int b2 = b.node("aten::neg", "b.q", {bb});
  int ay = b.node("aten::add", "a.y", {a2, b2});
  b.output(ay);
  GraphLayout L = layoutGraph(b.view());
  int reversed = 0;
  for (const auto& r : L.routes) reversed += r.reversed ? 1 : 0;
  EXPECT_GE(reversed, 1);
  EXPECT_EQ(overlappingPairs(allBoxes(L)), 0);
  expectFramesNest(L);
}

TEST(Layout, RoutesEnterNestedGroupsThroughTheirFrames) {
  ViewBuilder b = transformer(2);
  GraphLayout L = layoutGraph(b.view());
  EXPECT_EQ(overlappingPairs(allBoxes(L)), 0);
  expectFramesNest(L);
  expectRoutesFlowDown(L);
  // A route from the embedding into layer 0's q projection crosses layer 0's frame top.
  int layer0 = groupIndex(L, "encoder.layers.0");
  ASSERT_GE(layer0, 0);
  const LayoutRect& frame = L.groups[layer0].rect;
  bool crosses_top = false;
  for (const auto& r : L.routes) {
    const auto& from = L.items[r.from];
    const auto& to = L.items[r.to];
    if (isAncestorOrSelf(L, layer0, from.group) || !isAncestorOrSelf(L, layer0, to.group)) continue;
    for (const auto& p : r.points)
      if (std::abs(p.y - frame.y) < 0.01 && p.x >= frame.x && p.x <= frame.right()) crosses_top = true;
  }
  EXPECT_TRUE(crosses_top);
}

TEST(Layout, TenThousandNodeTransformerLaysOut) {
  int mask = -1;
  ViewBuilder b = transformer(280, 2, &mask);  // ~36 nodes per block
  const GraphView& g = b.view();
  ASSERT_GE(g.nodes.size(), 10000u);
  for (bool grouped : {true, false}) {
    LayoutOptions opt;
    opt.group_by_module = grouped;
    auto t0 = std::chrono::steady_clock::now();
    GraphLayout L = layoutGraph(g, opt);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[layout] %zu nodes %s: %.1f ms, %zu items, %zu routes, %zu stubs, %d clusters, %d layers, "
                "%d dummies, %d crossings, %d sweeps\n",
                g.nodes.size(), grouped ? "grouped" : "flat", ms, L.items.size(), L.routes.size(),
                L.stubs.size(), L.stats.clusters, L.stats.layers, L.stats.dummies, L.stats.crossings,
                L.stats.sweeps);
    EXPECT_GT(L.items.size(), 8000u);
    EXPECT_EQ(overlappingPairs(allBoxes(L)), 0);
    expectRoutesFlowDown(L);
    // The mask is read by every attention head: stubs, not 500 long edges.
    int mask_routes = 0;
    for (const auto& r : L.routes) mask_routes += r.edge == mask ? 1 : 0;
    EXPECT_EQ(mask_routes, 0);
    if (grouped) {
      auto blocks = std::count_if(L.groups.begin(), L.groups.end(), [](const LayoutGroup& x) {
        return x.depth == 1 && x.path.rfind("encoder.layers.", 0) == 0;
      });
      EXPECT_EQ(blocks, 280);
    }
  }
}

}  // namespace
}  // namespace oxport
