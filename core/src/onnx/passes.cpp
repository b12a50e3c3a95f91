#include "onnx/passes.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace oxport::onnx_ir {

// Names a node's subgraphs (If branches, Loop bodies, nested) read: node inputs and graph outputs.
static void subgraphUses(const Node& n, const std::function<void(const std::string&)>& use) {
  for (const auto& a : n.attributes) {
    const auto* sg = std::get_if<std::shared_ptr<Graph>>(&a.value);
    if (!sg || !*sg) continue;
    for (const auto& sn : (*sg)->nodes) {
      for (const auto& i : sn.inputs)
        if (!i.empty()) use(i);
      subgraphUses(sn, use);
    }
    for (const auto& o : (*sg)->outputs) use(o.name);
  }
}

// Renames tensors read inside a node's subgraphs (outer values a branch or body uses).
static void renameInSubgraphs(Node& n, const std::unordered_map<std::string, std::string>& replace) {
  for (auto& a : n.attributes) {
    auto* sg = std::get_if<std::shared_ptr<Graph>>(&a.value);
    if (!sg || !*sg) continue;
    for (auto& sn : (*sg)->nodes) {
      for (auto& i : sn.inputs) {
        auto it = replace.find(i);
        if (it != replace.end()) i = it->second;
      }
      renameInSubgraphs(sn, replace);
    }
    for (auto& o : (*sg)->outputs) {
      auto it = replace.find(o.name);
      if (it != replace.end()) o.name = it->second;
    }
  }
}

static std::unordered_map<std::string, int> useCounts(const Graph& g) {
  std::unordered_map<std::string, int> uses;
  for (const auto& n : g.nodes) {
    for (const auto& i : n.inputs)
      if (!i.empty()) ++uses[i];
    subgraphUses(n, [&](const std::string& s) { ++uses[s]; });
  }
  for (const auto& o : g.outputs) ++uses[o.name];
  return uses;
}

int eliminateDeadNodes(Graph& g) {
  std::unordered_set<std::string> live;
  for (const auto& o : g.outputs) live.insert(o.name);
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const auto& n = g.nodes[k];
    bool used = false;
    for (const auto& o : n.outputs) used = used || live.count(o);
    if (!used) continue;
    keep[k] = true;
    for (const auto& i : n.inputs)
      if (!i.empty()) live.insert(i);
    subgraphUses(n, [&](const std::string& s) { live.insert(s); });
  }
  std::vector<Node> kept;
  int removed = 0;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (keep[k]) kept.push_back(std::move(g.nodes[k]));
    else ++removed;
  }
  g.nodes = std::move(kept);
  return removed;
}

int removeUnusedInitializers(Graph& g) {
  auto uses = useCounts(g);
  std::vector<Initializer> kept;
  int removed = 0;
  for (auto& init : g.initializers) {
    if (uses.count(init.name)) kept.push_back(std::move(init));
    else ++removed;
  }
  g.initializers = std::move(kept);
  return removed;
}

int constantsAsNodes(Graph& g, size_t max_bytes) {
  std::unordered_map<std::string, size_t> pending;  // initializer name -> index
  for (size_t i = 0; i < g.initializers.size(); ++i)
    if (!g.initializers[i].weight && !g.initializers[i].transposed_of && g.initializers[i].tensor.nbytes <= max_bytes)
      pending[g.initializers[i].name] = i;
  if (pending.empty()) return 0;
  std::vector<bool> moved(g.initializers.size(), false);
  std::unordered_set<std::string> node_names;
  for (const auto& n : g.nodes) node_names.insert(n.name);
  std::vector<Node> out;
  out.reserve(g.nodes.size() + pending.size());
  int made = 0;
  // Each constant goes right before its first user (a node, or the node whose subgraph reads
  // it), in that node's module scope, so previews and node names keep it where it is used.
  auto place = [&](const std::string& name, const Node& user) {
    auto it = pending.find(name);
    if (it == pending.end()) return;
    const size_t idx = it->second;
    pending.erase(it);
    moved[idx] = true;
    Node c;
    c.op_type = "Constant";
    const auto slash = user.name.rfind('/');
    const std::string prefix = slash == std::string::npos ? std::string() : user.name.substr(0, slash + 1);
    c.name = prefix + "Constant";
    for (int k = 1; node_names.count(c.name); ++k) c.name = prefix + "Constant_" + std::to_string(k);
    node_names.insert(c.name);
    c.outputs = {name};
    c.attributes.push_back({"value", std::move(g.initializers[idx].tensor)});
    c.origins = user.origins;
    c.module_path = user.module_path;
    c.location = user.location;
    out.push_back(std::move(c));
    ++made;
  };
  for (auto& n : g.nodes) {
    for (const auto& i : n.inputs)
      if (!i.empty()) place(i, n);
    subgraphUses(n, [&](const std::string& s) { place(s, n); });
    out.push_back(std::move(n));
  }
  g.nodes = std::move(out);
  std::vector<Initializer> kept;
  for (size_t i = 0; i < g.initializers.size(); ++i)
    if (!moved[i]) kept.push_back(std::move(g.initializers[i]));
  g.initializers = std::move(kept);
  return made;
}

