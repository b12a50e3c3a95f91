#include "frontend/diagnose.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace oxport {

std::vector<DynamicSize> dynamicSizes(const ts::Graph& g, const std::vector<std::string>& input_names,
                                      const ExportOptions& options) {
  std::vector<DynamicSize> out;
  for (size_t i = 0; i < g.inputs.size() && i < input_names.size(); ++i) {
    auto it = options.dynamic_axes.find(input_names[i]);
    if (it == options.dynamic_axes.end()) continue;
    const auto& shape = g.inputs[i]->meta.shape;
    for (const auto& [axis, label] : it->second.axes) {
      if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) continue;
      out.push_back({input_names[i], axis, shape[static_cast<size_t>(axis)],
                     label.empty() ? input_names[i] + "_dynamic_axes_" + std::to_string(axis + 1) : label, i});
    }
  }
  return out;
}

namespace {

// Which argument of these ops is a size or position that should follow the inputs' shapes.
const std::map<std::string, std::vector<std::string>>& shapeArguments() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"aten::view", {"size"}},        {"aten::reshape", {"shape"}},     {"aten::expand", {"size"}},
      {"aten::repeat", {"repeats"}},   {"aten::tile", {"dims"}},         {"aten::zeros", {"size"}},
      {"aten::ones", {"size"}},        {"aten::full", {"size"}},         {"aten::empty", {"size"}},
      {"aten::rand", {"size"}},        {"aten::randn", {"size"}},        {"aten::new_zeros", {"size"}},
      {"aten::new_ones", {"size"}},    {"aten::new_full", {"size"}},     {"aten::new_empty", {"size"}},
      {"aten::arange", {"end", "start"}}, {"aten::slice", {"start", "end"}}, {"aten::narrow", {"start", "length"}},
      {"aten::upsample_nearest2d", {"output_size"}}, {"aten::upsample_bilinear2d", {"output_size"}},
      {"aten::upsample_nearest1d", {"output_size"}}, {"aten::upsample_linear1d", {"output_size"}},
      {"aten::upsample_bicubic2d", {"output_size"}}, {"aten::upsample_nearest3d", {"output_size"}},
      {"aten::upsample_trilinear3d", {"output_size"}}, {"aten::split", {"split_size", "split_sizes"}},
      {"aten::split_with_sizes", {"split_sizes"}}, {"aten::unflatten", {"sizes"}},
  };
  return m;
}

// Constant integers in a value that may be sizes baked from the inputs: an int, a constant int
// list, or the constant elements of a ListConstruct. What the export folded from the module's
// weights (weight.shape[0] // heads) is left out: it never derives from an input's size. So is a
// constant equal to a number that the same ListConstruct also computes from the inputs (b, n =
// x.shape; x.view(b, n, heads, 8) at n = 8): that size already follows the dynamic axis, and the
// constant is another number (a head size).
std::vector<int64_t> constantInts(const ts::Value* v) {
  std::vector<int64_t> out;
  if (v->constant) {
    if (v->from_weights) return out;
    const auto& c = *v->constant;
    if (c.isInt()) out.push_back(c.toInt());
    if (c.isList())
      for (const auto& e : c.list())
        if (e.isInt()) out.push_back(e.toInt());
    return out;
  }
  if (v->producer && v->producer->kind == "prim::ListConstruct") {
    std::set<int64_t> followed;
    for (const auto* e : v->producer->inputs)
      if (!e->constant && e->example && e->example->isInt()) followed.insert(e->example->toInt());
    for (const auto* e : v->producer->inputs)
      if (e->constant && e->constant->isInt() && !e->from_weights && !followed.count(e->constant->toInt()))
        out.push_back(e->constant->toInt());
  }
  return out;
}

