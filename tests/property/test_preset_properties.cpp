// Properties of the preset format and the compact tensor spec (rapidcheck):
//  - every valid preset round-trips through JSON;
//  - every tensor spec round-trips through its compact text form;
//  - no mutation of a valid preset (as JSON or as bytes) makes parsePreset throw, and every error
//    it reports says what and where; whatever it accepts round-trips too.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <ostream>
#include <set>

#include <nlohmann/json.hpp>

#include "oxport/preset.h"

namespace oxport {

// Counterexamples print as the preset text / compact spec rapidcheck found.
void showValue(const Preset& p, std::ostream& os) { os << presetToJson(p); }
void showValue(const TensorSpec& t, std::ostream& os) { os << formatTensorSpec(t); }

namespace {

using json = nlohmann::ordered_json;
using namespace rc;

// Names built from pieces that stress escaping and key paths: quotes, backslashes, dots, blanks,
// ':' (the spec separator), multi-byte UTF-8.
Gen<std::string> genName() {
  static const std::vector<std::string> pieces = {"a", "x",  "input", "_", "0",  "7",  ".",  "-", " ",  "\"",
                                                  "\\", "/", "\xc3\xa9" /* é */, "\xe4\xb8\xad" /* 中 */,
                                                  "\n", ":", "{",  "}",  "[0]", "npy="};
  return gen::map(gen::resize(12, gen::nonEmpty(gen::container<std::vector<std::string>>(gen::elementOf(pieces)))),
                  [](const std::vector<std::string>& parts) {
                    std::string s;
                    for (const std::string& p : parts) s += p;
                    return s;
                  });
}

// Any valid UTF-8 text, control characters and NUL included (JSON text is UTF-8, so only such
// strings can be stored; savePreset refuses others).
Gen<std::string> genUtf8() {
  auto code_point = gen::weightedOneOf<uint32_t>({{6, gen::inRange<uint32_t>(0, 0x80)},
                                                  {2, gen::inRange<uint32_t>(0x80, 0x800)},
                                                  {2, gen::inRange<uint32_t>(0x800, 0xd800)},
                                                  {1, gen::inRange<uint32_t>(0xe000, 0x10000)},
                                                  {1, gen::inRange<uint32_t>(0x10000, 0x110000)}});
  return gen::map(gen::container<std::vector<uint32_t>>(code_point), [](const std::vector<uint32_t>& cps) {
    std::string s;
    for (uint32_t c : cps) {
      if (c < 0x80) {
        s += static_cast<char>(c);
      } else if (c < 0x800) {
        s += static_cast<char>(0xc0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3f));
      } else if (c < 0x10000) {
        s += static_cast<char>(0xe0 | (c >> 12));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (c & 0x3f));
      } else {
        s += static_cast<char>(0xf0 | (c >> 18));
        s += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (c & 0x3f));
      }
    }
    return s;
  });
}

// A name without leading or trailing blanks (the compact form trims those).
Gen<std::string> genPathName() {
  return gen::suchThat(genName(), [](const std::string& s) {
    auto blank = [](char c) { return c == ' ' || c == '\t'; };
    return !blank(s.front()) && !blank(s.back());
  });
}

Gen<int64_t> genDim() {
  return gen::weightedOneOf<int64_t>({{8, gen::inRange<int64_t>(0, 513)}, {1, gen::positive<int64_t>()}});
}

Gen<TensorSpec> genTensorSpec() {
  return gen::exec([] {
    TensorSpec t;
    t.shape = *gen::mapcat(gen::inRange(0, 6), [](int n) { return gen::container<std::vector<int64_t>>(n, genDim()); });
    t.dtype = *gen::element(DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                            DType::UInt8, DType::Int16, DType::Int32, DType::Int64, DType::Bool);
    t.fill = *gen::element(FillKind::Randn, FillKind::Rand, FillKind::Zeros, FillKind::Ones, FillKind::Arange,
                           FillKind::Npy, FillKind::Smooth);
    t.seed = *gen::weightedOneOf<uint64_t>({{3, gen::just<uint64_t>(0)}, {1, gen::arbitrary<uint64_t>()}});
    if (t.fill == FillKind::Npy) t.npy = *genPathName();
    return t;
  });
}

