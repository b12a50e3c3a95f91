#include "formstate.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <functional>
#include <sstream>

namespace oxport::studio {
namespace {

std::string trim(std::string s) {
  auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), sp));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), sp).base(), s.end());
  return s;
}

bool startsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// Splits "A, B[C, D], E" at top-level commas.
std::vector<std::string> splitTop(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) parts.push_back(trim(cur));
  return parts;
}

bool isIntType(const std::string& t) { return t == "int" || t == "SymInt"; }
bool isFloatType(const std::string& t) { return t == "float" || t == "number" || t == "Scalar"; }

std::optional<int64_t> toInt(const std::string& s) {
  std::string t = trim(s);
  int64_t v = 0;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size() || t.empty()) return std::nullopt;
  return v;
}

std::optional<double> toDouble(const std::string& s) {
  std::string t = trim(s);
  if (t.empty()) return std::nullopt;
  std::istringstream in(t);
  in.imbue(std::locale::classic());
  double v = 0;
  in >> v;
  if (in.fail() || !in.eof()) return std::nullopt;
  return v;
}

std::string typeOfValue(const ArgValue& v) {
  switch (v.v.index()) {
    case 0: return "NoneType";
    case 1: return "bool";
    case 2: return "int";
    case 3: return "float";
    case 4: return "str";
    case 5: return "Tensor";
    default: {
      const auto& l = std::get<ArgValue::List>(v.v);
      bool tensors = !l.empty() && std::all_of(l.begin(), l.end(), [](const ArgValue& x) { return x.isTensor(); });
      if (tensors) return "List[Tensor]";
      bool ints = std::all_of(l.begin(), l.end(), [](const ArgValue& x) { return x.v.index() == 2; });
      return ints ? "List[int]" : "List[float]";
    }
  }
}

ArgRow rowFor(const ArgumentInfo& a) {
  ArgRow r;
  r.name = a.name;
  r.type = a.type;
  r.kind = argTypeOf(a.type);
  r.has_default = a.has_default;
  r.default_value = a.default_value;
  r.keyword_only = a.keyword_only;
  return r;
}

}  // namespace

ArgType argTypeOf(const std::string& type_in) {
  std::string t = trim(type_in);
  ArgType r;
  if (startsWith(t, "Optional[") && t.back() == ']') {
    r = argTypeOf(t.substr(9, t.size() - 10));
    r.optional = true;
    return r;
  }
  if (t == "Tensor") {
    r.kind = ArgKind::Tensor;
  } else if (isIntType(t) || t == "int64_t") {
    r.kind = ArgKind::Int;
  } else if (isFloatType(t) || t == "double") {
    r.kind = ArgKind::Float;
  } else if (t == "bool") {
    r.kind = ArgKind::Bool;
  } else if (t == "str") {
    r.kind = ArgKind::String;
  } else if (t == "NoneType" || t == "None") {
    r.kind = ArgKind::None;
  } else if (t == "List[Tensor]" || t == "Tensor[]") {
    r.kind = ArgKind::TensorList;
  } else if (t == "List[int]" || t == "int[]" || t == "List[float]" || t == "float[]") {
    r.kind = ArgKind::NumberList;
  } else if (startsWith(t, "Tuple[") && t.back() == ']') {
    auto parts = splitTop(t.substr(6, t.size() - 7));
    bool tensors = !parts.empty() && std::all_of(parts.begin(), parts.end(), [](auto& p) { return p == "Tensor"; });
    bool numbers = !parts.empty() && std::all_of(parts.begin(), parts.end(),
                                                 [](auto& p) { return isIntType(p) || isFloatType(p); });
    if (tensors) r.kind = ArgKind::TensorList;
    if (numbers) r.kind = ArgKind::NumberList;
    if (tensors || numbers) r.fixed_count = static_cast<int>(parts.size());
  }
  return r;
}

const char* argKindLabel(ArgKind k) {
  switch (k) {
    case ArgKind::Tensor: return "tensor";
    case ArgKind::TensorList: return "list of tensors";
    case ArgKind::Int: return "number (int)";
    case ArgKind::Float: return "number (float)";
    case ArgKind::Bool: return "bool";
    case ArgKind::String: return "str";
    case ArgKind::NumberList: return "list of numbers";
    case ArgKind::None: return "None";
    case ArgKind::Other: return "other";
  }
  return "other";
}

const char* passingLabel(Passing p) {
  switch (p) {
    case Passing::Positional: return "positional";
    case Passing::Keyword: return "keyword";
    case Passing::Default: return "default";
  }
  return "default";
}

