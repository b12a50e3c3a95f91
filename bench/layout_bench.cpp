// Layout benchmark: lays out a graph with oxport's layoutGraph and writes what it drew, so that the
// harness can lay out the same drawn graph with Graphviz dot and count crossings the same way.
//
// usage: oxport-bench-layout synthetic BLOCKS [--mask] OUT_PREFIX [--runs N]
//        oxport-bench-layout model MODEL.pt D0xD1x... OUT_PREFIX [--runs N]
//
// Writes OUT_PREFIX.json (graph size, layout times of each run, layoutGraph's own statistics, the
// routed polylines) and OUT_PREFIX.dot (the drawn items as fixed-size boxes, the routed edges
// between them; stubs are not edges in either layout).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "oxport/layout.h"
#include "oxport/model.h"

namespace {

using oxport::GraphView;
using oxport::GraphViewEdge;
using oxport::GraphViewNode;

// A transformer-like DAG built by hand: per block a pre-norm attention with Q/K/V projections,
// head reshapes, masked softmax and an output projection, then an MLP; residual adds between.
class Builder {
 public:
  GraphView g;

  int value(const std::string& name, bool initializer = false) {
    GraphViewEdge e;
    e.id = static_cast<int>(g.edges.size());
    e.name = name;
    e.type = initializer ? "Float(512, 512)" : "Float(1, 128, 512)";
    e.is_initializer = initializer;
    if (initializer) e.summary = "float32[512, 512]";
    g.edges.push_back(e);
    return e.id;
  }
  int input(const std::string& name) {
    int v = value(name);
    g.edges[static_cast<size_t>(v)].is_graph_input = true;
    g.inputs.push_back(v);
    return v;
  }
  int node(const std::string& op, const std::string& path, std::vector<int> inputs, int weights = 0) {
    GraphViewNode n;
    n.id = static_cast<int>(g.nodes.size());
    n.name = "%" + std::to_string(n.id);
    n.op = op;
    n.module_path = path;
    for (int w = 0; w < weights; ++w) inputs.push_back(value(path + ".w" + std::to_string(w), true));
    for (int in : inputs) g.edges[static_cast<size_t>(in)].consumers.push_back(n.id);
    n.inputs = inputs;
    int out = value("v" + std::to_string(n.id));
    g.edges[static_cast<size_t>(out)].producer = n.id;
    n.outputs.push_back(out);
    g.nodes.push_back(n);
    return out;
  }
  void output(int v) {
    g.edges[static_cast<size_t>(v)].is_graph_output = true;
    g.outputs.push_back(v);
  }
};

GraphView transformer(int blocks, bool shared_mask) {
  Builder b;
  int x = b.input("input_ids");
  int mask = shared_mask ? b.input("attention_mask") : -1;
  x = b.node("aten::embedding", "embeddings", {x}, 1);
  x = b.node("aten::add", "embeddings", {x}, 1);
  for (int i = 0; i < blocks; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    const std::string a = p + ".self_attn";
    int h = b.node("aten::layer_norm", p + ".norm1", {x}, 2);
    auto head = [&](const std::string& proj) {
      int t = b.node("aten::linear", a + "." + proj, {h}, 2);
      t = b.node("aten::view", a, {t});
      return b.node("aten::transpose", a, {t});
    };
    int q = head("q_proj");
    int k = head("k_proj");
    int v = head("v_proj");
    q = b.node("aten::mul", a, {q});
    k = b.node("aten::transpose", a, {k});
    int s = b.node("aten::matmul", a, {q, k});
    s = shared_mask ? b.node("aten::add", a, {s, mask}) : b.node("aten::add", a, {s}, 1);
    s = b.node("aten::softmax", a, {s});
    s = b.node("aten::dropout", a + ".dropout", {s});
    int o = b.node("aten::matmul", a, {s, v});
    o = b.node("aten::transpose", a, {o});
    o = b.node("aten::contiguous", a, {o});
    o = b.node("aten::view", a, {o});
    o = b.node("aten::linear", a + ".out_proj", {o}, 2);
    o = b.node("aten::dropout", p + ".dropout1", {o});
    x = b.node("aten::add", p, {x, o});
    h = b.node("aten::layer_norm", p + ".norm2", {x}, 2);
    h = b.node("aten::linear", p + ".linear1", {h}, 2);
    h = b.node("aten::gelu", p + ".activation", {h});
    h = b.node("aten::dropout", p + ".dropout", {h});
    h = b.node("aten::linear", p + ".linear2", {h}, 2);
    h = b.node("aten::dropout", p + ".dropout2", {h});
    x = b.node("aten::add", p, {x, h});
    x = b.node("aten::mul", p, {x}, 1);  // layer scale
  }
  x = b.node("aten::layer_norm", "norm", {x}, 2);
  x = b.node("aten::linear", "head", {x}, 2);
  b.output(x);
  b.g.title = "synthetic";
  return b.g;
}

std::string jsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int runs = 5;
  bool mask = false;
  std::vector<std::string> pos;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--runs" && i + 1 < args.size()) runs = std::stoi(args[++i]);
    else if (args[i] == "--mask") mask = true;
    else pos.push_back(args[i]);
  }
  GraphView g;
  std::string prefix;
  double inspect_ms = 0;
  if (pos.size() == 3 && pos[0] == "synthetic") {
    g = transformer(std::stoi(pos[1]), mask);
    prefix = pos[2];
  } else if (pos.size() == 4 && pos[0] == "model") {
    auto t0 = std::chrono::steady_clock::now();
    auto m = oxport::Model::load(pos[1]);
    if (!m.ok()) {
      std::fprintf(stderr, "%s\n", m.error().message().c_str());
      return 1;
    }
    oxport::ExportOptions o;
    oxport::TensorSpec spec;
    std::stringstream ss(pos[2]);
    for (std::string d; std::getline(ss, d, 'x');) spec.shape.push_back(std::stoll(d));
    o.args.push_back(oxport::ArgValue::tensor(spec));
    auto v = m->inspect(o);
    if (!v.ok()) {
      std::fprintf(stderr, "%s\n", v.error().message().c_str());
      return 1;
    }
    g = std::move(*v);
    inspect_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    prefix = pos[3];
  } else {
    std::fprintf(stderr, "usage: %s synthetic BLOCKS [--mask] OUT_PREFIX | model MODEL.pt SHAPE OUT_PREFIX [--runs N]\n",
                 argv[0]);
    return 2;
  }

  oxport::GraphLayout layout;
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    layout = oxport::layoutGraph(g);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }

  std::ofstream js(prefix + ".json");
  js << "{\"nodes\": " << g.nodes.size() << ", \"edges\": " << g.edges.size() << ", \"inspect_ms\": " << inspect_ms
     << ", \"items\": " << layout.items.size() << ", \"routes\": " << layout.routes.size()
     << ", \"stubs\": " << layout.stubs.size() << ", \"layout_ms\": [";
  for (size_t i = 0; i < times.size(); ++i) js << (i ? ", " : "") << times[i];
  const auto& st = layout.stats;
  js << "], \"stats\": {\"clusters\": " << st.clusters << ", \"layers\": " << st.layers << ", \"dummies\": " << st.dummies
     << ", \"crossings\": " << st.crossings << ", \"sweeps\": " << st.sweeps << "}, \"polylines\": [";
  for (size_t i = 0; i < layout.routes.size(); ++i) {
    const auto& r = layout.routes[i];
    js << (i ? ",\n" : "\n") << "[" << r.from << ", " << r.to << ", [";
    for (size_t k = 0; k < r.points.size(); ++k) js << (k ? ", " : "") << r.points[k].x << ", " << r.points[k].y;
    js << "]]";
  }
  js << "]}\n";

  // The same drawn graph for dot: boxes of the same size (points -> inches), the same edges.
  std::ofstream dot(prefix + ".dot");
  dot << "digraph G {\n  node [shape=box, fixedsize=true, label=\"\"];\n";
  for (size_t i = 0; i < layout.items.size(); ++i) {
    const auto& it = layout.items[i];
    dot << "  n" << i << " [width=" << it.rect.w / 72.0 << ", height=" << it.rect.h / 72.0 << "];\n";
  }
  for (const auto& r : layout.routes) {
    if (r.reversed) dot << "  n" << r.to << " -> n" << r.from << " [dir=back];\n";
    else dot << "  n" << r.from << " -> n" << r.to << ";\n";
  }
  dot << "}\n";
  std::printf("%s: %zu nodes, %zu items, %zu routes, layout %.1f ms (first run), crossings %d\n", jsonEscape(prefix).c_str(),
              g.nodes.size(), layout.items.size(), layout.routes.size(), times.empty() ? 0.0 : times[0], st.crossings);
  return 0;
}