// Arguments that hold a layer's parameters (a conv's weight and bias, a norm's affine and running
// statistics): their sizes are channel counts, fixed by the weights, whatever the input sizes. A
// constant there that a module computes (a QAT ConvBn2d's torch.zeros(out_channels) bias, a
// folded weight) is not a size tracing baked, even when a channel count equals a dynamic axis.
bool isParameterArgument(const ts::Node& n, const ts::Value* in) {
  static const std::map<std::string, std::vector<std::string>> kParams = {
      {"aten::_convolution", {"weight", "bias"}},     {"aten::convolution", {"weight", "bias"}},
      {"aten::conv1d", {"weight", "bias"}},           {"aten::conv2d", {"weight", "bias"}},
      {"aten::conv3d", {"weight", "bias"}},           {"aten::conv_transpose1d", {"weight", "bias"}},
      {"aten::conv_transpose2d", {"weight", "bias"}}, {"aten::conv_transpose3d", {"weight", "bias"}},
      {"aten::linear", {"weight", "bias"}},           {"aten::layer_norm", {"weight", "bias"}},
      {"aten::group_norm", {"weight", "bias"}},
      {"aten::batch_norm", {"weight", "bias", "running_mean", "running_var"}},
      {"aten::instance_norm", {"weight", "bias", "running_mean", "running_var"}},
  };
  auto it = kParams.find(n.kind);
  if (it == kParams.end()) return false;
  for (const auto& name : it->second) {
    const int idx = n.argIndex(name);
    if (idx >= 0 && idx < static_cast<int>(n.inputs.size()) && n.inputs[static_cast<size_t>(idx)] == in) return true;
  }
  return false;
}

// Arguments that ONNX takes as attributes, so a size of the inputs that reaches them cannot
// follow a dynamic axis: a convolution's `groups` (StyleGAN's modulated convolution traced with
// groups=b, its batch, over a weight computed from the inputs).
bool bakedAttribute(const ts::Node& n, std::string* arg) {
  static const std::set<std::string> convs = {
      "aten::_convolution", "aten::convolution",       "aten::conv1d",          "aten::conv2d",
      "aten::conv3d",       "aten::conv_transpose1d",  "aten::conv_transpose2d", "aten::conv_transpose3d"};
  if (!convs.count(n.kind)) return false;
  const int w = n.argIndex("weight");
  // A weight of the model (a parameter or folded from parameters) fixes the groups: its shape does
  // not follow the inputs.
  if (w < 0 || w >= static_cast<int>(n.inputs.size()) || n.inputs[static_cast<size_t>(w)]->constant ||
      !n.inputs[static_cast<size_t>(w)]->param_name.empty())
    return false;
  *arg = "groups";
  return true;
}

std::string describe(const DynamicSize& d) {
  return "the example size " + std::to_string(d.size) + " of dynamic axis " + std::to_string(d.axis) + " ('" +
         d.label + "') of input '" + d.input + "'";
}

const char* kHint =
    "tracing recorded a Python int here; compute it from the tensor instead (x.size(0), x.shape[0] "
    "without int(), or -1 in view/reshape) so it follows the dynamic axis. Verification at other sizes "
    "shows whether the exported model is affected";

// Ops whose size list lines up with the axes of their data input (input 0), so a constant at
// position k stands for axis k.
bool sizeListFollowsAxes(const std::string& kind) {
  return kind == "aten::view" || kind == "aten::reshape" || kind == "aten::expand" || kind == "aten::repeat" ||
         kind == "aten::tile";
}

// A dynamic axis traced at size 1: a constant 1 cannot be told from the size by value, so look
// where it sits. view/reshape/expand/repeat of a tensor computed from the inputs, whose size list
// has the constant 1 at the position of the dynamic axis while that tensor's axis is 1 in the
// example: `y.expand(int(x.shape[0]), 3)` or `x.view(int(x.shape[0]), -1)` traced at batch 1.
// Such a graph works at size 1 only (the broadcast or reshape fails or is wrong at other sizes).
// Sizes read with x.size(0) are not constants and are not reported.
void findSizeOneBroadcasts(const ts::Graph& g, const std::vector<DynamicSize>& sizes, std::vector<Diagnostic>& out) {
  std::map<int64_t, const DynamicSize*> axes;  // axis -> the first size-1 dynamic axis there
  for (const auto& d : sizes)
    if (d.size == 1 && !axes.count(d.axis)) axes[d.axis] = &d;
  if (axes.empty()) return;
  std::set<const ts::Value*> from_inputs;
  for (const ts::Value* in : g.inputs)
    if (in->param_name.empty()) from_inputs.insert(in);
  for (const ts::Node* n : g.nodes) {
    bool dep = false;
    for (const ts::Value* in : n->inputs) dep = dep || from_inputs.count(in) > 0;
    if (dep)
      for (const ts::Value* o : n->outputs) from_inputs.insert(o);
    if (!dep || !sizeListFollowsAxes(n->kind) || n->inputs.size() < 2) continue;
    const ts::Value* data = n->inputs[0];
    if (!from_inputs.count(data)) continue;
    // The size list's entries, when constant (a constant list, or constants in a ListConstruct).
    const ts::Value* list = n->inputs[1];
    std::vector<std::optional<int64_t>> entries;
    if (list->producer && list->producer->kind == "prim::ListConstruct") {
      for (const ts::Value* e : list->producer->inputs)
        entries.push_back(e->constant && e->constant->isInt() ? std::optional<int64_t>(e->constant->toInt()) : std::nullopt);
    } else if (list->constant && list->constant->isList()) {
      for (const auto& e : list->constant->list())
        entries.push_back(e.isInt() ? std::optional<int64_t>(e.toInt()) : std::nullopt);
    }
    for (const auto& [axis, d] : axes) {
      const size_t k = static_cast<size_t>(axis);
      if (k >= entries.size() || entries[k] != std::optional<int64_t>(1)) continue;
      if (k >= data->meta.shape.size() || data->meta.shape[k] != 1) continue;
      out.push_back(n->warning("baked-dynamic-size",
                               "entry " + std::to_string(k) + " of the sizes given to " + n->kind +
                                   " is the constant 1 at the position of " + describe(*d) +
                                   ", traced at size 1; the exported model keeps 1 there at every size "
                                   "(a broadcast or reshape that only works at size 1)",
                               kHint));
      break;
    }
  }
}