void renameTensor(Graph& g, const std::string& from, const std::string& to) {
  const std::unordered_map<std::string, std::string> one{{from, to}};
  for (auto& n : g.nodes) {
    for (auto& i : n.inputs)
      if (i == from) i = to;
    for (auto& o : n.outputs)
      if (o == from) o = to;
    renameInSubgraphs(n, one);
  }
  for (auto& vi : g.inputs)
    if (vi.name == from) vi.name = to;
  for (auto& vi : g.outputs)
    if (vi.name == from) vi.name = to;
  for (auto& vi : g.value_info)
    if (vi.name == from) vi.name = to;
  for (auto& init : g.initializers)
    if (init.name == from) init.name = to;
}

int deduplicateInitializers(Graph& g, const CancelToken& cancel) {
  std::unordered_map<size_t, std::vector<size_t>> by_hash;
  std::unordered_map<std::string, std::string> replace;
  std::vector<Initializer> kept;
  // A transposed weight (bytes made as the file is written) is the same as another transposed
  // weight of the same source; it is compared with no tensor that has its bytes in memory.
  auto same = [](const Initializer& a, const Initializer& b) {
    if (a.weight != b.weight || !a.transposed_of != !b.transposed_of) return false;  // weights may become inputs
    if (!a.transposed_of) return a.tensor.sameContent(b.tensor);
    return a.transposed_of->data == b.transposed_of->data && a.transposed_of->dtype == b.transposed_of->dtype &&
           a.transposed_of->shape == b.transposed_of->shape;
  };
  // All hashes first, so that a cancel leaves the graph as it was. A tensor whose byte count no
  // other initializer shares has no duplicate: its bytes are not read (GPT-2's 200 MB embedding
  // was hashed for nothing).
  std::unordered_map<size_t, int> same_size;
  for (const auto& init : g.initializers) ++same_size[init.tensor.nbytes];
  std::vector<size_t> hashes;
  hashes.reserve(g.initializers.size());
  for (const auto& init : g.initializers) {
    if (cancel.cancelled()) return -1;
    if (same_size[init.tensor.nbytes] == 1) {
      hashes.push_back(hashes.size());  // unique: its own bucket
      continue;
    }
    if (init.transposed_of) {
      hashes.push_back(std::hash<const void*>{}(init.transposed_of->data) ^ 0x5bd1e995u);
    } else {
      std::string_view bytes(static_cast<const char*>(init.tensor.data), init.tensor.nbytes);
      hashes.push_back(std::hash<std::string_view>{}(bytes) ^ (static_cast<size_t>(init.tensor.dtype) << 1));
    }
  }
  for (size_t i = 0; i < g.initializers.size(); ++i) {
    auto& init = g.initializers[i];
    const size_t h = hashes[i];
    bool dup = false;
    for (size_t idx : by_hash[h]) {
      if (same(kept[idx], init)) {
        replace[init.name] = kept[idx].name;
        dup = true;
        break;
      }
    }
    if (dup) continue;
    by_hash[h].push_back(kept.size());
    kept.push_back(std::move(init));
  }
  if (replace.empty()) {
    g.initializers = std::move(kept);
    return 0;
  }
  g.initializers = std::move(kept);
  for (auto& n : g.nodes) {
    for (auto& i : n.inputs) {
      auto it = replace.find(i);
      if (it != replace.end()) i = it->second;
    }
    renameInSubgraphs(n, replace);
  }
  for (auto& o : g.outputs) {
    auto it = replace.find(o.name);
    if (it != replace.end()) o.name = it->second;
  }
  return static_cast<int>(replace.size());
}

