#include "load/input_guess.h"

#include <torch/csrc/jit/passes/inliner.h>

#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "frontend/frontend.h"
#include "frontend/inline_calls.h"

namespace oxport {
namespace {

using torch::jit::Node;
using torch::jit::Value;

// Defaults for sizes a saved graph does not show (documented in README.md, "Starting shapes").
constexpr int64_t kImageSize = 224;      // 1-D and 2-D convolutions: ImageNet's 224
constexpr int64_t kClipFrames = 16;      // 3-D convolutions: torchvision's video clips, 16x112x112
constexpr int64_t kClipSize = 112;
constexpr int64_t kSequenceLength = 16;  // embeddings and RNNs

// Ops whose output has the shape of their (tracked) tensor operand: following them keeps looking
// for the op that reveals the input's shape (resnet's input may pass through a normalization).
bool keepsShape(const Node* n, size_t offset) {
  static const std::unordered_set<std::string> unary = {
      "aten::relu", "aten::relu_", "aten::sigmoid", "aten::tanh", "aten::gelu", "aten::silu", "aten::hardswish",
      "aten::hardtanh", "aten::hardtanh_", "aten::leaky_relu", "aten::elu", "aten::dropout", "aten::dropout_",
      "aten::feature_dropout", "aten::batch_norm", "aten::instance_norm", "aten::contiguous", "aten::clone",
      "aten::detach", "aten::to", "aten::type_as", "aten::float", "aten::neg", "aten::abs", "aten::clamp",
      "aten::pow", "aten::sqrt", "aten::exp", "aten::log"};
  static const std::unordered_set<std::string> binary = {"aten::add", "aten::add_", "aten::sub", "aten::sub_",
                                                         "aten::mul", "aten::mul_", "aten::div", "aten::div_"};
  const std::string kind = n->kind().toQualString();
  if (unary.count(kind)) return offset == 0;
  if (binary.count(kind)) return offset <= 1;
  return false;
}

class Guesser {
 public:
  explicit Guesser(const torch::jit::Module& module) : module_(module) {}

  std::map<std::string, ModelInfo::InputGuess> run() {
    std::map<std::string, ModelInfo::InputGuess> out;
    auto method = module_.find_method("forward");
    if (!method) return out;
    const auto& schema = method->function().getSchema();
    graph_ = method->graph()->copy();
    inlineCallsAndForks(*graph_, module_._ivalue());
    if (graph_->inputs().empty()) return out;
    objects_[graph_->inputs()[0]] = module_._ivalue();
    resolveAttributes();
    for (size_t i = 1; i < schema.arguments().size() && i < graph_->inputs().size(); ++i) {
      const auto& a = schema.arguments()[i];
      if (a.type()->kind() != c10::TypeKind::TensorType) continue;
      if (auto g = guessFor(graph_->inputs()[i])) out[a.name()] = *g;
    }
    return out;
  }

 private:
  // Values of prim::GetAttr chains from self: submodules and their parameters, with their paths.
  void resolveAttributes() {
    for (const Node* n : graph_->nodes()) {
      if (n->kind() != c10::prim::GetAttr) continue;
      auto it = objects_.find(n->input());
      if (it == objects_.end() || !it->second.isObject()) continue;
      const auto& obj = it->second.toObjectRef();
      const std::string& name = n->s(c10::attr::name);
      if (!obj.type()->hasAttribute(name)) continue;
      objects_[n->output()] = obj.getAttr(name);
      auto pit = paths_.find(n->input());
      paths_[n->output()] = pit == paths_.end() || pit->second.empty() ? name : pit->second + "." + name;
    }
  }