// Whether `v` is computed from a graph input that is not a parameter.
bool fromUserInputs(const ts::Value* v, std::set<const ts::Value*>& seen) {
  if (v->constant || !seen.insert(v).second) return false;
  if (!v->producer) return v->param_name.empty();
  for (const ts::Value* in : v->producer->inputs)
    if (fromUserInputs(in, seen)) return true;
  return false;
}

// Whether number `v` may read the size of a dynamic axis: a size of a graph input is read at its
// axis (`batch, c, h, w = input.shape`, `x.size(0)`), and counts only when that axis is dynamic
// (StyleGAN2's groups=batch with only height and width dynamic is fixed); a size of any other
// tensor, or an input used otherwise, may follow one.
bool readsDynamicSize(const ts::Graph& g, const ts::Value* v, const std::vector<DynamicSize>& sizes,
                      std::set<const ts::Value*>& seen) {
  if (v->constant || !seen.insert(v).second) return false;
  auto inputIndex = [&](const ts::Value* t) -> std::optional<size_t> {
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i] == t) return i;
    return std::nullopt;
  };
  auto dynamicAt = [&](size_t input, int64_t axis, int64_t rank) {
    if (axis < 0) axis += rank;
    for (const auto& d : sizes)
      if (d.index == input && d.axis == axis) return true;
    return false;
  };
  const ts::Node* p = v->producer;
  if (!p) return v->param_name.empty();
  if (p->kind == "prim::ListUnpack" && p->inputs.size() == 1 && p->inputs[0]->producer &&
      p->inputs[0]->producer->kind == "aten::size" && p->inputs[0]->producer->inputs.size() == 1) {
    const ts::Value* t = p->inputs[0]->producer->inputs[0];
    if (auto i = inputIndex(t)) return dynamicAt(*i, v->offset, t->meta.rank());
    return true;
  }
  if (p->kind == "aten::__getitem__" && p->inputs.size() == 2 && p->inputs[0]->producer &&
      p->inputs[0]->producer->kind == "aten::size" && p->inputs[0]->producer->inputs.size() == 1 &&
      p->inputs[1]->constant && p->inputs[1]->constant->isInt()) {  // scripted x.shape[0]
    const ts::Value* t = p->inputs[0]->producer->inputs[0];
    if (auto i = inputIndex(t)) return dynamicAt(*i, p->inputs[1]->constant->toInt(), t->meta.rank());
    return true;
  }
  if (p->kind == "aten::size" && p->inputs.size() == 2 && p->inputs[1]->constant && p->inputs[1]->constant->isInt()) {
    if (auto i = inputIndex(p->inputs[0])) return dynamicAt(*i, p->inputs[1]->constant->toInt(), p->inputs[0]->meta.rank());
    return true;
  }
  if (p->kind == "aten::size") return true;
  for (const ts::Value* in : p->inputs)
    if (readsDynamicSize(g, in, sizes, seen)) return true;
  return false;
}

