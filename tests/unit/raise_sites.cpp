#include "raise_sites.h"

#include <optional>
#include <regex>

namespace oxport::test {

const std::vector<RaiseForm>& raiseForms() {
  static const std::vector<RaiseForm> forms = {
      {Lang::Cpp, "makeError", 0, false},    // oxport/diagnostic.h
      {Lang::Cpp, "makeWarning", 0, true},
      {Lang::Cpp, "Error", 0, false},        // Error(code, message, hint)
      {Lang::Cpp, "error", 0, false},        // convert::Context, ts::Node, the preset reader
      {Lang::Cpp, "warn", 0, true},          // convert::Context
      {Lang::Cpp, "warning", 0, true},       // ts::Node
      {Lang::Cpp, "optionError", 0, false},  // options.cpp
      {Lang::Cpp, "nodeError", 1, false},    // the example run (frontend/execute_node.cpp): nodeError(node, code, ...)
      {Lang::Cpp, "npyError", 1, false},     // npy.cpp: npyError(file, code, ...)
      {Lang::Cpp, "err", 0, false},          // the studio's form check (ui/formstate.cpp)
      {Lang::Python, "_error", 0, false},    // python/oxport/_args.py
      {Lang::Python, "error", 0, false},     // Diagnostic.error(code, message, ...)
      {Lang::Python, "Diagnostic", 1, false},  // Diagnostic(severity, code, message), severity from the first
      {Lang::Python, "cls", 1, false},       // the same, inside the class
  };
  return forms;
}

bool looksLikeCode(const std::string& s) {
  static const std::regex re(R"(([a-z][a-z0-9]*(-[a-z0-9]+)*\.)?[a-z][a-z0-9]*(-[a-z0-9]+)*)");
  return std::regex_match(s, re);
}

namespace {

bool isWord(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The text with comments blanked and the insides of string literals replaced by 'x' (same
// length, quotes and newlines kept), so that structure can be searched without being fooled by
// what strings and comments say.
std::string maskText(const std::string& t, Lang lang) {
  std::string m = t;
  size_t i = 0;
  auto blank = [&](size_t from, size_t to, char fill) {
    for (size_t k = from; k < to && k < m.size(); ++k)
      if (m[k] != '\n') m[k] = fill;
  };
  while (i < t.size()) {
    const char c = t[i];
    if (lang == Lang::Cpp && c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      const size_t e = t.find('\n', i);
      blank(i, e == std::string::npos ? t.size() : e, ' ');
      i = e == std::string::npos ? t.size() : e;
    } else if (lang == Lang::Cpp && c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
      const size_t e = t.find("*/", i + 2);
      const size_t end = e == std::string::npos ? t.size() : e + 2;
      blank(i, end, ' ');
      i = end;
    } else if (lang == Lang::Python && c == '#') {
      const size_t e = t.find('\n', i);
      blank(i, e == std::string::npos ? t.size() : e, ' ');
      i = e == std::string::npos ? t.size() : e;
    } else if (lang == Lang::Cpp && c == 'R' && i + 1 < t.size() && t[i + 1] == '"' && (i == 0 || !isWord(t[i - 1]))) {
      const size_t open = t.find('(', i + 2);
      if (open == std::string::npos) break;
      const std::string close = ")" + t.substr(i + 2, open - i - 2) + "\"";
      const size_t e = t.find(close, open);
      const size_t end = e == std::string::npos ? t.size() : e + close.size();
      blank(i + 2, end - 1, 'x');
      i = end;
    } else if (lang == Lang::Python && (c == '"' || c == '\'') && t.compare(i, 3, std::string(3, c)) == 0) {
      const size_t e = t.find(std::string(3, c), i + 3);
      const size_t end = e == std::string::npos ? t.size() : e + 3;
      blank(i + 3, end - 3, 'x');
      i = end;
    } else if (c == '"' || c == '\'') {
      size_t k = i + 1;
      while (k < t.size() && t[k] != c && t[k] != '\n') k += t[k] == '\\' ? 2 : 1;
      blank(i + 1, k, 'x');
      i = k + 1;
    } else {
      ++i;
    }
  }
  return m;
}

struct Arg {
  size_t begin, end;  // in the text, trimmed
};

// The arguments of the call whose '(' is at `open`, split at the commas outside brackets;
// nullopt when the call does not close.
std::optional<std::vector<Arg>> callArguments(const std::string& masked, size_t open) {
  std::vector<Arg> args;
  int depth = 0;
  size_t start = open + 1;
  auto push = [&](size_t end) {
    size_t b = start, e = end;
    while (b < e && std::isspace(static_cast<unsigned char>(masked[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(masked[e - 1]))) --e;
    if (b < e || !args.empty()) args.push_back({b, e});
  };
  for (size_t i = open + 1; i < masked.size(); ++i) {
    const char c = masked[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    else if (c == ')') {
      push(i);
      return args;
    } else if (c == ',' && depth == 0) {
      push(i);
      start = i + 1;
    }
  }
  return std::nullopt;
}

int lineAt(const std::string& t, size_t pos) {
  return 1 + static_cast<int>(std::count(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// The string of a single literal argument ("code" or, in Python, 'code'); nullopt otherwise.
std::optional<std::string> literal(const std::string& text, const std::string& masked, Arg a, Lang lang) {
  if (a.end - a.begin < 2) return std::nullopt;
  const char q = masked[a.begin];
  if (!(q == '"' || (lang == Lang::Python && q == '\'')) || masked[a.end - 1] != q) return std::nullopt;
  for (size_t k = a.begin + 1; k + 1 < a.end; ++k)
    if (masked[k] != 'x') return std::nullopt;  // two literals joined, or more than a literal
  return text.substr(a.begin + 1, a.end - a.begin - 2);
}

// The caller's own `code` parameter, passed on: code, std::move(code), or the parameter itself in
// a declaration (std::string code).
bool forwardsCode(const std::string& masked, Arg a) {
  static const std::regex re(R"((^|.*[^\w])code\)?)");
  return std::regex_match(masked.substr(a.begin, a.end - a.begin), re);
}

// A code and, after it, a message: what makes a diagnostic (a lookup takes a code alone).
bool takesMessage(const std::vector<std::string>& names, size_t code_index) {
  for (size_t i = code_index + 1; i < names.size(); ++i)
    if (names[i] == "message" || names[i] == "msg" || names[i] == "what") return true;
  return false;
}

}  // namespace

std::vector<RaiseSite> scanSource(const std::string& text, const std::string& file, Lang lang) {
  const std::string m = maskText(text, lang);
  std::vector<RaiseSite> sites;
  for (size_t open = m.find('('); open != std::string::npos; open = m.find('(', open + 1)) {
    size_t e = open;
    while (e > 0 && (m[e - 1] == ' ' || m[e - 1] == '\t')) --e;
    size_t b = e;
    while (b > 0 && isWord(m[b - 1])) --b;
    if (b == e) continue;
    const std::string name = m.substr(b, e - b);
    const RaiseForm* form = nullptr;
    for (const auto& f : raiseForms())
      if (f.lang == lang && f.name == name) form = &f;
    if (!form) continue;
    if (lang == Lang::Python && m.compare(b >= 4 ? b - 4 : 0, 4, "def ") == 0) continue;  // its definition
    const auto args = callArguments(m, open);
    // Error(d), s.error(), Diagnostic(**fields): not a code and a message.
    if (!args || args->size() < 2) continue;
    RaiseSite site;
    site.file = file;
    site.line = lineAt(text, open);
    site.warning = form->warning;
    Arg code_arg = form->code_arg < args->size() ? (*args)[form->code_arg] : Arg{open, open};
    for (const Arg& a : *args)
      if (lang == Lang::Python && m.compare(a.begin, 5, "code=") == 0) code_arg = {a.begin + 5, a.end};
    if (lang == Lang::Python && name == "Diagnostic") {
      const auto sev = literal(text, m, (*args)[0], lang);
      if (!sev || (*sev != "error" && *sev != "warning" && *sev != "note")) {
        site.problem = "Diagnostic(...) without a literal severity first";
        sites.push_back(site);
        continue;
      }
      site.warning = *sev != "error";
    }
    if (auto code = literal(text, m, code_arg, lang)) {
      site.code = *code;
      if (!looksLikeCode(*code)) site.problem = "the code \"" + *code + "\" is not lower-case words joined by '-'";
    } else if (!forwardsCode(m, code_arg)) {
      site.problem = name + "(...) with a code that is not a string literal: " +
                     text.substr(code_arg.begin, std::min<size_t>(code_arg.end - code_arg.begin, 60));
    } else {
      continue;  // a helper passing its own code on
    }
    sites.push_back(site);
  }
  if (lang == Lang::Cpp) {
    // d.code = "killed";
    static const std::regex assign(R"re(\.code\s*=\s*"(x*)"\s*;)re");
    for (auto it = std::sregex_iterator(m.begin(), m.end(), assign); it != std::sregex_iterator(); ++it) {
      const size_t at = static_cast<size_t>(it->position(1));
      RaiseSite site;
      site.file = file;
      site.line = lineAt(text, at);
      site.code = text.substr(at, static_cast<size_t>(it->length(1)));
      sites.push_back(site);
    }
  }
  return sites;
}

std::vector<std::string> findCodeParameters(const std::string& text, Lang lang) {
  const std::string m = maskText(text, lang);
  std::vector<std::string> out;
  auto params = [](const std::string& list) {
    std::vector<std::string> ps;
    size_t start = 0;
    for (size_t i = 0; i <= list.size(); ++i)
      if (i == list.size() || list[i] == ',') {
        std::string p = list.substr(start, i - start);
        p.erase(0, p.find_first_not_of(" \t\n"));
        p.erase(p.find_last_not_of(" \t\n") + 1);
        ps.push_back(p);
        start = i + 1;
      }
    return ps;
  };
  if (lang == Lang::Cpp) {
    static const std::regex fn(R"((\w+)\s*\(([^()]*)\))");
    static const std::regex lambda(R"((\w+)\s*=\s*\[[^\]]*\]\s*\(([^()]*)\))");
    static const std::regex param(
        R"((const\s+)?(std::string|std::string_view|QString|char\s*const\s*\*|const\s+char\s*\*)\s*(const\s*)?&?\s*code(\s*=.*)?)");
    static const std::regex name(R"((\w+)\s*(=.*)?$)");
    for (const auto* re : {&fn, &lambda})
      for (auto it = std::sregex_iterator(m.begin(), m.end(), *re); it != std::sregex_iterator(); ++it) {
        const auto ps = params((*it)[2].str());
        std::vector<std::string> names;
        std::smatch nm;
        for (const auto& p : ps) names.push_back(std::regex_search(p, nm, name) ? nm[1].str() : p);
        for (size_t i = 0; i < ps.size(); ++i)
          if (std::regex_match(ps[i], param) && takesMessage(names, i))
            out.push_back((*it)[1].str() + "/" + std::to_string(i));
      }
  } else {
    static const std::regex def(R"(def\s+(\w+)\s*\(([^()]*)\))");
    for (auto it = std::sregex_iterator(m.begin(), m.end(), def); it != std::sregex_iterator(); ++it) {
      auto ps = params((*it)[2].str());
      if (!ps.empty() && (ps[0] == "self" || ps[0] == "cls")) ps.erase(ps.begin());
      std::vector<std::string> names;
      for (const auto& p : ps) names.push_back(p.substr(0, p.find_first_of(":= ")));
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == "code" && takesMessage(names, i)) out.push_back((*it)[1].str() + "/" + std::to_string(i));
    }
  }
  return out;
}

}  // namespace oxport::test