Gen<ArgValue> genArg(int depth) {
  auto leaf = gen::oneOf(
      gen::just(ArgValue::none()), gen::map(gen::arbitrary<bool>(), &ArgValue::boolean),
      gen::map(gen::arbitrary<int64_t>(), &ArgValue::integer),
      gen::map(gen::suchThat(gen::arbitrary<double>(), [](double d) { return std::isfinite(d); }), &ArgValue::number),
      gen::map(genUtf8(), [](std::string s) { return ArgValue::string(std::move(s)); }),
      gen::map(genName(), [](std::string s) { return ArgValue::string(std::move(s)); }),
      gen::map(genTensorSpec(), &ArgValue::tensor));
  if (depth == 0) return leaf;
  auto list = gen::map(gen::mapcat(gen::inRange(0, 4),
                                   [depth](int n) { return gen::container<std::vector<ArgValue>>(n, genArg(depth - 1)); }),
                       &ArgValue::list);
  return gen::weightedOneOf<ArgValue>({{4, leaf}, {1, list}});
}

// `n` distinct names, in generation order.
std::vector<std::string> distinctNames(int max_count) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  const int n = *gen::inRange(0, max_count + 1);
  for (int i = 0; i < n; ++i) {
    std::string s = *genName();
    if (seen.insert(s).second) names.push_back(std::move(s));
  }
  return names;
}

// Presets that validateOptions accepts.
Gen<Preset> genPreset() {
  return gen::exec([] {
    Preset p;
    if (*gen::arbitrary<bool>()) p.model = *genName();
    if (*gen::arbitrary<bool>()) p.output = *genName();
    ExportOptions& o = p.options;
    o.args = *gen::mapcat(gen::inRange(0, 5), [](int n) { return gen::container<std::vector<ArgValue>>(n, genArg(2)); });
    for (std::string& name : distinctNames(3)) o.kwargs.emplace_back(std::move(name), *genArg(1));
    o.export_params = *gen::arbitrary<bool>();
    o.verbose = *gen::arbitrary<bool>();
    o.training = *gen::element(TrainingMode::Eval, TrainingMode::Preserve, TrainingMode::Training);
    o.input_names = distinctNames(3);
    o.output_names = distinctNames(3);
    o.operator_export_type = *gen::element(OperatorExportType::Onnx, OperatorExportType::OnnxFallthrough,
                                           OperatorExportType::OnnxAten, OperatorExportType::OnnxAtenFallback);
    o.opset_version = *gen::inRange(kMinOpset, kMaxOpset + 1);
    o.do_constant_folding = *gen::arbitrary<bool>();
    for (std::string& name : distinctNames(3)) {
      DynamicAxisSpec spec;
      spec.list_form = *gen::arbitrary<bool>();
      const int n = *gen::inRange(0, 4);
      for (int i = 0; i < n; ++i) {
        const int64_t axis = *gen::weightedOneOf<int64_t>({{5, gen::inRange<int64_t>(0, 8)}, {1, gen::positive<int64_t>()}});
        spec.axes[axis] = spec.list_form ? std::string() : *gen::oneOf(gen::just(std::string()), genName());
      }
      o.dynamic_axes[name] = std::move(spec);
    }
    if (*gen::arbitrary<bool>()) o.keep_initializers_as_inputs = *gen::arbitrary<bool>();
    for (const std::string& domain : distinctNames(3)) {
      if (domain == "ai.onnx") continue;
      o.custom_opsets[domain] = *gen::weightedOneOf<int64_t>({{5, gen::inRange<int64_t>(1, 30)}, {1, gen::positive<int64_t>()}});
    }
    o.graph_mode = *gen::element(GraphMode::Script, GraphMode::Trace);
    return p;
  });
}