ArgValue defaultValueFor(const ArgumentInfo& a, const ModelInfo* info) {
  ArgType t = argTypeOf(a.type);
  const std::string dv = trim(a.default_value);
  auto tensor = [&](const std::vector<int64_t>& shape) {
    TensorSpec s;
    s.shape = shape;
    return ArgValue::tensor(s);
  };
  switch (t.kind) {
    case ArgKind::Tensor: {
      std::vector<int64_t> shape{1};
      if (info) {
        auto it = info->input_guesses.find(a.name);
        if (it != info->input_guesses.end()) {
          TensorSpec s;
          s.shape = it->second.shape;
          s.dtype = it->second.dtype;
          return ArgValue::tensor(s);
        }
      }
      return tensor(shape);
    }
    case ArgKind::TensorList: {
      ArgValue::List l(std::max(1, t.fixed_count), tensor({1}));
      return ArgValue::list(l);
    }
    case ArgKind::Int:
      if (a.has_default)
        if (auto v = toInt(dv)) return ArgValue::integer(*v);
      return ArgValue::integer(0);
    case ArgKind::Float:
      if (a.has_default)
        if (auto v = toDouble(dv)) return ArgValue::number(*v);
      return ArgValue::number(0.0);
    case ArgKind::Bool: return ArgValue::boolean(a.has_default && dv == "True");
    case ArgKind::String: {
      std::string s = dv;
      if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
      return ArgValue::string(a.has_default && dv != "None" ? s : std::string());
    }
    case ArgKind::NumberList: {
      if (a.has_default)
        if (auto l = parseNumberList(dv)) return ArgValue::list(*l);
      ArgValue::List l(std::max(0, t.fixed_count), ArgValue::integer(0));
      return ArgValue::list(l);
    }
    case ArgKind::None:
    case ArgKind::Other: break;
  }
  return ArgValue::none();
}

std::vector<ArgRow> rowsFromOptions(const ModelInfo* info, const ExportOptions& o) {
  std::vector<ArgRow> rows;
  std::vector<bool> kw_used(o.kwargs.size(), false);
  size_t schema = info ? info->arguments.size() : 0;
  for (size_t i = 0; i < schema; ++i) {
    const ArgumentInfo& a = info->arguments[i];
    ArgRow r = rowFor(a);
    if (i < o.args.size()) {
      r.passing = Passing::Positional;
      r.value = o.args[i];
    } else {
      auto it = std::find_if(o.kwargs.begin(), o.kwargs.end(), [&](const auto& kv) { return kv.first == a.name; });
      if (it != o.kwargs.end()) {
        r.passing = Passing::Keyword;
        r.value = it->second;
        kw_used[it - o.kwargs.begin()] = true;
      } else {
        r.passing = Passing::Default;
        r.value = defaultValueFor(a, info);
      }
    }
    rows.push_back(std::move(r));
  }
  for (size_t i = schema; i < o.args.size(); ++i) {
    ArgRow r;
    r.name = "arg" + std::to_string(i);
    r.type = typeOfValue(o.args[i]);
    r.kind = argTypeOf(r.type);
    r.kind.optional = o.args[i].isNone();
    r.passing = Passing::Positional;
    r.value = o.args[i];
    rows.push_back(std::move(r));
  }
  for (size_t k = 0; k < o.kwargs.size(); ++k) {
    if (kw_used[k]) continue;
    ArgRow r;
    r.name = o.kwargs[k].first;
    r.type = typeOfValue(o.kwargs[k].second);
    r.kind = argTypeOf(r.type);
    r.kind.optional = o.kwargs[k].second.isNone();
    r.passing = Passing::Keyword;
    r.value = o.kwargs[k].second;
    rows.push_back(std::move(r));
  }
  return rows;
}

void rowsToOptions(const std::vector<ArgRow>& rows, ExportOptions& o) {
  o.args.clear();
  o.kwargs.clear();
  for (const auto& r : rows)
    if (r.passing == Passing::Positional) o.args.push_back(r.value);
  for (const auto& r : rows)
    if (r.passing == Passing::Keyword) o.kwargs.emplace_back(r.name, r.value);
}