// A scripted graph: a number computed from the inputs' sizes that reaches an argument ONNX takes as
// an attribute (groups=n, n = inst.shape[0]: the converter writes its example value). With dynamic
// axes, other sizes would need another value.
void findComputedAttributes(const ts::Graph& g, const std::vector<DynamicSize>& sizes, std::vector<Diagnostic>& out) {
  if (sizes.empty()) return;
  for (const ts::Node* n : g.nodes) {
    std::string attr;
    if (!bakedAttribute(*n, &attr)) continue;
    const int idx = n->argIndex(attr);
    if (idx < 0 || idx >= static_cast<int>(n->inputs.size())) continue;
    const ts::Value* a = n->inputs[static_cast<size_t>(idx)];
    std::set<const ts::Value*> seen;
    if (a->constant || !a->example || !a->example->isInt() || !fromUserInputs(a, seen)) continue;
    std::set<const ts::Value*> seen_sizes;
    if (!readsDynamicSize(g, a, sizes, seen_sizes)) continue;
    const std::string v = std::to_string(a->example->toInt());
    out.push_back(n->warning("baked-dynamic-size",
                             "argument '" + attr + "' of " + n->kind + " is computed from the inputs' sizes (" + v +
                                 " in the example run); ONNX takes " + attr +
                                 " as an attribute, so the exported model keeps " + v +
                                 " at every size, and inputs whose dynamic axes give another value fail or "
                                 "compute something else",
                             "no ONNX form lets this argument follow a dynamic axis: export with that axis "
                             "static (leave it out of dynamic_axes), or fold the per-instance loop into ops "
                             "whose sizes are tensors (a batched matmul)"));
  }
}

// The lines of the Python sources the diagnostics read, each file read once.
class SourceFiles {
 public:
  const std::vector<std::string>* lines(const std::string& path) {
    auto& entry = files_[path];
    if (!entry) {
      std::ifstream in(path);
      std::vector<std::string> text;
      for (std::string l; in && std::getline(in, l);) text.push_back(l);
      entry = std::move(text);
    }
    return entry->empty() ? nullptr : &*entry;
  }

 private:
  std::map<std::string, std::optional<std::vector<std::string>>> files_;
};

// Whether the node's source line writes `v` as a number and reads no size: `y.reshape(-1, 2, 64)`
// (a head size of 64) next to a batch of 64. Tracing records such a literal and a size it baked
// (`int(x.shape[0])`, `len(x)`) the same way, as a constant; the source line tells them apart.
// Unreadable source, or a line that also reads a size: false (the warning stays).
bool literalInSource(const SourceLocation& at, int64_t v, SourceFiles& sources) {
  if (!at.known()) return false;
  const std::vector<std::string>* lines = sources.lines(at.file);
  if (!lines || at.line > static_cast<int>(lines->size())) return false;
  const std::string& text = (*lines)[static_cast<size_t>(at.line - 1)];
  static const std::regex reads_size(R"(\.shape\b|\.size\s*\(|\blen\s*\(|\.numel\s*\(|\.dim\s*\()");
  if (std::regex_search(text, reads_size)) return false;
  // 64, or as a float: 64., 64.0
  const std::regex literal("(^|[^\\w.])" + std::to_string(v) + "(\\.0*)?([^\\w.]|$)");
  return std::regex_search(text, literal);
}
bool literalInSource(const ts::Node& n, int64_t v, SourceFiles& sources) {
  return literalInSource(n.location, v, sources);
}

// A tensor constant the tracer recorded (torch.tensor([w, h]), torch.as_tensor(spatial_shapes),
// x.new_tensor([h, w])) holding a whole number equal to a dynamic axis's example size: when the
// numbers were sizes, the exported model keeps the example's values at every size. The traced
// model holds the same constant, so --verify cannot see it; only this warning can. A number the
// creating line writes itself (torch.tensor([0.5, 2.0])) is not reported.
using SizeProducts = std::map<int64_t, std::pair<const DynamicSize*, const DynamicSize*>>;

// Products of two dynamic axes of one input (h x w: a level's token count, Deformable DETR's
// level_start_index), by value.
SizeProducts sizeProducts(const std::vector<DynamicSize>& sizes) {
  SizeProducts out;
  for (const auto& a : sizes)
    for (const auto& b : sizes)
      if (a.index == b.index && a.axis < b.axis && a.size > 1 && b.size > 1 && !out.count(a.size * b.size))
        out[a.size * b.size] = {&a, &b};
  return out;
}

