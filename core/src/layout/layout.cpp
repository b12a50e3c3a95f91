// Layered layout of a GraphView; see oxport/layout.h for the outline.
#include "oxport/layout.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string_view>

namespace oxport {

bool isConstantOp(const std::string& op) {
  return op == "prim::Constant" || op == "onnx::Constant" || op == "Constant";
}

namespace {

// Ops that only package other values (lists, tuples, attributes of the module object). They count
// as constants when everything they read is constant.
bool isPackingOp(const std::string& op) {
  return op == "prim::ListConstruct" || op == "prim::TupleConstruct" || op == "prim::DictConstruct" ||
         op == "prim::GetAttr" || op == "prim::NumToTensor";
}

// A graph input that is the module object itself ("self" of a scripted module).
bool isModuleObjectType(const std::string& type) { return type.rfind("__torch__", 0) == 0; }

// ---------------------------------------------------------------------------------------------
// The graph as the layout sees it: dense indices, constant and stub classification.

struct Prep {
  int n = 0;  // nodes
  int m = 0;  // edges (values)
  std::vector<int> producer;                 // per edge: node index or -1
  std::vector<std::vector<int>> consumers;   // per edge: unique node indices, in node order
  std::vector<std::vector<int>> node_in;     // per node: unique input edge indices, in slot order
  std::vector<char> node_const;              // constant node drawn as stubs only
  std::vector<char> edge_const;              // constant-like value
  std::vector<char> edge_stub;               // not routed; a stub at each consumer
  std::vector<char> edge_output;             // graph output
  std::vector<int> edge_id;                  // edge index -> GraphViewEdge::id
  std::unordered_map<int, int> edge_index;   // GraphViewEdge::id -> index
  std::unordered_map<int, int> node_index;   // GraphViewNode::id -> index
};

void prepare(const GraphView& g, const LayoutOptions& opt, Prep& p) {
  p.n = static_cast<int>(g.nodes.size());
  p.m = static_cast<int>(g.edges.size());
  p.node_index.reserve(p.n * 2);
  p.edge_index.reserve(p.m * 2);
  for (int i = 0; i < p.n; ++i) p.node_index.emplace(g.nodes[i].id, i);
  p.edge_id.resize(p.m);
  for (int i = 0; i < p.m; ++i) {
    p.edge_index.emplace(g.edges[i].id, i);
    p.edge_id[i] = g.edges[i].id;
  }
  auto nodeIdx = [&](int id) {
    auto it = p.node_index.find(id);
    return it == p.node_index.end() ? -1 : it->second;
  };
  auto edgeIdx = [&](int id) {
    auto it = p.edge_index.find(id);
    return it == p.edge_index.end() ? -1 : it->second;
  };

  p.producer.assign(p.m, -1);
  p.consumers.assign(p.m, {});
  p.node_in.assign(p.n, {});
  for (int e = 0; e < p.m; ++e) p.producer[e] = g.edges[e].producer >= 0 ? nodeIdx(g.edges[e].producer) : -1;
  for (int v = 0; v < p.n; ++v) {
    for (int eid : g.nodes[v].outputs) {
      int e = edgeIdx(eid);
      if (e >= 0 && p.producer[e] < 0) p.producer[e] = v;
    }
    for (int eid : g.nodes[v].inputs) {
      int e = edgeIdx(eid);
      if (e < 0) continue;
      auto& in = p.node_in[v];
      if (std::find(in.begin(), in.end(), e) != in.end()) continue;
      in.push_back(e);
      p.consumers[e].push_back(v);
    }
  }

  p.edge_output.assign(p.m, 0);
  for (int eid : g.outputs) {
    int e = edgeIdx(eid);
    if (e >= 0) p.edge_output[e] = 1;
  }
  for (int e = 0; e < p.m; ++e)
    if (g.edges[e].is_graph_output) p.edge_output[e] = 1;

  // Constants, in node order (GraphView nodes are topologically ordered; a node that reads a
  // value produced later is simply not treated as constant).
  p.node_const.assign(p.n, 0);
  p.edge_const.assign(p.m, 0);
  if (opt.stub_constants) {
    for (int e = 0; e < p.m; ++e)
      if (g.edges[e].is_initializer || (p.producer[e] < 0 && isModuleObjectType(g.edges[e].type)))
        p.edge_const[e] = 1;
    for (int v = 0; v < p.n; ++v) {
      const auto& node = g.nodes[v];
      bool c = isConstantOp(node.op) ||
               (isPackingOp(node.op) && std::all_of(p.node_in[v].begin(), p.node_in[v].end(),
                                                    [&](int e) { return p.edge_const[e] != 0; }));
      if (isConstantOp(node.op) && !p.node_in[v].empty()) c = false;  // a Constant reading values
      for (int eid : node.outputs) {
        int e = edgeIdx(eid);
        if (e >= 0 && p.edge_output[e]) c = false;
      }
      if (!c) continue;
      p.node_const[v] = 1;
      for (int eid : node.outputs) {
        int e = edgeIdx(eid);
        if (e >= 0) p.edge_const[e] = 1;
      }
    }
  }

  p.edge_stub.assign(p.m, 0);
  for (int e = 0; e < p.m; ++e) {
    if (p.edge_const[e]) {
      p.edge_stub[e] = 1;
      continue;
    }
    if (opt.fanout_limit > 0) {
      int real = 0;
      for (int c : p.consumers[e]) real += p.node_const[c] ? 0 : 1;
      if (real > opt.fanout_limit) p.edge_stub[e] = 1;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Groups: module scopes split into connected call instances, small ones dissolved.

struct GInst {
  std::string path;
  int parent = -1;
  std::vector<int> direct;    // node indices
  std::vector<int> children;  // instance indices
  int total = 0;
  bool alive = true;
  bool collapsed = false;
  bool visible = true;
  int out = -1;               // index in GraphLayout::groups
  int cluster = -1;           // cluster index when expanded and visible
  int item = -1;              // item index when collapsed and visible
};

struct GroupBuilder {
  const GraphView& g;
  const Prep& p;
  const LayoutOptions& opt;
  std::vector<GInst> inst;
  std::vector<std::vector<size_t>> ends;  // per node: end offset of each path component
  std::vector<int> mark, emark, efirst, uf;
  int token = 0;

  GroupBuilder(const GraphView& graph, const Prep& prep, const LayoutOptions& o) : g(graph), p(prep), opt(o) {}

  int find(int x) {
    while (uf[x] != x) {
      uf[x] = uf[uf[x]];
      x = uf[x];
    }
    return x;
  }

  void run() {
    ends.assign(p.n, {});
    std::vector<int> real;
    for (int v = 0; v < p.n; ++v) {
      if (p.node_const[v]) continue;
      real.push_back(v);
      if (!opt.group_by_module) continue;
      const std::string& path = g.nodes[v].module_path;
      size_t start = 0;
      while (start < path.size()) {
        size_t dot = path.find('.', start);
        if (dot == std::string::npos) dot = path.size();
        if (dot > start) ends[v].push_back(dot);
        start = dot + 1;
      }
    }
    mark.assign(p.n, 0);
    uf.assign(p.n, 0);
    emark.assign(p.m, 0);
    efirst.assign(p.m, -1);
    inst.push_back(GInst{});  // root
    build(0, real, 0);
    finalize(0);
  }

  void build(int self, const std::vector<int>& nodes, size_t depth) {
    std::unordered_map<std::string_view, int> bucket_of;
    std::vector<std::vector<int>> buckets;
    for (int v : nodes) {
      if (ends[v].size() <= depth) {
        inst[self].direct.push_back(v);
        continue;
      }
      const std::string& path = g.nodes[v].module_path;
      size_t b = depth == 0 ? 0 : ends[v][depth - 1] + 1;
      std::string_view key(path.data() + b, ends[v][depth] - b);
      auto [it, fresh] = bucket_of.emplace(key, static_cast<int>(buckets.size()));
      if (fresh) buckets.emplace_back();
      buckets[it->second].push_back(v);
    }
    inst[self].total = static_cast<int>(nodes.size());
    for (auto& bucket : buckets) {
      // Connected pieces of this scope: joined by values passed inside it, or by reading the same
      // outside value. Unconnected calls of one module become separate instances.
      ++token;
      for (int v : bucket) {
        mark[v] = token;
        uf[v] = v;
      }
      for (int v : bucket) {
        for (int e : p.node_in[v]) {
          if (p.edge_stub[e]) continue;
          int src = p.producer[e];
          if (src >= 0 && mark[src] == token) {
            uf[find(v)] = find(src);
          } else if (emark[e] == token) {
            uf[find(v)] = find(efirst[e]);
          } else {
            emark[e] = token;
            efirst[e] = v;
          }
        }
      }
      std::unordered_map<int, int> piece_of;
      std::vector<std::vector<int>> pieces;
      for (int v : bucket) {
        auto [it, fresh] = piece_of.emplace(find(v), static_cast<int>(pieces.size()));
        if (fresh) pieces.emplace_back();
        pieces[it->second].push_back(v);
      }
      for (auto& piece : pieces) {
        int v0 = piece.front();
        GInst child;
        child.path = g.nodes[v0].module_path.substr(0, ends[v0][depth]);
        child.parent = self;
        int id = static_cast<int>(inst.size());
        inst.push_back(std::move(child));
        inst[self].children.push_back(id);
        build(id, piece, depth + 1);
      }
    }
  }

  // Dissolves groups smaller than min_group_nodes and merges single-child levels, bottom-up.
  void finalize(int self) {
    std::vector<int> kids;
    kids.swap(inst[self].children);
    std::vector<int> keep;
    for (int c : kids) {
      finalize(c);
      GInst& ci = inst[c];
      if (ci.total < opt.min_group_nodes) {
        ci.alive = false;
        for (int v : ci.direct) inst[self].direct.push_back(v);
        for (int gc : ci.children) {
          inst[gc].parent = self;
          keep.push_back(gc);
        }
        ci.direct.clear();
        ci.children.clear();
      } else if (opt.merge_single_child && ci.direct.empty() && ci.children.size() == 1) {
        ci.alive = false;
        int gc = ci.children.front();
        inst[gc].parent = self;
        keep.push_back(gc);
        ci.children.clear();
      } else {
        keep.push_back(c);
      }
    }
    // Keep the direct nodes in node order after dissolving.
    std::sort(inst[self].direct.begin(), inst[self].direct.end());
    inst[self].children = std::move(keep);
  }
};

// ---------------------------------------------------------------------------------------------
// Clusters: one layered layout per expanded group and one for the top level.

enum class VKind : uint8_t { Item, Compound, InPort, OutPort, Dummy };

struct Vertex {
  VKind kind = VKind::Item;
  int ref = -1;                 // item index, group instance, or value edge index (ports)
  double left = 0, right = 0;   // extents around the anchor x
  double height = 0;
  double box_w = 0, box_h = 0;  // items: the box itself (centred on the anchor)
  int layer = 0;
  int pos = 0;
  double x = 0, y = 0;          // anchor x, top y (cluster content coordinates)
};

struct LEdge {
  int u = -1, v = -1;          // in layered direction after cycle breaking
  bool reversed = false;
  std::vector<int> values;     // value edge indices carried (for port offsets)
  double u_off = 0, v_off = 0; // attach offsets from the anchors
  std::vector<int> chain;      // dummy vertices
  std::vector<LayoutPoint> points;
};

struct Cluster {
  int group = -1;  // group instance; -1 for the top level
  std::vector<Vertex> v;
  std::vector<LEdge> e;
  std::unordered_map<uint64_t, int> edge_of;  // (u, v) -> LEdge
  std::unordered_map<int, int> in_port, out_port;
  double width = 0, height = 0;
  double content_dx = 0;   // content shift inside the frame (frame wider than content)
  double box_w = 0, box_h = 0;
  int parent_vertex = -1;  // this cluster's compound vertex in the parent cluster
  int parent_cluster = -1;
  LayoutPoint origin;      // global position of the content's top-left corner
  int layers = 0;
  int crossings = 0;
  int sweeps = 0;
};

uint64_t pairKey(int a, int b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }

double omega(VKind a, VKind b) {
  bool da = a == VKind::Dummy, db = b == VKind::Dummy;
  if (da && db) return 8;
  if (da || db) return 2;
  return 1;
}

struct Seg {
  int to;
  double w;
  double off_self, off_other;  // attach offsets at this end and at the other end
};

// Weighted isotonic regression with minimum gaps: x[i+1] - x[i] >= gap[i], minimising
// sum w[i] (x[i] - d[i])^2 (pool adjacent violators on x[i] - c[i]).
void isotonic(const std::vector<double>& d, const std::vector<double>& w, const std::vector<double>& gap,
              std::vector<double>& x) {
  size_t n = d.size();
  x.assign(n, 0);
  if (n == 0) return;
  std::vector<double> c(n, 0);
  for (size_t i = 1; i < n; ++i) c[i] = c[i - 1] + gap[i - 1];
  struct Block {
    double sw, swd;
    size_t first, last;
  };
  std::vector<Block> blocks;
  blocks.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    blocks.push_back({w[i], w[i] * (d[i] - c[i]), i, i});
    while (blocks.size() > 1) {
      Block& b = blocks.back();
      Block& a = blocks[blocks.size() - 2];
      if (a.swd / a.sw <= b.swd / b.sw) break;
      a.sw += b.sw;
      a.swd += b.swd;
      a.last = b.last;
      blocks.pop_back();
    }
  }
  for (const auto& b : blocks) {
    double y = b.swd / b.sw;
    for (size_t i = b.first; i <= b.last; ++i) x[i] = y + c[i];
  }
}

class ClusterLayout {
 public:
  ClusterLayout(Cluster& c, const LayoutOptions& opt) : c_(c), opt_(opt) {}

  void run() {
    if (c_.v.empty()) {
      c_.width = c_.height = 0;
      return;
    }
    breakCycles();
    assignLayers();
    addDummies();
    buildSegments();
    order();
    coordinates();
    verticals();
    routes();
  }

 private:
  Cluster& c_;
  const LayoutOptions& opt_;
  std::vector<std::vector<int>> out_, in_;  // LEdge indices per vertex (layered direction)
  std::vector<std::vector<int>> layers_;
  std::vector<std::vector<Seg>> up_, down_;
  std::vector<double> layer_top_, layer_h_;

  void adjacency() {
    size_t n = c_.v.size();
    out_.assign(n, {});
    in_.assign(n, {});
    for (size_t i = 0; i < c_.e.size(); ++i) {
      out_[c_.e[i].u].push_back(static_cast<int>(i));
      in_[c_.e[i].v].push_back(static_cast<int>(i));
    }
  }

  void breakCycles() {
    adjacency();
    size_t n = c_.v.size();
    std::vector<uint8_t> state(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<std::pair<int, size_t>> stack;
    std::vector<int> flip;
    for (size_t s = 0; s < n; ++s) {
      if (state[s]) continue;
      stack.push_back({static_cast<int>(s), 0});
      state[s] = 1;
      while (!stack.empty()) {
        auto& [u, k] = stack.back();
        if (k < out_[u].size()) {
          int ei = out_[u][k++];
          int w = c_.e[ei].v;
          if (state[w] == 1) {
            flip.push_back(ei);
          } else if (state[w] == 0) {
            state[w] = 1;
            stack.push_back({w, 0});
          }
        } else {
          state[u] = 2;
          stack.pop_back();
        }
      }
    }
    for (int ei : flip) {
      LEdge& e = c_.e[ei];
      std::swap(e.u, e.v);
      e.reversed = true;
      e.u_off = e.v_off = 0;  // port offsets belong to the other direction; attach at centres
    }
    if (!flip.empty()) adjacency();
  }

  void assignLayers() {
    size_t n = c_.v.size();
    std::vector<int> indeg(n, 0), topo;
    topo.reserve(n);
    for (const auto& e : c_.e) ++indeg[e.v];
    for (size_t i = 0; i < n; ++i)
      if (indeg[i] == 0) topo.push_back(static_cast<int>(i));
    for (size_t head = 0; head < topo.size(); ++head) {
      int u = topo[head];
      for (int ei : out_[u]) {
        int w = c_.e[ei].v;
        c_.v[w].layer = std::max(c_.v[w].layer, c_.v[u].layer + 1);
        if (--indeg[w] == 0) topo.push_back(w);
      }
    }
    // Sources other than entry ports sit just above their first consumer.
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      Vertex& x = c_.v[*it];
      if (!in_[*it].empty() || out_[*it].empty() || x.kind == VKind::InPort) continue;
      int lo = INT32_MAX;
      for (int ei : out_[*it]) lo = std::min(lo, c_.v[c_.e[ei].v].layer);
      x.layer = std::max(x.layer, lo - 1);
    }
    int top = INT32_MAX, last = 0;
    for (const auto& x : c_.v) top = std::min(top, x.layer);
    for (auto& x : c_.v) x.layer -= top;
    for (const auto& x : c_.v)
      if (x.kind != VKind::OutPort) last = std::max(last, x.layer);
    for (auto& x : c_.v) {
      if (x.kind == VKind::OutPort) x.layer = last + 1;
      if (x.kind == VKind::InPort) x.layer = 0;
    }
  }

  void addDummies() {
    for (size_t i = 0; i < c_.e.size(); ++i) {
      LEdge& e = c_.e[i];
      int a = c_.v[e.u].layer, b = c_.v[e.v].layer;
      for (int l = a + 1; l < b; ++l) {
        Vertex d;
        d.kind = VKind::Dummy;
        d.ref = static_cast<int>(i);
        d.layer = l;
        e.chain.push_back(static_cast<int>(c_.v.size()));
        c_.v.push_back(d);
      }
    }
    int nl = 0;
    for (const auto& x : c_.v) nl = std::max(nl, x.layer + 1);
    c_.layers = nl;
  }

  void buildSegments() {
    size_t n = c_.v.size();
    up_.assign(n, {});
    down_.assign(n, {});
    for (const auto& e : c_.e) {
      std::vector<int> path;
      path.reserve(e.chain.size() + 2);
      path.push_back(e.u);
      path.insert(path.end(), e.chain.begin(), e.chain.end());
      path.push_back(e.v);
      double wv = static_cast<double>(std::max<size_t>(1, e.values.size()));
      wv = 1 + std::log2(wv);
      for (size_t k = 0; k + 1 < path.size(); ++k) {
        int a = path[k], b = path[k + 1];
        double w = wv * omega(c_.v[a].kind, c_.v[b].kind);
        double oa = k == 0 ? e.u_off : 0;
        double ob = k + 2 == path.size() ? e.v_off : 0;
        down_[a].push_back({b, w, oa, ob});
        up_[b].push_back({a, w, ob, oa});
      }
    }
  }

  // ---- ordering
  int countCrossings(size_t l) const {
    // Segments between layers l and l+1, counted by inversions (Fenwick tree).
    const auto& top = layers_[l];
    const auto& bottom = layers_[l + 1];
    std::vector<std::pair<int, int>> segs;
    for (int a : top)
      for (const Seg& s : down_[a]) segs.push_back({c_.v[a].pos, c_.v[s.to].pos});
    if (segs.size() < 2) return 0;
    std::sort(segs.begin(), segs.end());
    std::vector<int> tree(bottom.size() + 1, 0);
    long long crossings = 0;
    int seen = 0;
    for (const auto& [pa, pb] : segs) {
      int le = 0;
      for (int i = pb + 1; i > 0; i -= i & -i) le += tree[i];
      crossings += seen - le;
      for (int i = pb + 1; i < static_cast<int>(tree.size()); i += i & -i) ++tree[i];
      ++seen;
    }
    return static_cast<int>(std::min<long long>(crossings, INT32_MAX));
  }

  int totalCrossings() const {
    long long t = 0;
    for (size_t l = 0; l + 1 < layers_.size(); ++l) t += countCrossings(l);
    return static_cast<int>(std::min<long long>(t, INT32_MAX));
  }

  void order() {
    layers_.assign(c_.layers, {});
    // Initial order: depth-first discovery along the edges, which keeps chains together.
    size_t n = c_.v.size();
    std::vector<char> seen(n, 0);
    std::vector<int> stack;
    for (size_t s = 0; s < n; ++s) {
      if (seen[s] || !up_[s].empty()) continue;
      stack.push_back(static_cast<int>(s));
      while (!stack.empty()) {
        int x = stack.back();
        stack.pop_back();
        if (seen[x]) continue;
        seen[x] = 1;
        layers_[c_.v[x].layer].push_back(x);
        const auto& d = down_[x];
        for (auto it = d.rbegin(); it != d.rend(); ++it)
          if (!seen[it->to]) stack.push_back(it->to);
      }
    }
    for (size_t s = 0; s < n; ++s)
      if (!seen[s]) layers_[c_.v[s].layer].push_back(static_cast<int>(s));
    for (auto& layer : layers_)
      for (size_t i = 0; i < layer.size(); ++i) c_.v[layer[i]].pos = static_cast<int>(i);

    // Barycenter keys compare positions across layers of different sizes: use fractional
    // positions (pos scaled into [0, 1) of the layer) for the neighbour side.
    int best = totalCrossings();
    std::vector<std::vector<int>> best_layers = layers_;
    int stale = 0;
    int sweeps = 0;
    for (int s = 0; s < opt_.max_sweeps && best > 0 && stale < 3; ++s) {
      ++sweeps;
      for (size_t l = 1; l < layers_.size(); ++l) sweepLayer(l, up_, layers_[l - 1].size());
      for (size_t l = layers_.size() - 1; l-- > 0;) sweepLayer(l, down_, layers_[l + 1].size());
      int cr = totalCrossings();
      if (cr < best) {
        best = cr;
        best_layers = layers_;
        stale = 0;
      } else {
        ++stale;
      }
    }
    layers_ = std::move(best_layers);
    for (auto& layer : layers_)
      for (size_t i = 0; i < layer.size(); ++i) c_.v[layer[i]].pos = static_cast<int>(i);
    c_.crossings = best;
    c_.sweeps = sweeps;
  }

  void sweepLayer(size_t l, const std::vector<std::vector<Seg>>& nb, size_t other_size) {
    auto& layer = layers_[l];
    if (layer.size() < 2) return;
    double scale_self = static_cast<double>(layer.size());
    double scale_other = static_cast<double>(std::max<size_t>(other_size, 1));
    std::vector<std::pair<double, int>> keyed;
    keyed.reserve(layer.size());
    for (int x : layer) {
      double key = (c_.v[x].pos + 0.5) / scale_self;
      const auto& s = nb[x];
      if (!s.empty()) {
        double sw = 0, swp = 0;
        for (const Seg& g : s) {
          sw += g.w;
          swp += g.w * (c_.v[g.to].pos + 0.5) / scale_other;
        }
        key = swp / sw;
      }
      keyed.push_back({key, x});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keyed.size(); ++i) {
      layer[i] = keyed[i].second;
      c_.v[layer[i]].pos = static_cast<int>(i);
    }
  }

  // ---- coordinates
  double gapBetween(const Vertex& a, const Vertex& b) const {
    auto sep = [&](const Vertex& x) {
      return (x.kind == VKind::Dummy || x.kind == VKind::InPort || x.kind == VKind::OutPort) ? opt_.thin_sep
                                                                                              : opt_.node_sep;
    };
    return a.right + (sep(a) + sep(b)) / 2 + b.left;
  }

  void placeLayer(const std::vector<int>& layer, bool use_up, bool use_down) {
    size_t n = layer.size();
    if (n == 0) return;
    std::vector<double> d(n), w(n), gap(n > 0 ? n - 1 : 0), x;
    for (size_t i = 0; i < n; ++i) {
      const Vertex& me = c_.v[layer[i]];
      double sw = 0, swx = 0;
      auto add = [&](const std::vector<Seg>& segs) {
        for (const Seg& s : segs) {
          sw += s.w;
          swx += s.w * (c_.v[s.to].x + s.off_other - s.off_self);
        }
      };
      if (use_up) add(up_[layer[i]]);
      if (use_down) add(down_[layer[i]]);
      if (sw > 0) {
        d[i] = swx / sw;
        w[i] = sw;
      } else {
        d[i] = me.x;
        w[i] = 1e-3;
      }
      if (i + 1 < n) gap[i] = gapBetween(me, c_.v[layer[i + 1]]);
    }
    isotonic(d, w, gap, x);
    for (size_t i = 0; i < n; ++i) c_.v[layer[i]].x = x[i];
  }

  void coordinates() {
    for (auto& layer : layers_) {
      double at = 0;
      for (size_t i = 0; i < layer.size(); ++i) {
        Vertex& me = c_.v[layer[i]];
        if (i > 0) at += gapBetween(c_.v[layer[i - 1]], me);
        me.x = at;
      }
      double mid = at / 2;
      for (int x : layer) c_.v[x].x -= mid;
    }
    for (int pass = 0; pass < opt_.coordinate_passes; ++pass) {
      if (pass % 2 == 0) {
        for (size_t l = 1; l < layers_.size(); ++l) placeLayer(layers_[l], true, false);
      } else {
        for (size_t l = layers_.size() - 1; l-- > 0;) placeLayer(layers_[l], false, true);
      }
    }
    for (size_t l = 0; l < layers_.size(); ++l) placeLayer(layers_[l], true, true);

    double lo = INFINITY, hi = -INFINITY;
    for (const auto& x : c_.v) {
      lo = std::min(lo, x.x - x.left);
      hi = std::max(hi, x.x + x.right);
    }
    for (auto& x : c_.v) x.x -= lo;
    c_.width = hi - lo;
  }

  void verticals() {
    size_t nl = layers_.size();
    layer_top_.assign(nl, 0);
    layer_h_.assign(nl, 0);
    std::vector<char> thin(nl, 1);
    for (size_t l = 0; l < nl; ++l)
      for (int x : layers_[l]) {
        layer_h_[l] = std::max(layer_h_[l], c_.v[x].height);
        VKind k = c_.v[x].kind;
        if (k != VKind::Dummy && k != VKind::InPort && k != VKind::OutPort) thin[l] = 0;
      }
    double y = 0;
    for (size_t l = 0; l < nl; ++l) {
      if (l > 0) y += (thin[l] || thin[l - 1]) ? opt_.layer_sep * 0.6 : opt_.layer_sep;
      layer_top_[l] = y;
      y += layer_h_[l];
    }
    c_.height = y;
    for (auto& x : c_.v) {
      x.y = layer_top_[x.layer] + (layer_h_[x.layer] - x.height) / 2;
      if (x.kind == VKind::OutPort) x.y = c_.height;
      if (x.kind == VKind::InPort) x.y = 0;
    }
  }

  double boxTop(const Vertex& x) const {
    return x.kind == VKind::Item ? x.y + (x.height - x.box_h) / 2 : x.y;
  }
  double boxBottom(const Vertex& x) const {
    if (x.kind == VKind::Item) return boxTop(x) + x.box_h;
    return x.y + x.height;
  }

  void routes() {
    // Where edges enter an item: spread over its top edge, ordered by where they come from.
    std::vector<double> enter_off(c_.e.size(), 0);
    for (size_t vi = 0; vi < c_.v.size(); ++vi) {
      const Vertex& t = c_.v[vi];
      if (t.kind != VKind::Item || in_[vi].size() < 2) continue;
      std::vector<std::pair<double, int>> from;
      for (int ei : in_[vi]) {
        const LEdge& e = c_.e[ei];
        double fx = e.chain.empty() ? c_.v[e.u].x + e.u_off : c_.v[e.chain.back()].x;
        from.push_back({fx, ei});
      }
      std::sort(from.begin(), from.end());
      double span = std::min(t.box_w * 0.6, 14.0 * (from.size() - 1));
      for (size_t k = 0; k < from.size(); ++k)
        enter_off[from[k].second] = -span / 2 + span * k / (from.size() - 1);
    }
    for (size_t i = 0; i < c_.e.size(); ++i) {
      LEdge& e = c_.e[i];
      const Vertex& a = c_.v[e.u];
      const Vertex& b = c_.v[e.v];
      e.points.clear();
      e.points.push_back({a.x + e.u_off, boxBottom(a)});
      for (int d : e.chain) {
        const Vertex& dv = c_.v[d];
        e.points.push_back({dv.x, layer_top_[dv.layer]});
        e.points.push_back({dv.x, layer_top_[dv.layer] + layer_h_[dv.layer]});
      }
      double off = b.kind == VKind::Item ? enter_off[i] : e.v_off;
      e.points.push_back({b.x + off, boxTop(b)});
    }
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------

int GraphLayout::itemOfNode(int node_id) const {
  auto it = node_index.find(node_id);
  return it == node_index.end() ? -1 : node_item[it->second];
}

int GraphLayout::groupOfNode(int node_id) const {
  auto it = node_index.find(node_id);
  return it == node_index.end() ? -1 : node_group[it->second];
}

std::vector<std::string> GraphLayout::groupPathsOfNode(int node_id) const {
  std::vector<std::string> chain;
  for (int gi = groupOfNode(node_id); gi >= 0; gi = groups[gi].parent) chain.push_back(groups[gi].path);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

int GraphLayout::itemOfEdgeTerminal(int edge_id, bool output) const {
  LayoutItemKind k = output ? LayoutItemKind::Output : LayoutItemKind::Input;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].kind == k && items[i].id == edge_id) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> modulePathPrefixes(const GraphView& graph) {
  std::set<std::string> seen;
  for (const auto& n : graph.nodes) {
    const std::string& p = n.module_path;
    for (size_t dot = p.find('.'); dot != std::string::npos; dot = p.find('.', dot + 1))
      if (dot > 0) seen.insert(p.substr(0, dot));
    if (!p.empty()) seen.insert(p);
  }
  return {seen.begin(), seen.end()};
}

GraphLayout layoutGraph(const GraphView& graph, const LayoutOptions& opt, const LayoutMeasureFn& measure) {
  auto t0 = std::chrono::steady_clock::now();
  GraphLayout out;
  Prep p;
  prepare(graph, opt, p);
  out.node_index = p.node_index;
  out.node_item.assign(p.n, -1);
  out.node_group.assign(p.n, -1);

  GroupBuilder gb(graph, p, opt);
  gb.run();
  auto& inst = gb.inst;

  // Output groups in pre-order; collapse and visibility top-down.
  std::vector<int> pre;
  {
    std::vector<int> stack{0};
    while (!stack.empty()) {
      int gi = stack.back();
      stack.pop_back();
      if (gi != 0) pre.push_back(gi);
      const auto& kids = inst[gi].children;
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
    }
  }
  for (int gi : pre) {
    GInst& g = inst[gi];
    const GInst& par = inst[g.parent];
    g.visible = g.parent == 0 || (par.visible && !par.collapsed);
    g.collapsed = opt.collapsed.count(g.path) > 0;
    g.out = static_cast<int>(out.groups.size());
    LayoutGroup lg;
    lg.path = g.path;
    const std::string& pp = par.path;
    lg.label = (!pp.empty() && g.path.size() > pp.size() + 1 && g.path.compare(0, pp.size(), pp) == 0 &&
                g.path[pp.size()] == '.')
                   ? g.path.substr(pp.size() + 1)
                   : g.path;
    lg.parent = g.parent == 0 ? -1 : inst[g.parent].out;
    lg.depth = g.parent == 0 ? 0 : out.groups[lg.parent].depth + 1;
    lg.node_count = g.total;
    lg.collapsed = g.collapsed;
    lg.visible = g.visible;
    if (lg.parent >= 0) out.groups[lg.parent].children.push_back(g.out);
    out.groups.push_back(std::move(lg));
  }
  std::vector<int> node_inst(p.n, -1);
  for (size_t gi = 0; gi < inst.size(); ++gi)
    if (inst[gi].alive)
      for (int v : inst[gi].direct) node_inst[v] = static_cast<int>(gi);
  for (int v = 0; v < p.n; ++v) out.node_group[v] = node_inst[v] > 0 ? inst[node_inst[v]].out : -1;

  // Clusters: the top level and every visible expanded group.
  std::vector<Cluster> cl(1);
  inst[0].cluster = 0;
  for (int gi : pre) {
    GInst& g = inst[gi];
    if (!g.visible || g.collapsed) continue;
    g.cluster = static_cast<int>(cl.size());
    cl.emplace_back();
    cl.back().group = gi;
    cl.back().parent_cluster = inst[g.parent].cluster;
  }

  auto measureItem = [&](const LayoutItem& it) -> LayoutSize {
    const LayoutGroup* grp = it.kind == LayoutItemKind::Group ? &out.groups[it.id] : nullptr;
    if (measure) return measure(it, grp);
    switch (it.kind) {
      case LayoutItemKind::Node: return opt.default_node_size;
      case LayoutItemKind::Group: return opt.default_group_size;
      default: return opt.default_terminal_size;
    }
  };

  // Stubs per consumer node.
  std::vector<std::vector<int>> node_stubs(p.n);
  for (int v = 0; v < p.n; ++v) {
    if (p.node_const[v]) continue;
    for (int e : p.node_in[v])
      if (p.edge_stub[e]) node_stubs[v].push_back(e);
  }
  auto stubExtent = [&](size_t count, double box_h, double& width, double& height) {
    size_t k = std::min<size_t>(count, static_cast<size_t>(std::max(1, opt.max_stubs_per_node)));
    if (k == 0) {
      width = height = 0;
      return;
    }
    size_t rows = std::max<size_t>(1, static_cast<size_t>((box_h + opt.stub_gap) / (opt.stub_size.h + opt.stub_gap)));
    rows = std::min(rows, k);
    size_t cols = (k + rows - 1) / rows;
    width = cols * opt.stub_size.w + (cols - 1) * opt.stub_gap + opt.stub_gap;
    height = rows * opt.stub_size.h + (rows - 1) * opt.stub_gap;
  };

  // Items and their vertices, in node order so each cluster's vertices start out topological.
  std::vector<int> item_cluster, item_vertex;
  auto addItem = [&](LayoutItemKind kind, int id, int cluster, int group_out, size_t stubs) {
    LayoutItem it;
    it.kind = kind;
    it.id = id;
    it.group = group_out;
    LayoutSize s = measureItem(it);
    it.rect.w = s.w;
    it.rect.h = s.h;
    int idx = static_cast<int>(out.items.size());
    out.items.push_back(it);
    Vertex x;
    x.kind = VKind::Item;
    x.ref = idx;
    x.box_w = s.w;
    x.box_h = s.h;
    double sw = 0, sh = 0;
    stubExtent(stubs, s.h, sw, sh);
    x.left = s.w / 2 + sw;
    x.right = s.w / 2;
    x.height = std::max(s.h, sh);
    Cluster& c = cl[cluster];
    item_cluster.push_back(cluster);
    item_vertex.push_back(static_cast<int>(c.v.size()));
    c.v.push_back(x);
    return idx;
  };
  // Makes sure the compound vertices of the group chain above `gi` exist.
  std::function<void(int)> ensureCompound = [&](int gi) {
    GInst& g = inst[gi];
    if (gi == 0 || g.cluster < 0) return;
    Cluster& self = cl[g.cluster];
    if (self.parent_vertex >= 0) return;
    ensureCompound(g.parent);
    Cluster& par = cl[self.parent_cluster];
    Vertex x;
    x.kind = VKind::Compound;
    x.ref = gi;
    self.parent_vertex = static_cast<int>(par.v.size());
    par.v.push_back(x);
  };

  std::vector<int> input_item(p.m, -1), output_item(p.m, -1);
  for (int eid : graph.inputs) {
    auto it = p.edge_index.find(eid);
    if (it == p.edge_index.end()) continue;
    int e = it->second;
    if (graph.edges[e].is_initializer || p.edge_const[e] || input_item[e] >= 0) continue;
    if (isModuleObjectType(graph.edges[e].type)) continue;
    input_item[e] = addItem(LayoutItemKind::Input, eid, 0, -1, 0);
  }
  for (int v = 0; v < p.n; ++v) {
    if (p.node_const[v]) continue;
    int gi = node_inst[v];
    int top_collapsed = -1;
    for (int a = gi; a > 0; a = inst[a].parent)
      if (inst[a].collapsed) top_collapsed = a;
    if (top_collapsed > 0) {
      GInst& cg = inst[top_collapsed];
      if (cg.item < 0) {
        int pc = inst[cg.parent].cluster;
        ensureCompound(cg.parent);
        cg.item = addItem(LayoutItemKind::Group, cg.out, pc, cg.parent > 0 ? inst[cg.parent].out : -1, 0);
        out.groups[cg.out].item = cg.item;
      }
      out.node_item[v] = cg.item;
    } else {
      int c = gi > 0 ? inst[gi].cluster : 0;
      ensureCompound(gi);
      out.node_item[v] = addItem(LayoutItemKind::Node, graph.nodes[v].id, c, gi > 0 ? inst[gi].out : -1,
                                 node_stubs[v].size());
    }
  }
  for (int eid : graph.outputs) {
    auto it = p.edge_index.find(eid);
    if (it == p.edge_index.end() || output_item[it->second] >= 0) continue;
    output_item[it->second] = addItem(LayoutItemKind::Output, eid, 0, -1, 0);
  }

  // Cluster of each item's parent chain; LCA walk by cluster depth.
  std::vector<int> cdepth(cl.size(), 0);
  for (size_t c = 1; c < cl.size(); ++c) cdepth[c] = cdepth[cl[c].parent_cluster] + 1;

  // Registers value e from item s to item t as local edges along the cluster chain.
  struct Step {
    int cluster, edge;
  };
  std::vector<std::vector<Step>> route_steps;
  auto localEdge = [&](int c, int a, int b, int e) {
    Cluster& cc = cl[c];
    uint64_t key = pairKey(a, b);
    auto [it, fresh] = cc.edge_of.emplace(key, static_cast<int>(cc.e.size()));
    if (fresh) {
      LEdge le;
      le.u = a;
      le.v = b;
      cc.e.push_back(le);
    }
    LEdge& le = cc.e[it->second];
    if (le.values.empty() || le.values.back() != e) le.values.push_back(e);
    return Step{c, it->second};
  };
  auto port = [&](int c, int e, bool in) {
    Cluster& cc = cl[c];
    auto& map = in ? cc.in_port : cc.out_port;
    auto [it, fresh] = map.emplace(e, static_cast<int>(cc.v.size()));
    if (fresh) {
      Vertex x;
      x.kind = in ? VKind::InPort : VKind::OutPort;
      x.ref = e;
      cc.v.push_back(x);
    }
    return it->second;
  };
  std::vector<int> targets_done;  // of the current value (consumers in one collapsed group)
  auto connect = [&](int e, int s, int t) {
    if (s < 0 || t < 0 || s == t) return;
    if (std::find(targets_done.begin(), targets_done.end(), t) != targets_done.end()) return;
    targets_done.push_back(t);
    int cs = item_cluster[s], ct = item_cluster[t];
    std::vector<Step> steps, down;
    int a = item_vertex[s], b = item_vertex[t];
    int xs = cs, xt = ct;
    // Climb the deeper side until both sit in the same cluster.
    std::vector<std::pair<int, int>> down_chain;  // (cluster, vertex of t's side inside it)
    while (xs != xt) {
      if (cdepth[xs] >= cdepth[xt]) {
        int op = port(xs, e, false);
        steps.push_back(localEdge(xs, a, op, e));
        a = cl[xs].parent_vertex;
        xs = cl[xs].parent_cluster;
      } else {
        down_chain.push_back({xt, b});
        b = cl[xt].parent_vertex;
        xt = cl[xt].parent_cluster;
      }
    }
    steps.push_back(localEdge(xs, a, b, e));
    for (auto it = down_chain.rbegin(); it != down_chain.rend(); ++it) {
      int ip = port(it->first, e, true);
      steps.push_back(localEdge(it->first, ip, it->second, e));
    }
    LayoutRoute r;
    r.edge = p.edge_id[e];
    r.from = s;
    r.to = t;
    out.routes.push_back(std::move(r));
    route_steps.push_back(std::move(steps));
  };
  for (int e = 0; e < p.m; ++e) {
    int s = p.producer[e] >= 0 ? out.node_item[p.producer[e]] : input_item[e];
    if (s < 0) continue;
    targets_done.clear();
    if (!p.edge_stub[e])
      for (int v : p.consumers[e])
        if (!p.node_const[v]) connect(e, s, out.node_item[v]);
    if (output_item[e] >= 0) connect(e, s, output_item[e]);
  }

  // Lay out clusters children first; a child's frame size feeds its compound vertex.
  const double pad = opt.group_padding;
  std::vector<int> post;
  {
    std::vector<std::pair<int, bool>> stack{{0, false}};
    std::vector<std::vector<int>> kids(cl.size());
    for (size_t c = 1; c < cl.size(); ++c) kids[cl[c].parent_cluster].push_back(static_cast<int>(c));
    while (!stack.empty()) {
      auto [c, expanded] = stack.back();
      stack.pop_back();
      if (expanded) {
        post.push_back(c);
        continue;
      }
      stack.push_back({c, true});
      for (int k : kids[c]) stack.push_back({k, false});
    }
  }
  auto portOffset = [&](int child_cluster, int e, bool in) -> double {
    const Cluster& ch = cl[child_cluster];
    const auto& map = in ? ch.in_port : ch.out_port;
    auto it = map.find(e);
    if (it == map.end()) return 0;
    return pad + ch.content_dx + ch.v[it->second].x - ch.box_w / 2;
  };
  for (int c : post) {
    Cluster& cc = cl[c];
    for (auto& x : cc.v) {
      if (x.kind != VKind::Compound) continue;
      const Cluster& ch = cl[inst[x.ref].cluster];
      x.left = x.right = ch.box_w / 2;
      x.height = ch.box_h;
    }
    for (auto& le : cc.e) {
      auto avg = [&](int vert, bool in) {
        const Vertex& x = cc.v[vert];
        if (x.kind != VKind::Compound || le.values.empty()) return 0.0;
        double s = 0;
        for (int e : le.values) s += portOffset(inst[x.ref].cluster, e, in);
        return s / le.values.size();
      };
      le.u_off = avg(le.u, false);
      le.v_off = avg(le.v, true);
    }
    ClusterLayout(cc, opt).run();
    out.stats.layers += cc.layers;
    out.stats.crossings += cc.crossings;
    out.stats.sweeps += cc.sweeps;
    for (const auto& x : cc.v) out.stats.dummies += x.kind == VKind::Dummy ? 1 : 0;
    if (cc.group >= 0) {
      LayoutItem probe;
      probe.kind = LayoutItemKind::Group;
      probe.id = inst[cc.group].out;
      double min_w = measureItem(probe).w;
      double inner_w = cc.width + 2 * pad;
      cc.box_w = std::max(inner_w, min_w);
      cc.content_dx = (cc.box_w - inner_w) / 2;
      cc.box_h = opt.group_header + cc.height + 2 * pad;
    }
  }
  out.stats.clusters = static_cast<int>(cl.size());

  // Global placement, top-down (pre-order is the reverse of post-order).
  for (auto it = post.rbegin(); it != post.rend(); ++it) {
    Cluster& cc = cl[*it];
    if (cc.group >= 0) {
      const Cluster& par = cl[cc.parent_cluster];
      const Vertex& x = par.v[cc.parent_vertex];
      LayoutRect frame{par.origin.x + x.x - x.left, par.origin.y + x.y, cc.box_w, cc.box_h};
      out.groups[inst[cc.group].out].rect = frame;
      cc.origin = {frame.x + pad + cc.content_dx, frame.y + opt.group_header + pad};
    }
    for (const auto& x : cc.v) {
      if (x.kind != VKind::Item) continue;
      LayoutItem& it = out.items[x.ref];
      it.rect.x = cc.origin.x + x.x - x.box_w / 2;
      it.rect.y = cc.origin.y + x.y + (x.height - x.box_h) / 2;
      it.layer = x.layer;
      if (it.kind == LayoutItemKind::Group) out.groups[it.id].rect = it.rect;
    }
  }

  // Stubs, in columns to the left of their node, nearest column first.
  for (int v = 0; v < p.n; ++v) {
    if (node_stubs[v].empty() || out.node_item[v] < 0) continue;
    const LayoutItem& it = out.items[out.node_item[v]];
    if (it.kind != LayoutItemKind::Node) continue;
    const auto& list = node_stubs[v];
    size_t cap = static_cast<size_t>(std::max(1, opt.max_stubs_per_node));
    size_t k = std::min(list.size(), cap);
    double sw = 0, sh = 0;
    stubExtent(k, it.rect.h, sw, sh);
    size_t rows = std::max<size_t>(1, static_cast<size_t>((it.rect.h + opt.stub_gap) / (opt.stub_size.h + opt.stub_gap)));
    rows = std::min(rows, k);
    double top = it.rect.centerY() - sh / 2;
    for (size_t i = 0; i < k; ++i) {
      size_t col = i / rows, row = i % rows;
      LayoutStub s;
      s.edge = p.edge_id[list[i]];
      s.node = p.producer[list[i]] >= 0 && p.node_const[p.producer[list[i]]] ? graph.nodes[p.producer[list[i]]].id : -1;
      s.item = out.node_item[v];
      if (i + 1 == k && list.size() > k) s.folded = static_cast<int>(list.size() - k);
      s.rect = {it.rect.x - opt.stub_gap - (col + 1) * opt.stub_size.w - col * opt.stub_gap,
                top + row * (opt.stub_size.h + opt.stub_gap), opt.stub_size.w, opt.stub_size.h};
      out.stubs.push_back(s);
    }
  }

  // Routes: concatenate the local pieces, translated, in the value's direction.
  for (size_t r = 0; r < out.routes.size(); ++r) {
    auto& pts = out.routes[r].points;
    for (const Step& st : route_steps[r]) {
      const Cluster& cc = cl[st.cluster];
      const LEdge& le = cc.e[st.edge];
      auto add = [&](const LayoutPoint& q) {
        LayoutPoint g{cc.origin.x + q.x, cc.origin.y + q.y};
        if (!pts.empty() && std::abs(pts.back().x - g.x) < 0.01 && std::abs(pts.back().y - g.y) < 0.01) return;
        pts.push_back(g);
      };
      if (le.reversed) {
        out.routes[r].reversed = true;
        for (auto it = le.points.rbegin(); it != le.points.rend(); ++it) add(*it);
      } else {
        for (const auto& q : le.points) add(q);
      }
    }
  }

  // Bounds.
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
  auto grow = [&](const LayoutRect& r) {
    x0 = std::min(x0, r.x);
    y0 = std::min(y0, r.y);
    x1 = std::max(x1, r.right());
    y1 = std::max(y1, r.bottom());
  };
  for (const auto& it : out.items) grow(it.rect);
  for (const auto& s : out.stubs) grow(s.rect);
  for (const auto& g : out.groups)
    if (g.visible) grow(g.rect);
  if (x0 <= x1) out.bounds = {x0, y0, x1 - x0, y1 - y0};

  out.stats.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace oxport