  std::optional<at::Tensor> weight(const Value* v) const {
    auto it = objects_.find(v);
    if (it == objects_.end() || !it->second.isTensor()) return std::nullopt;
    return it->second.toTensor();
  }
  std::string pathOf(const Value* v) const {
    auto it = paths_.find(v);
    return it == paths_.end() ? std::string("a weight") : it->second;
  }
  static std::optional<c10::IValue> constant(const Value* v) { return torch::jit::toIValue(v); }
  static std::optional<int64_t> constInt(const Value* v) {
    auto iv = constant(v);
    if (iv && iv->isInt()) return iv->toInt();
    return std::nullopt;
  }
  static std::optional<bool> constBool(const Value* v) {
    auto iv = constant(v);
    if (iv && iv->isBool()) return iv->toBool();
    return std::nullopt;
  }
  // A constant int list, or a list built from constant ints (what a saved graph usually holds).
  static std::optional<std::vector<int64_t>> constIntList(const Value* v) {
    auto iv = constant(v);
    if (iv && iv->isIntList()) return iv->toIntVector();
    if (v->node()->kind() != c10::prim::ListConstruct) return std::nullopt;
    std::vector<int64_t> out;
    for (const Value* e : v->node()->inputs()) {
      auto i = constInt(e);
      if (!i) return std::nullopt;
      out.push_back(*i);
    }
    return out;
  }
  static std::vector<int64_t> sizesOf(const at::Tensor& t) { return t.sizes().vec(); }

  ModelInfo::InputGuess withDtype(ModelInfo::InputGuess g, const at::Tensor& w) const {
    bool ok = false;
    DType d = dtypeFromScalarType(w.scalar_type(), &ok);
    if (ok && isFloating(d)) g.dtype = d;
    return g;
  }

  // The first node, in program order, that consumes the input (or a same-shaped value computed from
  // it) in a way that shows its shape.
  std::optional<ModelInfo::InputGuess> guessFor(const Value* input) {
    std::unordered_set<const Value*> tracked{input};
    for (const Node* n : graph_->nodes()) {
      for (size_t k = 0; k < n->inputs().size(); ++k) {
        if (!tracked.count(n->input(k))) continue;
        if (auto g = fromConsumer(n, k)) return g;
        if (keepsShape(n, k) && n->outputs().size() == 1) tracked.insert(n->output());
      }
    }
    return std::nullopt;
  }