void recordedSizeValues(const ts::Node& n, const ts::Value& in, const SourceLocation& origin,
                        const std::map<int64_t, const DynamicSize*>& by_size, const SizeProducts& products,
                        SourceFiles& sources, std::vector<Diagnostic>& out, std::set<const ts::Value*>& reported) {
  const HostTensor& t = in.constant->tensor();
  constexpr int64_t kMaxElements = 64;  // sizes, shape tables, scale pairs: small
  if (t.numel() == 0 || t.numel() > kMaxElements || t.dtype == DType::Bool) return;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double x = t.at(i);
    if (!(x > 1) || x != std::floor(x) || x > 1e12) continue;
    const auto v = static_cast<int64_t>(x);
    auto b = by_size.find(v);
    auto pr = products.find(v);
    if ((b == by_size.end() && pr == products.end()) || literalInSource(origin, v, sources)) continue;
    const std::string what = b != by_size.end() ? describe(*b->second)
                                                : "the product of " + describe(*pr->second.first) + " and " +
                                                      describe(*pr->second.second);
    reported.insert(&in);
    std::string where;
    if (origin.known())
      where = ", made at " + std::filesystem::path(origin.file).filename().string() + ":" +
              std::to_string(origin.line) + ",";
    out.push_back(n.warning(
        "baked-dynamic-size",
        "a tensor of shape " + t.shapeString() + " used by " + n.kind + where +
            " was recorded by tracing as a constant and holds " + std::to_string(v) + ", which equals " + what +
            "; if it was made from sizes (torch.tensor([w, h]), torch.as_tensor(shapes)), "
            "the exported model keeps the example's values at every size, and --verify cannot see it (the traced "
            "model holds the same constant)",
        "tracing records torch.tensor, as_tensor and new_tensor of Python numbers as constants: build the tensor "
        "with ops the tracer follows, torch.stack([torch.as_tensor(w), torch.as_tensor(h)]) or "
        "torch._shape_as_tensor(x)[-2:], or script that function"));
    return;
  }
}

// A tensor folded from the model's weights whose fold used a constant size equal to a dynamic
// axis's example size, with a dimension of that size: FT-Transformer's `cls.expand(len(x), -1, -1)`
// traced, where len(x) became a constant and the expand of a parameter was folded (a weight of the
// written model now holds the example batch).
void foldedWeightSize(const ts::Node& n, const ts::Value& in, const std::map<int64_t, const DynamicSize*>& by_size,
                      std::vector<Diagnostic>& out, std::set<const ts::Value*>& reported) {
  const auto& shape = in.constant->tensor().shape;
  // torch.cat([cls, t]) reads it through the list it builds: the warning is at the op that uses
  // the list (the list has no source line).
  const ts::Node& at = n.kind == "prim::ListConstruct" && !n.outputs.empty() && !n.outputs[0]->users.empty()
                           ? *n.outputs[0]->users[0]
                           : n;
  for (int64_t s : in.folded_sizes) {
    auto b = by_size.find(s);
    if (b == by_size.end() || std::find(shape.begin(), shape.end(), s) == shape.end()) continue;
    reported.insert(&in);
    out.push_back(at.warning("baked-dynamic-size",
                            "a tensor of shape " + in.constant->tensor().shapeString() + " used by " + at.kind +
                                " was folded from the model's weights through an expand/repeat to the constant size " +
                                std::to_string(s) + ", which equals " + describe(*b->second) +
                                "; the exported model keeps it as a weight of that size at every size",
                            "tracing recorded len(x) or int(x.shape[0]) as a constant; write x.shape[0] or "
                            "x.size(0) (cls.expand(x.shape[0], -1, -1)) so the size follows the dynamic axis"));
    return;
  }
}

}  // namespace

