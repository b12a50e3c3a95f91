#include "convert/driver.h"

#include <optional>
#include <set>

#include "convert/args.h"
#include "convert/registry.h"

namespace oxport::convert {

namespace {

std::string opTypeOf(const std::string& kind) {
  auto p = kind.find("::");
  return p == std::string::npos ? kind : kind.substr(p + 2);
}

// The domain of an op kept as a node: PyTorch's own namespaces as torch.onnx names them
// ("org.pytorch.aten"); another library's namespace is the domain itself ("torchvision",
// "my_vendor"), with its version from custom_opsets.
std::string domainOf(const std::string& kind) {
  auto p = kind.find("::");
  std::string ns = p == std::string::npos ? "custom" : kind.substr(0, p);
  if (ns == "aten" || ns == "prim" || ns == "quantized" || ns == "custom") return "org.pytorch." + ns;
  return ns;
}

bool isStructural(const std::string& kind) { return kind.rfind("prim::", 0) == 0; }

// Ops that only a model converted to int8 records (convert / convert_fx / quantize_dynamic): they
// take packed fbgemm/qnnpack weights (quantized::conv2d, linear_dynamic, aten::quantized_lstm ...).
bool isConvertedQuantizedOp(const std::string& kind) {
  return kind.rfind("quantized::", 0) == 0 || kind.rfind("aten::quantized_", 0) == 0;
}

// ATen ops whose result shares the input's memory.
bool isViewOp(const std::string& kind) {
  static const std::set<std::string> views = {
      "aten::slice", "aten::select", "aten::narrow", "aten::view", "aten::_reshape_alias", "aten::transpose",
      "aten::permute", "aten::t", "aten::unsqueeze", "aten::squeeze", "aten::expand", "aten::expand_as",
      "aten::as_strided", "aten::diagonal", "aten::unfold", "aten::view_as", "aten::movedim", "aten::alias",
      "aten::unflatten", "aten::real", "aten::imag", "aten::swapaxes", "aten::swapdims", "aten::detach"};
  return views.count(kind) != 0;
}

// aten::add_, aten::copy_ ...; not the dunder forms (aten::__iand__ is handled as a value op).
bool isInplaceOp(const std::string& kind) {
  if (kind.rfind("aten::", 0) != 0 || kind.size() < 8 || kind.back() != '_') return false;
  return kind.compare(kind.size() - 2, 2, "__") != 0;
}

// Converters are functional: an in-place op's result is a new value. When its target is a view
// (`y[:, i] = v` traces as copy_/index_put_ on a select of a slice of y) the write belongs to the
// viewed tensor, and nothing carries it there. Where that tensor (or the view) is read anywhere
// else, or is an output, the exported model would silently miss the write: an error instead.
std::optional<Diagnostic> inplaceViewWrite(Context& ctx, const ts::Node& n) {
  if (!isInplaceOp(n.kind) || n.inputs.empty()) return std::nullopt;
  const ts::Value* target = n.inputs[0];
  if (!target->producer || !isViewOp(target->producer->kind)) return std::nullopt;
  std::set<const ts::Node*> chain{&n};
  std::vector<const ts::Value*> values{target};
  std::string views;
  for (const ts::Value* v = target; v->producer && isViewOp(v->producer->kind); v = v->producer->inputs[0]) {
    chain.insert(v->producer);
    values.push_back(v->producer->inputs[0]);
    views += (views.empty() ? "" : " of ") + v->producer->kind;
  }
  const ts::Value* base = values.back();
  bool observed = false;
  for (const ts::Value* v : values) {
    for (const ts::Node* u : v->users) observed = observed || !chain.count(u);
    for (const ts::Value* o : ctx.graph().outputs) observed = observed || o == v;
    for (const ts::Value* in : ctx.graph().inputs) observed = observed || in == v;
  }
  if (!observed) return std::nullopt;
  const std::string what = base->name.empty() ? "a tensor" : "'" + base->name + "'";
  return n.error("inplace-view-write",
                 n.kind + " writes in place into a view of " + what + " (" + views +
                     "); the exported graph would not carry the write into " + what + ", so it is refused",
                 "write it functionally, e.g. y = torch.cat([...]) or y = y.index_put((idx,), v) / "
                 "torch.where(mask, v, y), or build the tensor with torch.stack");
}

// An in-place op left in the graph (RemoveTensorMutation declines some, e.g. index_put_ on a clone
// of an input in a scripted model: `y = x.clone(); y[i] = v`) writes into its target, which later
// nodes and the outputs read. Converters are functional, so the target's later readers are pointed
// at the op's result. Earlier readers were converted before and keep the old value; a binding made
// inside an If/Loop body stays inside it (Context::popGraph). Views are inplaceViewWrite's case.
void carryInplaceWrite(Context& ctx, const ts::Node& n) {
  if (!isInplaceOp(n.kind) || n.inputs.empty() || n.outputs.empty()) return;
  const ts::Value* target = n.inputs[0];
  if (!target->isTensor() || !n.outputs[0]->isTensor()) return;
  if (target->producer && isViewOp(target->producer->kind)) return;
  if (auto name = ctx.boundName(n.outputs[0])) ctx.bind(target, *name);
}

// Does the node read or make a complex value (a tensor, or a list of them)? Such a node converts
// only through a converter registered with addComplex (docs/ARCHITECTURE.md, "Complex values").
bool touchesComplex(const ts::Node& n) {
  auto cplx = [](const ts::Value* v) {
    if (v->meta.complex) return true;
    for (const auto& m : v->elem_meta)
      if (m.complex) return true;
    return false;
  };
  for (const auto* v : n.inputs)
    if (cplx(v)) return true;
  for (const auto* v : n.outputs)
    if (cplx(v)) return true;
  return false;
}

// prim:: plumbing that only passes the values' names along keeps its real converter.
bool complexTransparent(const std::string& kind) {
  return kind == "prim::ListConstruct" || kind == "prim::ListUnpack" || kind == "prim::TupleConstruct" ||
         kind == "prim::TupleUnpack";
}

}  // namespace

// Unsupported op kept as a node (ONNX_FALLTHROUGH) or as an ATen op (ONNX_ATEN*): dynamic
// inputs stay inputs, static arguments become attributes named after the schema.
Status emitFallback(Context& ctx, const ts::Node& n, bool aten_form) {
  std::vector<std::string> inputs;
  std::vector<onnx_ir::Attribute> attrs;
  if (aten_form) {
    attrs.push_back(attrString("operator", opTypeOf(n.kind)));
    auto dot = n.schema.find('.');
    auto paren = n.schema.find('(');
    if (dot != std::string::npos && paren != std::string::npos && dot < paren)
      attrs.push_back(attrString("overload_name", n.schema.substr(dot + 1, paren - dot - 1)));
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ts::Value* in = n.inputs[i];
    std::string an = i < n.arg_names.size() && !n.arg_names[i].empty() ? n.arg_names[i] : "arg" + std::to_string(i);
    if (in->constant && !in->constant->isTensor()) {
      const auto& c = *in->constant;
      if (c.isNone()) continue;
      if (c.isBool() || c.isInt()) attrs.push_back(attrInt(an, c.toInt()));
      else if (c.isDouble()) attrs.push_back(attrFloat(an, static_cast<float>(c.toDouble())));
      else if (c.isString()) attrs.push_back(attrString(an, c.str()));
      else if (c.isList()) {
        bool ints = true;
        for (const auto& e : c.list()) ints = ints && (e.isInt() || e.isBool());
        if (ints) {
          std::vector<int64_t> v;
          for (const auto& e : c.list()) v.push_back(e.toInt());
          attrs.push_back(attrInts(an, v));
        } else {
          std::vector<float> v;
          for (const auto& e : c.list()) v.push_back(static_cast<float>(e.toDouble()));
          attrs.push_back(attrFloats(an, v));
        }
      }
      continue;
    }
    if (in->type == ts::ValueType::List && !in->constant) {
      auto names = ctx.tensorList(in);
      if (!names.ok()) return names.error();
      for (auto& s : *names) inputs.push_back(s);
      continue;
    }
    auto s = ctx.tensor(in);
    if (!s.ok()) return s.error();
    inputs.push_back(*s);
  }
  std::string op = aten_form ? "ATen" : opTypeOf(n.kind);
  std::string domain = aten_form ? "org.pytorch.aten" : domainOf(n.kind);
  int nout = static_cast<int>(n.outputs.size());
  auto outs = ctx.emit(op, inputs, nout, std::move(attrs), domain);
  for (int i = 0; i < nout; ++i) {
    const ts::Value* o = n.outputs[static_cast<size_t>(i)];
    if (o->type == ts::ValueType::List) ctx.bindList(o, {outs[static_cast<size_t>(i)]});
    else ctx.bind(o, outs[static_cast<size_t>(i)]);
  }
  return okStatus();
}

Status convertNodes(Context& ctx, const std::vector<const ts::Node*>& nodes, std::vector<Diagnostic>& warnings,
                    const ProgressFn* progress, const CancelToken* cancel) {
  const auto& registry = builtinRegistry();
  const int opset = ctx.opset();
  const auto mode = ctx.settings().export_type;
  const ts::Node* outer = ctx.current();
  std::vector<Diagnostic> convert_errors;
  std::set<const ts::Node*> failed;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ts::Node* n = nodes[i];
    if (cancel && cancel->cancelled()) {
      ctx.setCurrent(outer);
      return Error("cancelled", "the export was cancelled");
    }
    if (progress && *progress && i % 64 == 0)
      (*progress)(Phase::Convert, static_cast<double>(i) / nodes.size(), n->kind);
    ctx.setCurrent(n);
    bool inputs_ok = true;
    for (const auto* in : n->inputs)
      if (in->producer && failed.count(in->producer)) inputs_ok = false;
    if (!inputs_ok) {
      failed.insert(n);
      continue;
    }
    const bool aten_op = n->kind.rfind("aten::", 0) == 0;
    if (mode == OperatorExportType::OnnxAten && aten_op) {
      Status s = emitFallback(ctx, *n, true);
      if (!s.ok()) { convert_errors.insert(convert_errors.end(), s.error().diagnostics().begin(), s.error().diagnostics().end()); failed.insert(n); }
      continue;
    }
    const bool cplx = touchesComplex(*n) && !complexTransparent(n->kind);
    const OpEntry* entry = registry.find(n->kind, opset, cplx);
    Status s = okStatus();
    if (auto d = inplaceViewWrite(ctx, *n)) {
      s = Error(*d);
    } else if (cplx && !entry) {
      s = n->error("complex-value",
                   "complex values reach " + n->kind + ", which converts real tensors only (complex values are "
                       "(real, imag) pairs in the exported graph)",
                   "take the real parts first (x.abs(), x.real, torch.view_as_real(x)), or see docs/COVERAGE.md "
                   "for the ops that take complex values");
    } else if (entry) {
      try {
        s = entry->fn(ctx, *n);
      } catch (const MissingArgument& e) {  // an overload without an argument the converter reads
        s = Error(e.diagnostic);
      } catch (const std::exception& e) {  // a converter's bug: said at the node, not as a crash
        s = n->error("internal", "converting " + n->kind + " failed: " + e.what(),
                     "this is a bug in oxport; please report it with the model. Nothing was written.");
      }
      ctx.setCurrent(n);  // a converter with blocks converts nested nodes
      if (s.ok()) carryInplaceWrite(ctx, *n);
    } else {
      int need = registry.minOpset(n->kind);
      const RefusedOp* refused = refusedOp(n->kind);
      Diagnostic d = isConvertedQuantizedOp(n->kind)
                         ? n->error("quantized-model",
                                    n->kind + " is an op of a model converted to int8 (torch.ao.quantization.convert, "
                                              "convert_fx or quantize_dynamic): its weights are packed fbgemm/qnnpack "
                                              "objects, which oxport does not convert",
                                    "export the model before convert: the quantization-aware model from prepare_qat / "
                                    "prepare_qat_fx with model.apply(torch.ao.quantization.disable_observer); its fake "
                                    "quantization becomes QuantizeLinear/DequantizeLinear pairs (for quantize_dynamic, "
                                    "export the float model)")
                     : refused ? n->error("refused-op", n->kind + " is refused on purpose: " + refused->reason,
                                        refused->action)
                     : need > opset
                         ? ctx.needsOpset(need, n->kind)
                         : n->error("unsupported-op", "no ONNX conversion for " + n->kind + " (opset " +
                                                          std::to_string(opset) + ")",
                                    "see `oxport ops` for what converts; with operator_export_type "
                                    "ONNX_FALLTHROUGH or ONNX_ATEN_FALLBACK the op is kept as a custom node");
      if (need > 0 && need < opset) {
        d = n->error("unsupported-op", n->kind + " has no conversion at opset " + std::to_string(opset));
      }
      s = Error(d);
    }
    if (!s.ok()) {
      // A node without outputs changes its input in place (list.sort()): a custom node in its
      // place would compute nothing that the rest of the graph reads.
      bool fallback_ok = !isStructural(n->kind) && !n->outputs.empty() &&
                         (mode == OperatorExportType::OnnxFallthrough || mode == OperatorExportType::OnnxAtenFallback) &&
                         s.error().code() != "internal" && s.error().code() != "dynamic-argument" &&
                         s.error().code() != "inplace-view-write" &&
                         s.error().code() != "quantized-model" &&  // packed weights: no custom node could take them
                         s.error().code() != "complex-value";  // ONNX has no complex tensor to hand on  // a custom node would lose the write too
      if (fallback_ok) {
        // Any half-emitted nodes of the failed converter are dead and removed later.
        bool aten_form = mode == OperatorExportType::OnnxAtenFallback && aten_op;
        Status fs = emitFallback(ctx, *n, aten_form);
        if (fs.ok()) {
          carryInplaceWrite(ctx, *n);
          Diagnostic w = n->warning("fallback-op",
                                    n->kind + " was kept as a " + (aten_form ? "ATen" : "custom-domain") +
                                        " node: " + s.error().first().message,
                                    "runtimes without this op cannot run the model; export with a newer "
                                    "opset or change the model to use supported ops");
          warnings.push_back(w);
          continue;
        }
      }
      for (const auto& d : s.error().diagnostics()) convert_errors.push_back(d);
      failed.insert(n);
    }
  }
  ctx.setCurrent(outer);
  if (!convert_errors.empty()) return Error(convert_errors);
  return okStatus();
}

}  // namespace oxport::convert