// Removes the main graph's nodes for which `replacement` names the tensor that stands for the
// node's single output; later inputs (subgraphs' included) are renamed to it. Nodes whose output
// is a graph output are never removed. Returns the count removed.
static int replaceNodes(Graph& g, const std::function<std::optional<std::string>(Node&)>& replacement) {
  std::unordered_set<std::string> outputs;
  for (const auto& o : g.outputs) outputs.insert(o.name);
  std::unordered_map<std::string, std::string> replace;
  std::vector<Node> kept;
  int removed = 0;
  for (auto& n : g.nodes) {
    for (auto& i : n.inputs) {
      auto it = replace.find(i);
      if (it != replace.end()) i = it->second;
    }
    if (n.outputs.size() == 1 && !outputs.count(n.outputs[0]))
      if (auto r = replacement(n)) {
        if (*r != n.outputs[0]) replace[n.outputs[0]] = *r;
        ++removed;
        continue;
      }
    renameInSubgraphs(n, replace);
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  return removed;
}

int eliminateIdentities(Graph& g) {
  return replaceNodes(g, [](Node& n) -> std::optional<std::string> {
    if (n.op_type == "Identity" && n.domain.empty()) return n.inputs[0];
    return std::nullopt;
  });
}

int eliminateNoops(Graph& g) {
  // 0-d constants (not weights) by name, with their value; the floating ones apart.
  std::unordered_map<std::string, double> scalars;
  std::unordered_set<std::string> floating;
  for (const auto& i : g.initializers)
    if (!i.weight && i.tensor.shape.empty() && i.tensor.data && i.tensor.nbytes == dtypeSize(i.tensor.dtype) &&
        i.tensor.dtype != DType::Bool) {
      scalars[i.name] = i.tensor.at(0);
      if (isFloating(i.tensor.dtype)) floating.insert(i.name);
    }
  auto is = [&](const std::string& name, double v) {
    auto it = scalars.find(name);
    return it != scalars.end() && it->second == v;
  };
  int rewritten = 0;
  const int removed = replaceNodes(g, [&](Node& n) -> std::optional<std::string> {
    if (!n.domain.empty() || n.inputs.size() != 2) return std::nullopt;
    const std::string& a = n.inputs[0];
    const std::string& b = n.inputs[1];
    // A 0-d neutral operand broadcasts to the other's shape and dtype: x + 0, 0 + x, x - 0,
    // x * 1, 1 * x, x / 1 are x.
    if (n.op_type == "Add" && is(b, 0)) return a;
    if (n.op_type == "Add" && is(a, 0)) return b;
    if (n.op_type == "Sub" && is(b, 0)) return a;
    if (n.op_type == "Mul" && is(b, 1)) return a;
    if (n.op_type == "Mul" && is(a, 1)) return b;
    if (n.op_type == "Div" && is(b, 1)) return a;
    // 1 / x of a floating type is Reciprocal(x).
    if (n.op_type == "Div" && floating.count(a) && is(a, 1)) {
      n.op_type = "Reciprocal";
      n.inputs.erase(n.inputs.begin());
      ++rewritten;
    }
    return std::nullopt;
  });
  return removed + rewritten;
}

namespace {

// `t` converted to `to` element by element, as ONNX Cast does for these dtypes (floating to
// integer truncates toward zero), or nothing when the pair is not one handled here.
std::optional<HostTensor> castOnHost(const HostTensor& t, DType to) {
  auto ok = [](DType d) {
    return d == DType::Float32 || d == DType::Float64 || d == DType::Int64 || d == DType::Int32 || d == DType::Int8 ||
           d == DType::UInt8 || d == DType::Bool;
  };
  if (!ok(t.dtype) || !ok(to) || !t.data) return std::nullopt;
  const int64_t n = t.numel();
  if (static_cast<size_t>(n) * dtypeSize(t.dtype) != t.nbytes) return std::nullopt;
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * dtypeSize(to));
  for (int64_t i = 0; i < n; ++i) {
    const double v = t.at(i);
    if (!std::isfinite(v) && !isFloating(to)) return std::nullopt;
    if (to == DType::Int64 && std::fabs(v) > 9007199254740992.0) return std::nullopt;  // beyond exact doubles
    unsigned char* out = bytes.data() + static_cast<size_t>(i) * dtypeSize(to);
    auto put = [&](auto x) { std::memcpy(out, &x, sizeof x); };
    switch (to) {
      case DType::Float32: put(static_cast<float>(v)); break;
      case DType::Float64: put(v); break;
      case DType::Int64: put(static_cast<int64_t>(v)); break;
      case DType::Int32: put(static_cast<int32_t>(v)); break;
      case DType::Int8: put(static_cast<int8_t>(v)); break;
      case DType::UInt8: put(static_cast<uint8_t>(v)); break;
      case DType::Bool: put(static_cast<uint8_t>(v != 0)); break;
      default: return std::nullopt;
    }
  }
  return HostTensor::fromBytes(to, t.shape, std::move(bytes));
}

}  // namespace