std::vector<Diagnostic> findBakedSizes(const ts::Graph& g, const std::vector<DynamicSize>& sizes, bool recorded,
                                       const RecordedLiterals& literals) {
  std::vector<Diagnostic> out;
  std::set<std::string> seen_size_one;
  for (const auto& d : sizes) {
    if (d.size == 1 && seen_size_one.insert(d.input + ":" + std::to_string(d.axis)).second) {
      Diagnostic n = makeWarning("dynamic-axis-size-one",
                                 "dynamic axis " + std::to_string(d.axis) + " of input '" + d.input +
                                     "' was traced at size 1, where PyTorch may specialize broadcasts and "
                                     "squeezes to that size",
                                 "export with an example size of 2 or more on dynamic axes");
      n.severity = Severity::Note;
      n.option = "dynamic_axes." + d.input;
      out.push_back(n);
    }
  }
  if (!recorded) {
    findComputedAttributes(g, sizes, out);
    return out;
  }
  findSizeOneBroadcasts(g, sizes, out);
  std::map<int64_t, const DynamicSize*> by_size;
  for (const auto& d : sizes)
    if (d.size > 1 && !by_size.count(d.size)) by_size[d.size] = &d;
  if (by_size.empty()) return out;
  SourceFiles sources;
  const SizeProducts products = sizeProducts(sizes);
  std::set<const ts::Value*> reported_constants;
  for (const ts::Node* n : g.nodes) {
    auto it = shapeArguments().find(n->kind);
    if (it != shapeArguments().end()) {
      for (const auto& arg : it->second) {
        int idx = n->argIndex(arg);
        if (idx < 0 || idx >= static_cast<int>(n->inputs.size())) continue;
        for (int64_t v : constantInts(n->inputs[static_cast<size_t>(idx)])) {
          auto b = by_size.find(v);
          if (b == by_size.end() || literalInSource(*n, v, sources)) continue;
          out.push_back(n->warning("baked-dynamic-size",
                                   "argument '" + arg + "' of " + n->kind + " is the constant " + std::to_string(v) +
                                       ", which equals " + describe(*b->second) +
                                       "; the exported model will keep " + std::to_string(v) + " at every size",
                                   kHint));
          break;
        }
      }
    }
    std::string attr;
    if (bakedAttribute(*n, &attr)) {
      const int idx = n->argIndex(attr);
      const ts::Value* a = idx >= 0 && idx < static_cast<int>(n->inputs.size()) ? n->inputs[static_cast<size_t>(idx)] : nullptr;
      auto b = a && a->constant && a->constant->isInt() && !a->from_weights ? by_size.find(a->constant->toInt())
                                                                            : by_size.end();
      if (b != by_size.end())
        out.push_back(n->warning("baked-dynamic-size",
                                 "argument '" + attr + "' of " + n->kind + " is the constant " +
                                     std::to_string(b->first) + ", which equals " + describe(*b->second) +
                                     ", and its weight is computed from the inputs; ONNX takes " + attr +
                                     " as an attribute, so the exported model keeps " + std::to_string(b->first) +
                                     " at every size",
                                 "no ONNX form lets this argument follow a dynamic axis: export with that axis "
                                 "static (leave it out of dynamic_axes), or fold the per-sample loop into ops "
                                 "whose sizes are tensors (a batched matmul over unfolded patches)"));
    }
    // Constant tensors created at the example size (torch.zeros(x.shape[0]) with an int, a
    // folded arange ...) that meet the inputs.
    for (const ts::Value* in : n->inputs) {
      if (!in->constant || !in->constant->isTensor() || !in->param_name.empty()) continue;
      if (reported_constants.count(in) || isParameterArgument(*n, in)) continue;
      if (in->from_weights) {
        foldedWeightSize(*n, *in, by_size, out, reported_constants);
        continue;
      }
      if (auto lit = literals.find(in); lit != literals.end()) {
        recordedSizeValues(*n, *in, lit->second, by_size, products, sources, out, reported_constants);
        if (reported_constants.count(in)) continue;
      }
      for (int64_t dim : in->constant->tensor().shape) {
        auto b = by_size.find(dim);
        if (b == by_size.end()) continue;
        reported_constants.insert(in);
        std::ostringstream shape;
        shape << in->constant->tensor().shapeString();
        out.push_back(n->warning("baked-dynamic-size",
                                 "a constant tensor of shape " + shape.str() + " used by " + n->kind +
                                     " has a dimension equal to " + describe(*b->second) +
                                     "; it was probably created from a size that tracing turned into a constant",
                                 kHint));
        break;
      }
    }
  }
  return out;
}

// ---- Python branches on sizes, read from the source files of a traced model