std::string describeAll(const Error& e) { return e.message(); }

RC_GTEST_PROP(PresetProperty, GeneratedPresetsAreValid, ()) {
  const Preset p = *genPreset();
  const auto ds = validateOptions(p.options);
  if (!ds.empty()) RC_FAIL(describeAll(Error(ds)));
}

RC_GTEST_PROP(PresetProperty, RoundTripsThroughJson, ()) {
  const Preset p = *genPreset();
  const std::string text = presetToJson(p);
  const auto r = parsePreset(text);
  if (!r.ok()) RC_FAIL(describeAll(r.error()) + "\nfor:\n" + text);
  RC_ASSERT(r.value() == p);
  RC_ASSERT(presetToJson(r.value()) == text);
}

RC_GTEST_PROP(TensorSpecProperty, RoundTripsThroughCompactText, ()) {
  const TensorSpec spec = *genTensorSpec();
  const std::string text = formatTensorSpec(spec);
  const auto r = parseTensorSpec(text);
  if (!r.ok()) RC_FAIL(describeAll(r.error()));
  RC_ASSERT(r.value() == spec);
}

RC_GTEST_PROP(TensorSpecProperty, AnyTextParsesOrExplains, (const std::string& text)) {
  const auto r = parseTensorSpec(text);
  if (!r.ok()) {
    RC_ASSERT(!r.error().first().message.empty());
    RC_ASSERT(!r.error().first().hint.empty());
  }
}

// ---- mutations ----

Gen<json> genJson(int depth) {
  static const std::vector<std::string> strings = {"",      "EVAL",  "TRAINING", "float32", "flaot32", "randn",
                                                   "npy",   "-1",    "0",        "x",       "batch",   "oxport-preset",
                                                   "ONNX",  "1x3",   "ai.onnx",  "\xff"};
  static const std::vector<std::string> keys = {"tensor", "shape", "dtype", "fill", "seed", "npy", "0", "-1", "a",
                                                "x",      "",      "format", "version", "args", "kwargs"};
  auto leaf = gen::oneOf(
      gen::just(json(nullptr)), gen::map(gen::arbitrary<bool>(), [](bool b) { return json(b); }),
      gen::map(gen::inRange<int64_t>(-3, 20), [](int64_t i) { return json(i); }),
      gen::map(gen::arbitrary<int64_t>(), [](int64_t i) { return json(i); }),
      gen::map(gen::arbitrary<uint64_t>(), [](uint64_t u) { return json(u); }),
      gen::map(gen::suchThat(gen::arbitrary<double>(), [](double d) { return std::isfinite(d); }),
               [](double d) { return json(d); }),
      gen::map(gen::elementOf(strings), [](const std::string& s) { return json(s); }));
  if (depth == 0) return leaf;
  auto array = gen::map(
      gen::mapcat(gen::inRange(0, 4), [depth](int n) { return gen::container<std::vector<json>>(n, genJson(depth - 1)); }),
      [](const std::vector<json>& items) {
        json a = json::array();
        for (const json& x : items) a.push_back(x);
        return a;
      });
  auto object = gen::map(gen::mapcat(gen::inRange(0, 4),
                                     [depth](int n) {
                                       return gen::container<std::vector<std::pair<std::string, json>>>(
                                           n, gen::pair(gen::elementOf(keys), genJson(depth - 1)));
                                     }),
                         [](const std::vector<std::pair<std::string, json>>& items) {
                           json o = json::object();
                           for (const auto& [k, v] : items) o[k] = v;
                           return o;
                         });
  return gen::weightedOneOf<json>({{6, leaf}, {1, array}, {1, object}});
}

void collectPointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      out.push_back(at / k);
      collectPointers(v, at / k, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      out.push_back(at / i);
      collectPointers(j[i], at / i, out);
    }
  }
}

// One random structural edit somewhere below the root: replace, remove, rename, or add a key.
void mutate(json& root) {
  static const std::vector<std::string> new_keys = {
      "opset_version", "args",  "kwargs", "dynamic_axes", "custom_opsets", "tensor", "shape", "dtype", "fill",
      "seed",          "npy",   "training", "format",     "version",       "opset",  "0",     "x",     ""};
  std::vector<json::json_pointer> pointers;
  collectPointers(root, json::json_pointer(), pointers);
  const int op = pointers.empty() ? 3 : *gen::inRange(0, 4);
  if (op == 3) {  // add a key to some object
    std::vector<json::json_pointer> objects = {json::json_pointer()};
    for (const auto& p : pointers)
      if (root.at(p).is_object()) objects.push_back(p);
    json& target = root[*gen::elementOf(objects)];
    target[*gen::elementOf(new_keys)] = *genJson(2);
    return;
  }
  const json::json_pointer p = *gen::elementOf(pointers);
  if (op == 0) {
    root[p] = *genJson(2);
    return;
  }
  json& parent = root[p.parent_pointer()];
  const std::string last = p.back();
  if (parent.is_array()) {
    const size_t index = std::stoul(last);
    if (op == 1) parent.erase(index);
    else parent[index] = json::array({parent[index]});  // wrap it in a list
    return;
  }
  json value = parent[last];
  parent.erase(last);
  if (op == 2) parent[*gen::elementOf(new_keys)] = std::move(value);  // rename
}

void checkOutcome(const std::string& text, bool structural) {
  Result<Preset> r = Preset{};
  try {
    r = parsePreset(text);
  } catch (const std::exception& e) {
    RC_FAIL(std::string("parsePreset threw: ") + e.what() + "\nfor:\n" + text);
  }
  if (r.ok()) {
    // Whatever is accepted saves and reads back the same.
    const auto again = parsePreset(presetToJson(r.value()));
    if (!again.ok()) RC_FAIL(describeAll(again.error()) + "\nafter accepting:\n" + text);
    RC_ASSERT(again.value() == r.value());
    return;
  }
  RC_ASSERT(!r.error().diagnostics().empty());
  for (const Diagnostic& d : r.error().diagnostics()) {
    RC_ASSERT(d.severity == Severity::Error);
    RC_ASSERT(!d.code.empty());
    RC_ASSERT(!d.message.empty());
    RC_ASSERT(!d.hint.empty());
    // Valid JSON: every error is about some key, and says which.
    if (structural) RC_ASSERT(!d.option.empty());
  }
}

RC_GTEST_PROP(PresetProperty, JsonMutationsNeverCrash, ()) {
  json root = json::parse(presetToJson(*genPreset()));
  const int edits = *gen::inRange(1, 5);
  for (int i = 0; i < edits; ++i) mutate(root);
  checkOutcome(root.dump(2, ' ', false, json::error_handler_t::replace), true);
}

RC_GTEST_PROP(PresetProperty, ByteMutationsNeverCrash, ()) {
  std::string text = presetToJson(*genPreset());
  static const std::string alphabet = "{}[]\",:.-+0123456789eEtrunlfas \n\\/\x01\xff";
  const int edits = *gen::inRange(1, 4);
  for (int i = 0; i < edits; ++i) {
    const size_t at = *gen::inRange<size_t>(0, text.size() + 1);
    switch (*gen::inRange(0, 3)) {
      case 0: text.erase(at, *gen::inRange<size_t>(1, 6)); break;
      case 1: text.insert(at, 1, *gen::elementOf(alphabet)); break;
      default:
        if (at < text.size()) text[at] = *gen::elementOf(alphabet);
    }
  }
  checkOutcome(text, false);
}

}  // namespace
}  // namespace oxport