int foldConstantCasts(Graph& g) {
  std::unordered_map<std::string, size_t> constants;  // small non-weight initializers
  for (size_t i = 0; i < g.initializers.size(); ++i)
    if (!g.initializers[i].weight && g.initializers[i].tensor.numel() <= 64) constants[g.initializers[i].name] = i;
  return replaceNodes(g, [&](Node& n) -> std::optional<std::string> {
    if (n.op_type != "Cast" || !n.domain.empty() || n.inputs.size() != 1) return std::nullopt;
    auto it = constants.find(n.inputs[0]);
    const Attribute* to = n.attr("to");
    if (it == constants.end() || !to || !std::holds_alternative<int64_t>(to->value)) return std::nullopt;
    auto dt = fromOnnxDataType(static_cast<int>(std::get<int64_t>(to->value)));
    auto cast = dt ? castOnHost(g.initializers[it->second].tensor, *dt) : std::nullopt;
    if (!cast) return std::nullopt;
    // The Cast's output becomes that constant.
    g.initializers.push_back({n.outputs[0], std::move(*cast), false, nullptr});
    constants[n.outputs[0]] = g.initializers.size() - 1;
    return n.outputs[0];
  });
}

static const Initializer* findInit(const Graph& g, const std::string& name) {
  for (const auto& i : g.initializers)
    if (i.name == name) return &i;
  return nullptr;
}

int foldBatchNormIntoConv(Graph& g) {
  auto uses = useCounts(g);
  std::unordered_map<std::string, size_t> producer;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (const auto& o : g.nodes[k].outputs) producer[o] = k;
  std::unordered_set<size_t> drop;
  int folded = 0;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    Node& bn = g.nodes[k];
    if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.outputs.size() != 1) continue;
    if (const Attribute* tm = bn.attr("training_mode"); tm && std::get<int64_t>(tm->value) != 0) continue;
    auto pit = producer.find(bn.inputs[0]);
    if (pit == producer.end()) continue;
    Node& conv = g.nodes[pit->second];
    if (conv.op_type != "Conv" || !conv.domain.empty() || uses[conv.outputs[0]] != 1) continue;
    const Initializer* w = findInit(g, conv.inputs[1]);
    const Initializer* b = conv.inputs.size() > 2 && !conv.inputs[2].empty() ? findInit(g, conv.inputs[2]) : nullptr;
    if (!w || (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !b)) continue;
    if (!w->tensor.data || (b && !b->tensor.data)) continue;  // bytes made only as the file is written
    const Initializer* scale = findInit(g, bn.inputs[1]);
    const Initializer* shift = findInit(g, bn.inputs[2]);
    const Initializer* mean = findInit(g, bn.inputs[3]);
    const Initializer* var = findInit(g, bn.inputs[4]);
    if (!scale || !shift || !mean || !var) continue;
    if (w->tensor.dtype != DType::Float32) continue;
    for (const auto* t : {scale, shift, mean, var})
      if (t->tensor.dtype != DType::Float32) w = nullptr;
    if (!w) continue;
    float eps = 1e-5f;
    if (const Attribute* e = bn.attr("epsilon")) eps = std::get<float>(e->value);
    const int64_t cout = w->tensor.shape.at(0);
    if (scale->tensor.numel() != cout) continue;
    const int64_t per = w->tensor.numel() / cout;
    std::vector<float> nw(static_cast<size_t>(w->tensor.numel()));
    std::vector<float> nb(static_cast<size_t>(cout));
    const float* wd = w->tensor.as<float>();
    for (int64_t c = 0; c < cout; ++c) {
      float s = scale->tensor.as<float>()[c] / std::sqrt(var->tensor.as<float>()[c] + eps);
      for (int64_t j = 0; j < per; ++j) nw[c * per + j] = wd[c * per + j] * s;
      float bias = b ? b->tensor.as<float>()[c] : 0.0f;
      nb[c] = (bias - mean->tensor.as<float>()[c]) * s + shift->tensor.as<float>()[c];
    }
    std::string wname = conv.inputs[1] + "_bnfold";
    std::string bname = (b ? conv.inputs[2] : conv.name + ".bias") + "_bnfold";
    auto wshape = w->tensor.shape;
    // Folded from the module's weights (the usual case) it is a weight; from constants alone, not.
    bool weight = w->weight || (b && b->weight);
    for (const auto* t : {scale, shift, mean, var}) weight = weight || t->weight;
    g.initializers.push_back({wname, HostTensor::fromVector<float>(DType::Float32, wshape, std::move(nw)), weight, nullptr});
    g.initializers.push_back({bname, HostTensor::fromVector<float>(DType::Float32, {cout}, std::move(nb)), weight, nullptr});
    conv.inputs.resize(3);
    conv.inputs[1] = wname;
    conv.inputs[2] = bname;
    conv.outputs[0] = bn.outputs[0];
    conv.origins.insert(conv.origins.end(), bn.origins.begin(), bn.origins.end());
    drop.insert(k);
    ++folded;
  }
  if (!drop.empty()) {
    std::vector<Node> kept;
    for (size_t k = 0; k < g.nodes.size(); ++k)
      if (!drop.count(k)) kept.push_back(std::move(g.nodes[k]));
    g.nodes = std::move(kept);
  }
  return folded;
}

}  // namespace oxport::onnx_ir