std::vector<PythonFrame> userFramesOfTraceStack(const std::string& stack) {
  static const std::regex frame_re(R"(^(.*)\((\d+)\): (.+)$)");
  std::vector<PythonFrame> out;
  std::istringstream in(stack);
  std::string text;
  while (std::getline(in, text)) {
    std::smatch m;
    if (!std::regex_match(text, m, frame_re)) continue;
    const std::string file = m[1];
    // Frames below torch.jit.trace are the code that called it, not the model.
    if (file.find("torch/jit/_trace.py") != std::string::npos) break;
    if (file.empty() || file[0] == '<' || file.find("/site-packages/") != std::string::npos ||
        file.find("/dist-packages/") != std::string::npos)
      continue;
    if (m[3] == "<module>") continue;
    PythonFrame f;
    f.file = file;
    f.line = std::stoi(m[2]);
    f.function = m[3];
    out.push_back(f);
  }
  return out;
}

namespace {

size_t indentOf(const std::string& line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

bool blankOrComment(const std::string& line) {
  size_t i = indentOf(line);
  return i == line.size() || line[i] == '#' || line[i] == '\r';
}

std::string withoutComment(const std::string& line) {
  // Good enough for conditions: a '#' inside a string literal of a condition is rare.
  auto hash = line.find('#');
  std::string t = hash == std::string::npos ? line : line.substr(0, hash);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r' || t.back() == '\t')) t.pop_back();
  return t;
}

std::string trimmed(const std::string& line) {
  std::string t = withoutComment(line);
  return t.substr(indentOf(t));
}

// The axis a size read names: shape[k] / size(k) -> k; .shape / .size() -> unknown.
struct SizeRead {
  bool found = false;
  std::optional<int64_t> axis;
};

SizeRead directSizeRead(const std::string& raw) {
  static const std::regex read_re(R"(\.(?:shape\b(?:\s*\[\s*(-?\d+)\s*\])?|size\s*\(\s*(-?\d+)?\s*\)|numel\s*\(\s*\)))");
  // len(x.shape) and len(x.size()) are ranks, fixed at export time like x.dim(): Stable Diffusion's
  // `while len(emb_out.shape) < len(h.shape)` reads no size.
  static const std::regex rank_re(R"(\blen\s*\(\s*[\w.\[\]]+\.(?:shape|size\s*\(\s*\))\s*\))");
  const std::string text = std::regex_replace(raw, rank_re, "rank");
  std::smatch m;
  SizeRead r;
  if (!std::regex_search(text, m, read_re)) return r;
  r.found = true;
  if (m[1].matched) r.axis = std::stoll(m[1]);
  else if (m[2].matched) r.axis = std::stoll(m[2]);
  return r;
}

}  // namespace

std::vector<SizeBranch> sizeBranchesInFunction(const std::vector<std::string>& lines, int line,
                                               const std::string& function) {
  std::vector<SizeBranch> out;
  if (line < 1 || static_cast<size_t>(line) > lines.size()) return out;
  const size_t target = static_cast<size_t>(line - 1);
  const std::regex def_re("^\\s*(?:async\\s+)?def\\s+" + std::regex_replace(function, std::regex(R"([^\w])"), "") +
                          "\\s*\\(");
  // The nearest `def function(` above the line, indented less than it.
  std::optional<size_t> def;
  for (size_t k = target + 1; k-- > 0;) {
    if (std::regex_search(lines[k], def_re) && (k == target || indentOf(lines[k]) < indentOf(lines[target]))) {
      def = k;
      break;
    }
  }
  if (!def) return out;
  const size_t def_indent = indentOf(lines[*def]);
  size_t end = *def + 1;
  // The signature may continue over several lines: the body starts after the line ending in ':'.
  while (end < lines.size() && withoutComment(lines[end - 1]).empty() == false &&
         withoutComment(lines[end - 1]).back() != ':')
    ++end;
  while (end < lines.size() && (blankOrComment(lines[end]) || indentOf(lines[end]) > def_indent)) ++end;
  if (target >= end) return out;

  // Names assigned from sizes: `b, c, h, w = x.shape`, `n = x.size(0)`, `h = int(x.shape[2])`.
  static const std::regex unpack_re(R"(^\s*\(?\s*([A-Za-z_]\w*(?:\s*,\s*\*?[A-Za-z_]\w*)+)\s*,?\s*\)?\s*=\s*[\w.\[\]]+\.(?:shape|size\s*\(\s*\))\s*$)");
  static const std::regex single_re(R"(^\s*([A-Za-z_]\w*)\s*(?::\s*int\s*)?=\s*(?:int\s*\(\s*)?[\w.\[\]]+\.(?:shape\s*\[\s*(-?\d+)\s*\]|size\s*\(\s*(-?\d+)\s*\))\s*\)?\s*$)");
  std::map<std::string, std::optional<int64_t>> size_names;
  for (size_t k = *def + 1; k < end; ++k) {
    const std::string text = withoutComment(lines[k]);
    std::smatch m;
    if (std::regex_match(text, m, unpack_re)) {
      std::string names = m[1];
      std::istringstream parts(names);
      std::string part;
      int64_t pos = 0;
      bool starred = false;
      while (std::getline(parts, part, ',')) {
        part = trimmed(part);
        if (!part.empty() && part[0] == '*') {
          starred = true;  // positions after a starred name are unknown
          ++pos;
          continue;
        }
        if (part != "_") size_names[part] = starred ? std::nullopt : std::optional<int64_t>(pos);
        ++pos;
      }
    } else if (std::regex_match(text, m, single_re)) {
      size_names[m[1]] = std::stoll(m[2].matched ? m[2].str() : m[3].str());
    }
  }

  static const std::regex if_re(R"(^\s*(?:if|elif|while)\b(.*):\s*(?:\S.*)?$)");
  static const std::regex for_re(R"(^\s*for\b.*\bin\s+range\s*\((.*)\)\s*:.*$)");
  static const std::regex ternary_re(R"(\bif\b(.+?)\belse\b)");
  for (size_t k = *def + 1; k < end; ++k) {
    const std::string text = withoutComment(lines[k]);
    std::smatch m;
    std::string condition;
    if (std::regex_match(text, m, if_re) || std::regex_match(text, m, for_re) ||
        std::regex_search(text, m, ternary_re))
      condition = m[1];
    if (condition.empty()) continue;
    SizeRead read = directSizeRead(condition);
    if (!read.found) {
      for (const auto& [name, axis] : size_names) {
        if (std::regex_search(condition, std::regex("\\b" + name + "\\b"))) {
          read.found = true;
          read.axis = axis;
          break;
        }
      }
    }
    if (!read.found) continue;
    SizeBranch b;
    b.line = static_cast<int>(k + 1);
    b.code = trimmed(lines[k]);
    b.axis = read.axis;
    out.push_back(b);
  }
  return out;
}

std::vector<Diagnostic> findSizeBranches(const std::vector<PythonFrame>& frames, const std::vector<DynamicSize>& sizes,
                                         const std::filesystem::path& model_dir) {
  std::vector<Diagnostic> out;
  if (sizes.empty()) return out;
  SourceFiles sources;
  std::set<std::pair<std::string, int>> reported;
  std::set<std::tuple<std::string, int, std::string>> seen_frames;
  for (const PythonFrame& f : frames) {
    if (!seen_frames.insert({f.file, f.line, f.function}).second) continue;
    std::error_code ec;
    std::filesystem::path path = f.file;
    if (!std::filesystem::is_regular_file(path, ec)) path = model_dir / path.filename();
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    const std::vector<std::string>* lines = sources.lines(path.string());
    if (!lines) continue;
    for (const SizeBranch& b : sizeBranchesInFunction(*lines, f.line, f.function)) {
      const DynamicSize* dyn = nullptr;
      for (const auto& d : sizes)
        if (!b.axis || *b.axis < 0 || d.axis == *b.axis) {
          dyn = &d;
          break;
        }
      if (!dyn) continue;  // a branch on an axis that stays fixed
      if (!reported.insert({path.string(), b.line}).second) continue;
      const std::string where = b.axis && *b.axis >= 0 ? describe(*dyn) : "the dynamic axes' example sizes";
      Diagnostic d = makeWarning(
          "python-size-branch",
          f.function + "() branches on a tensor size (`" + b.code + "`); torch.jit.trace ran it at " + where +
              " and kept only what that size did, so the exported model does the same at every size",
          "script this function (torch.jit.script, or @torch.jit.script_if_tracing) so the branch is exported as "
          "an ONNX If, or remove its dependence on the size, then trace again. Verification cannot catch this: "
          "its reference is the saved traced module, which kept the same branch");
      d.location.file = f.file;
      d.location.line = b.line;
      d.module_path = f.module_path;
      out.push_back(d);
    }
  }
  return out;
}

}  // namespace oxport