std::vector<TensorLeaf> tensorLeaves(const std::vector<ArgRow>& rows) {
  std::vector<TensorLeaf> leaves;
  for (Passing pass : {Passing::Positional, Passing::Keyword}) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const ArgRow& r = rows[i];
      if (r.passing != pass) continue;
      if (r.value.isTensor()) {
        leaves.push_back({static_cast<int>(i), -1, r.name});
      } else if (auto* l = std::get_if<ArgValue::List>(&r.value.v)) {
        for (size_t k = 0; k < l->size(); ++k)
          if ((*l)[k].isTensor())
            leaves.push_back({static_cast<int>(i), static_cast<int>(k), r.name + "_" + std::to_string(k)});
      }
    }
  }
  return leaves;
}

int outputCountOf(const std::string& return_type) {
  std::string t = trim(return_type);
  if (t == "Tensor") return 1;
  if (startsWith(t, "Tuple[") && t.back() == ']') {
    auto parts = splitTop(t.substr(6, t.size() - 7));
    int n = 0;
    for (const auto& p : parts) {
      int k = outputCountOf(p);
      if (k == 0) return 0;
      n += k;
    }
    return n;
  }
  return 0;
}

Preset defaultPresetFor(const ModelInfo& info) {
  Preset p;
  p.model = info.path.string();
  std::filesystem::path out = info.path;
  out.replace_extension(".onnx");
  p.output = out.string();
  std::vector<ArgRow> rows;
  for (const auto& a : info.arguments) {
    ArgRow r = rowFor(a);
    if (a.keyword_only)
      r.passing = a.has_default ? Passing::Default : Passing::Keyword;
    else
      r.passing = a.has_default ? Passing::Default : Passing::Positional;
    r.value = defaultValueFor(a, &info);
    rows.push_back(std::move(r));
  }
  // A positional argument may not follow one left to its default.
  bool gap = false;
  for (auto& r : rows) {
    if (r.passing != Passing::Positional) gap = true;
    else if (gap) r.passing = Passing::Keyword;
  }
  rowsToOptions(rows, p.options);
  for (const auto& leaf : tensorLeaves(rows)) p.options.input_names.push_back(leaf.suggested_name);
  int outs = outputCountOf(info.return_type);
  if (outs == 1) p.options.output_names = {"output"};
  for (int i = 0; outs > 1 && i < outs; ++i) p.options.output_names.push_back("output_" + std::to_string(i));
  return p;
}

std::vector<Diagnostic> checkForm(const ModelInfo* info, const ExportOptions& o) {
  std::vector<Diagnostic> out;
  auto err = [&](std::string code, std::string msg, std::string option, std::string hint = {}) {
    Diagnostic d = makeError(std::move(code), std::move(msg), std::move(hint));
    d.option = std::move(option);
    out.push_back(std::move(d));
  };
  if (info) {
    const auto& A = info->arguments;
    if (o.args.size() > A.size())
      err("form.too-many-args",
          "forward() takes " + std::to_string(A.size()) + " arguments but " + std::to_string(o.args.size()) +
              " are passed positionally.",
          "args");
    for (size_t i = 0; i < A.size(); ++i) {
      bool positional = i < o.args.size();
      bool keyword = std::any_of(o.kwargs.begin(), o.kwargs.end(), [&](const auto& kv) { return kv.first == A[i].name; });
      if (positional && A[i].keyword_only)
        err("form.keyword-only", "Argument '" + A[i].name + "' is keyword-only but is passed positionally.", "args",
            "Pass it as a keyword.");
      if (positional && keyword)
        err("form.passed-twice", "Argument '" + A[i].name + "' is passed both positionally and by keyword.", "kwargs");
      if (!positional && !keyword && !A[i].has_default)
        err("form.missing-arg", "Argument '" + A[i].name + "' has no default and is not passed.", "args",
            "Pass it positionally or by keyword.");
    }
    for (const auto& kv : o.kwargs)
      if (std::none_of(A.begin(), A.end(), [&](const ArgumentInfo& a) { return a.name == kv.first; }))
        err("form.unknown-kwarg", "forward() has no argument named '" + kv.first + "'.", "kwargs");
  }
  std::function<void(const ArgValue&, const std::string&)> checkValue = [&](const ArgValue& v, const std::string& where) {
    if (auto* t = std::get_if<TensorSpec>(&v.v)) {
      if (t->fill == FillKind::Npy && t->npy.empty())
        err("form.npy-missing", "Argument '" + where + "' is filled from a .npy file but no file is chosen.", "args");
      else if (t->fill == FillKind::Npy && !std::filesystem::exists(t->npy))
        err("form.npy-missing", "The .npy file for '" + where + "' does not exist: " + t->npy, "args");
    } else if (auto* l = std::get_if<ArgValue::List>(&v.v)) {
      for (const auto& x : *l) checkValue(x, where);
    }
  };
  std::vector<ArgRow> rows = rowsFromOptions(info, o);
  for (const auto& r : rows)
    if (r.passing != Passing::Default) checkValue(r.value, r.name);
  return out;
}

