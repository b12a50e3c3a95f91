// Layered layout of a GraphView for the studio's preview (and the layout benchmarks).
//
// A Sugiyama-style layout built for graphs of up to tens of thousands of nodes:
//   - nodes are grouped by module path (layer1 > layer1.0 > conv1); each expanded group is laid out
//     on its own, bottom-up, and becomes one box in its parent; a collapsed group is one plain box;
//   - inside a group: cycle breaking, longest-path layering (sources pulled down next to their
//     consumers), dummy vertices for long edges, barycenter ordering sweeps (capped, best kept), and
//     coordinates by weighted isotonic regression between layers;
//   - constants (initializers, constant nodes) and values feeding more than `fanout_limit` nodes are
//     not routed: they become small stubs next to each consumer.
// No Qt, libtorch or protobuf here: the caller supplies item sizes through LayoutMeasureFn.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "oxport/graph_view.h"

namespace oxport {

struct LayoutPoint {
  double x = 0, y = 0;
};

struct LayoutSize {
  double w = 0, h = 0;
};

struct LayoutRect {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
  double centerX() const { return x + w / 2; }
  double centerY() const { return y + h / 2; }
  // True when the interiors overlap by more than `eps` in both directions.
  bool intersects(const LayoutRect& o, double eps = 0.01) const {
    return x + eps < o.right() && o.x + eps < right() && y + eps < o.bottom() && o.y + eps < bottom();
  }
  bool contains(const LayoutRect& o, double eps = 0.01) const {
    return o.x >= x - eps && o.y >= y - eps && o.right() <= right() + eps && o.bottom() <= bottom() + eps;
  }
};

// What a drawn box stands for.
enum class LayoutItemKind {
  Node,    // a graph node (id: GraphViewNode::id)
  Group,   // a collapsed group (id: index into GraphLayout::groups)
  Input,   // a graph input (id: GraphViewEdge::id)
  Output,  // a graph output (id: GraphViewEdge::id)
};

struct LayoutItem {
  LayoutItemKind kind = LayoutItemKind::Node;
  int id = -1;
  LayoutRect rect;  // the box itself; stubs sit to its left, outside this rectangle
  int group = -1;   // innermost expanded group the item sits in; -1 at the top level
  int layer = 0;    // layer inside that group
};

// A module scope. Calls of one module that are not connected to each other (a ReLU module used
// twice in a block) become separate instances with the same path.
struct LayoutGroup {
  std::string path;      // "layer1.0"
  std::string label;     // the path below the parent group: "0", or "layer1.0" when levels merged
  int parent = -1;       // index into GraphLayout::groups; -1 for top-level groups
  int depth = 0;         // 0 for top-level groups
  std::vector<int> children;
  int node_count = 0;    // nodes in the whole subtree (constants drawn as stubs not counted)
  bool collapsed = false;
  bool visible = true;   // false when an ancestor is collapsed (rect is then empty)
  int item = -1;         // the item when collapsed
  LayoutRect rect;       // frame when expanded, the box when collapsed
};

// A value that is not routed but drawn as a small box next to one consumer.
struct LayoutStub {
  int edge = -1;    // GraphViewEdge::id
  int node = -1;    // producing constant node (GraphViewNode::id), -1 for initializers and inputs
  int item = -1;    // the consumer item
  int folded = 0;   // further stubs of the same consumer folded into this one ("+3")
  LayoutRect rect;
};

// One drawn connection: value `edge` from item `from` to item `to`, as a polyline from the bottom of
// `from` to the top of `to` (through the borders of the groups it leaves and enters).
struct LayoutRoute {
  int edge = -1;
  int from = -1, to = -1;  // indices into GraphLayout::items
  std::vector<LayoutPoint> points;
  bool reversed = false;   // goes upwards: a cycle between groups had to be broken
};

struct LayoutOptions {
  bool group_by_module = true;
  std::set<std::string> collapsed;  // module paths shown as one box (every instance of the path)
  int min_group_nodes = 2;          // smaller groups are dissolved into their parent
  bool merge_single_child = true;   // a group holding just one group and no node shows only the child
  bool stub_constants = true;       // initializers and constant nodes drawn as stubs
  int fanout_limit = 6;             // a value with more consumers is drawn as stubs; <= 0: never
  int max_stubs_per_node = 6;       // more are folded into the last one

  double node_sep = 18;       // horizontal gap between boxes in a layer
  double thin_sep = 6;        // gap between edge bends (dummy vertices) and ports
  double layer_sep = 34;      // vertical gap between layers
  double group_padding = 10;  // inside a group frame
  double group_header = 22;   // room for the group's title
  double stub_gap = 4;
  LayoutSize stub_size{30, 13};
  LayoutSize default_node_size{110, 34};  // used when no measure function is given
  LayoutSize default_terminal_size{90, 24};
  LayoutSize default_group_size{150, 40};

  int max_sweeps = 10;        // barycenter down+up sweeps per group, at most
  int coordinate_passes = 6;  // alternating down/up straightening passes
};

// The size of a box: a node, a collapsed group (`group` is then set) or a terminal.
using LayoutMeasureFn = std::function<LayoutSize(const LayoutItem& item, const LayoutGroup* group)>;

struct LayoutStats {
  int clusters = 0;       // top level + expanded groups laid out
  int layers = 0;         // summed over clusters
  int dummies = 0;        // edge bends inserted for long edges
  int crossings = 0;      // edge crossings between adjacent layers, summed over clusters
  int sweeps = 0;
  double ms = 0;          // wall time of layoutGraph
};

struct GraphLayout {
  std::vector<LayoutItem> items;
  std::vector<LayoutGroup> groups;
  std::vector<LayoutStub> stubs;
  std::vector<LayoutRoute> routes;
  LayoutRect bounds;
  LayoutStats stats;

  // Per node (by id): the item showing it (its own, or its collapsed group's), -1 for a constant
  // node drawn only as stubs.
  int itemOfNode(int node_id) const;
  // Innermost group of a node (visible or not), -1 at the top level.
  int groupOfNode(int node_id) const;
  // The chain of group paths from the top down to the node's innermost group.
  std::vector<std::string> groupPathsOfNode(int node_id) const;
  int itemOfEdgeTerminal(int edge_id, bool output) const;

  // Filled by layoutGraph; indexed by position in GraphView::nodes.
  std::vector<int> node_item;
  std::vector<int> node_group;
  std::unordered_map<int, int> node_index;  // node id -> position in GraphView::nodes
};

GraphLayout layoutGraph(const GraphView& graph, const LayoutOptions& options = {},
                        const LayoutMeasureFn& measure = {});

// Every module path prefix present in the graph ("layer1", "layer1.0", "layer1.0.conv1").
std::vector<std::string> modulePathPrefixes(const GraphView& graph);

// True for node kinds drawn as stubs: prim::Constant, ONNX Constant and the like.
bool isConstantOp(const std::string& op);

}  // namespace oxport