  std::optional<ModelInfo::InputGuess> fromConsumer(const Node* n, size_t offset) const {
    const std::string kind = n->kind().toQualString();
    const bool conv = kind == "aten::_convolution" || kind == "aten::conv1d" || kind == "aten::conv2d" ||
                      kind == "aten::conv3d";
    const bool conv_t = kind == "aten::conv_transpose1d" || kind == "aten::conv_transpose2d" ||
                        kind == "aten::conv_transpose3d";
    if ((conv || conv_t) && offset == 0 && n->inputs().size() > 2) {
      auto w = weight(n->input(1));
      if (!w || w->dim() < 3 || w->dim() > 5) return std::nullopt;
      bool transposed = conv_t;
      int64_t groups = 1;
      if (kind == "aten::_convolution" && n->inputs().size() > 8) {
        transposed = constBool(n->input(6)).value_or(false);
        groups = constInt(n->input(8)).value_or(1);
      } else if (n->inputs().size() > 6) {
        groups = constInt(n->input(6)).value_or(1);
      }
      const int64_t channels = transposed ? w->size(0) : w->size(1) * groups;
      const int spatial = static_cast<int>(w->dim()) - 2;
      ModelInfo::InputGuess g;
      g.shape = {1, channels};
      std::string sizes;
      if (spatial == 3) {
        g.shape.insert(g.shape.end(), {kClipFrames, kClipSize, kClipSize});
        sizes = "16x112x112";
      } else {
        for (int d = 0; d < spatial; ++d) g.shape.push_back(kImageSize);
        sizes = spatial == 1 ? "length 224" : "224x224";
      }
      g.reason = "channels " + std::to_string(channels) + " from " + pathOf(n->input(1)) + " " +
                 shapeText(sizesOf(*w)) + " (" + (transposed ? "transposed " : "") + "convolution); batch 1 and " +
                 sizes + " are defaults: the saved graph does not record them";
      return withDtype(g, *w);
    }
    // x @ W: linear stores W as [out, in], matmul as [in, out].
    const bool linear = kind == "aten::linear";
    if ((linear || kind == "aten::matmul") && offset == 0 && n->inputs().size() > 1) {
      auto w = weight(n->input(1));
      if (!w || w->dim() != 2) return std::nullopt;
      const int64_t features = w->size(linear ? 1 : 0);
      ModelInfo::InputGuess g;
      g.shape = {1, features};
      g.reason = "features " + std::to_string(features) + " from " + pathOf(n->input(1)) + " " +
                 shapeText(sizesOf(*w)) + (linear ? " (linear)" : " (matmul)") + "; batch 1 is a default";
      return withDtype(g, *w);
    }
    if (kind == "aten::embedding" && offset == 1) {
      auto w = weight(n->input(0));
      ModelInfo::InputGuess g;
      g.shape = {1, kSequenceLength};
      g.dtype = DType::Int64;
      g.reason = "token indices (int64) for " + (w ? pathOf(n->input(0)) + " " + shapeText(sizesOf(*w)) : "an embedding") +
                 "; batch 1 and length 16 are defaults";
      return g;
    }
    if ((kind == "aten::lstm" || kind == "aten::gru" || kind == "aten::rnn_tanh" || kind == "aten::rnn_relu") &&
        offset == 0 && n->inputs().size() >= 9) {
      const Node* params = n->input(2)->node();
      if (params->kind() != c10::prim::ListConstruct || params->inputs().empty()) return std::nullopt;
      auto w = weight(params->input(0));
      auto batch_first = constBool(n->input(8));
      if (!w || w->dim() != 2 || !batch_first) return std::nullopt;
      ModelInfo::InputGuess g;
      const int64_t f = w->size(1);
      g.shape = *batch_first ? std::vector<int64_t>{1, kSequenceLength, f} : std::vector<int64_t>{kSequenceLength, 1, f};
      g.reason = "features " + std::to_string(f) + " from " + pathOf(params->input(0)) + " " + shapeText(sizesOf(*w)) +
                 " (" + kind.substr(6) + ", batch_first=" + (*batch_first ? "True" : "False") +
                 "); batch 1 and sequence length 16 are defaults";
      return withDtype(g, *w);
    }
    if ((kind == "aten::view" || kind == "aten::reshape") && offset == 0 && n->inputs().size() == 2) {
      auto listed = constIntList(n->input(1));
      if (!listed) return std::nullopt;
      std::vector<int64_t> sizes = *listed;
      int unknown = 0;
      for (size_t d = 0; d < sizes.size(); ++d)
        if (sizes[d] < 0) unknown += d == 0 ? 1 : 2;  // only a leading -1 reads as "the batch"
      if (sizes.empty() || unknown > 1) return std::nullopt;
      if (sizes[0] < 0) sizes[0] = 1;
      ModelInfo::InputGuess g;
      g.shape = sizes;
      g.reason = std::string("the constant sizes of ") + kind.substr(6) + " " + shapeText(*listed) +
                 " that the input goes into" + (unknown ? "; batch 1 is a default" : " (baked by the trace)");
      return g;
    }
    return std::nullopt;
  }

  const torch::jit::Module& module_;
  std::shared_ptr<torch::jit::Graph> graph_;
  std::unordered_map<const Value*, c10::IValue> objects_;
  std::unordered_map<const Value*, std::string> paths_;
};

}  // namespace

std::map<std::string, ModelInfo::InputGuess> guessInputShapes(const torch::jit::Module& module) {
  try {
    return Guesser(module).run();
  } catch (const std::exception&) {
    return {};  // a guess is a convenience: a graph it cannot read leaves the form at its plain default
  }
}

}  // namespace oxport