DynamicAxisSpec dynamicSpecFrom(const std::string& name, const std::map<int64_t, std::string>& axes) {
  DynamicAxisSpec s;
  bool any_label = std::any_of(axes.begin(), axes.end(), [](const auto& kv) { return !kv.second.empty(); });
  s.list_form = !any_label;
  for (const auto& [axis, label] : axes)
    s.axes[axis] = s.list_form ? std::string() : (label.empty() ? name + "_dim" + std::to_string(axis) : label);
  return s;
}

std::string formatAxes(const DynamicAxisSpec& s) {
  std::string out;
  for (const auto& [axis, label] : s.axes) {
    if (!out.empty()) out += ", ";
    out += std::to_string(axis);
    if (!s.list_form) out += ":" + label;
  }
  return out;
}

std::optional<DynamicAxisSpec> parseAxes(const std::string& name, const std::string& text, std::string* error) {
  std::map<int64_t, std::string> axes;
  for (const auto& part : splitTop(text)) {
    if (part.empty()) continue;
    auto colon = part.find(':');
    auto axis = toInt(colon == std::string::npos ? part : part.substr(0, colon));
    if (!axis || *axis < 0) {
      if (error) *error = "'" + part + "' is not an axis: write an index, or index:name (0:batch).";
      return std::nullopt;
    }
    axes[*axis] = colon == std::string::npos ? std::string() : trim(part.substr(colon + 1));
  }
  return dynamicSpecFrom(name, axes);
}

std::string formatOpsets(const std::map<std::string, int64_t>& m) {
  std::string out;
  for (const auto& [domain, version] : m) {
    if (!out.empty()) out += ", ";
    out += domain + ":" + std::to_string(version);
  }
  return out;
}

std::optional<std::map<std::string, int64_t>> parseOpsets(const std::string& text, std::string* error) {
  std::map<std::string, int64_t> m;
  for (const auto& part : splitTop(text)) {
    if (part.empty()) continue;
    auto colon = part.rfind(':');
    std::optional<int64_t> v = colon == std::string::npos ? std::nullopt : toInt(part.substr(colon + 1));
    std::string domain = colon == std::string::npos ? "" : trim(part.substr(0, colon));
    if (!v || domain.empty()) {
      if (error) *error = "'" + part + "' is not domain:version (com.example:1).";
      return std::nullopt;
    }
    m[domain] = *v;
  }
  return m;
}

std::string formatNumberList(const ArgValue::List& l) {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  for (size_t i = 0; i < l.size(); ++i) {
    if (i) s << ", ";
    if (auto* iv = std::get_if<int64_t>(&l[i].v)) s << *iv;
    else if (auto* dv = std::get_if<double>(&l[i].v)) s << *dv;
    else if (auto* bv = std::get_if<bool>(&l[i].v)) s << (*bv ? "True" : "False");
  }
  return s.str();
}

std::optional<ArgValue::List> parseNumberList(const std::string& text_in) {
  std::string text = trim(text_in);
  if (!text.empty() && (text.front() == '[' || text.front() == '(')) text = text.substr(1);
  if (!text.empty() && (text.back() == ']' || text.back() == ')')) text.pop_back();
  ArgValue::List l;
  for (const auto& part : splitTop(text)) {
    if (part.empty()) continue;
    if (auto i = toInt(part)) l.push_back(ArgValue::integer(*i));
    else if (auto d = toDouble(part)) l.push_back(ArgValue::number(*d));
    else return std::nullopt;
  }
  return l;
}

Preset withAbsolutePaths(Preset p, const std::string& base_dir) {
  return mapPresetPaths(std::move(p), [&](const std::string& s) {
    std::filesystem::path q(s);
    if (q.is_absolute() || base_dir.empty()) return s;
    return (std::filesystem::path(base_dir) / q).lexically_normal().string();
  });
}

Preset withRelativePaths(Preset p, const std::string& base_dir) {
  return mapPresetPaths(std::move(p), [&](const std::string& s) {
    std::filesystem::path q(s);
    if (!q.is_absolute() || base_dir.empty()) return s;
    std::filesystem::path rel = q.lexically_relative(std::filesystem::path(base_dir));
    if (rel.empty() || rel.begin()->string() == "..") return s;
    return rel.string();
  });
}

}  // namespace oxport::studio
