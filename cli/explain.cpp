#include "explain.h"

#include <ostream>
#include <string_view>

#include "oxport/error_codes.h"

namespace oxport {

namespace {

const char* kExplainHelp = R"(usage: oxport explain CODE...
       oxport explain --all [--markdown]

Explains a diagnostic code: the word in brackets of `error[CODE]: ...` (and "code" in --json):
what it means, what usually causes it and what to do about it. CODE may be given as printed,
e.g. 'error[unsupported-op]'.

  --all        every code
  --markdown   print Markdown (`oxport explain --all --markdown` is docs/ERRORS.md)
)";

// Words of `text` in lines of at most `width` columns, each starting with `indent`.
void wrap(std::ostream& os, std::string_view text, std::string_view indent, size_t width = 100) {
  size_t col = 0;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (col > 0 && col + 1 + word.size() > width) {
      os << "\n";
      col = 0;
    }
    if (col == 0) {
      os << indent << word;
      col = indent.size() + word.size();
    } else {
      os << ' ' << word;
      col += 1 + word.size();
    }
  }
  os << "\n";
}

void printText(std::ostream& os, const ErrorCodeInfo& e) {
  os << e.code << " (" << severityName(e.severity) << ")\n\n";
  wrap(os, e.meaning, "  ");
  os << "\nTypical causes:\n";
  wrap(os, e.causes, "  ");
  os << "\nWhat to do:\n";
  wrap(os, e.action, "  ");
}

// Text as Markdown shows it literally: no emphasis from '*' or '_' around words, no HTML.
std::string markdownText(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '<' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// GitHub's anchor of a heading: lower case, '.' dropped.
std::string anchor(std::string_view code) {
  std::string out;
  for (char c : code)
    if (c != '.') out += c;
  return out;
}

void printMarkdown(std::ostream& os, const ErrorCodeInfo& e) {
  os << "## " << e.code << "\n\n"
     << "*" << severityName(e.severity) << "*\n\n"
     << markdownText(e.meaning) << "\n\n"
     << "**Typical causes.** " << markdownText(e.causes) << "\n\n"
     << "**What to do.** " << markdownText(e.action) << "\n";
}

void printMarkdownPage(std::ostream& os) {
  os << "# Diagnostic codes\n\n"
     << "<!-- Generated from core/src/base/error_codes.def by `oxport explain --all --markdown > docs/ERRORS.md`;\n"
     << "     do not edit by hand (a test compares this file with the generator). -->\n\n"
     << "Every error, warning and note oxport reports has a stable code: the word in brackets of\n"
     << "`error[unsupported-op]: ...` on the command line, `\"code\"` in `--json` output and in the\n"
     << "`--report`, `Diagnostic.code` in the Python module and in the studio's problem list.\n"
     << "`oxport explain CODE` prints one entry of this page.\n\n"
     << "| code | severity |\n| --- | --- |\n";
  for (const auto& e : errorCodes())
    os << "| [`" << e.code << "`](#" << anchor(e.code) << ") | " << severityName(e.severity) << " |\n";
  for (const auto& e : errorCodes()) {
    os << "\n";
    printMarkdown(os, e);
  }
}

// The code of "unsupported-op", or of "error[unsupported-op]:" pasted from a diagnostic.
std::string bareCode(const std::string& arg) {
  const size_t open = arg.find('['), close = arg.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return arg;
  const std::string severity = arg.substr(0, open);
  if (severity != "error" && severity != "warning" && severity != "note") return arg;
  return arg.substr(open + 1, close - open - 1);
}

}  // namespace

int runExplain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  bool all = false, markdown = false;
  std::vector<std::string> codes;
  for (const auto& a : args) {
    if (a == "-h" || a == "--help") {
      out << kExplainHelp;
      return 0;
    }
    if (a == "--all") all = true;
    else if (a == "--markdown") markdown = true;
    else if (a.rfind("-", 0) == 0) {
      err << "oxport: unknown option " << a << "\n  hint: run `oxport explain --help`\n";
      return 2;
    } else {
      codes.push_back(bareCode(a));
    }
  }
  if (all == !codes.empty()) {
    err << "oxport: " << (all ? "give either --all or codes, not both" : "explain needs a code, e.g. `oxport explain unsupported-op`")
        << "\n  hint: run `oxport explain --help`\n";
    return 2;
  }
  if (all) {
    if (markdown) {
      printMarkdownPage(out);
      return 0;
    }
    bool first = true;
    for (const auto& e : errorCodes()) {
      if (!first) out << "\n";
      first = false;
      printText(out, e);
    }
    return 0;
  }
  // Unknown codes are reported before anything is printed.
  for (const auto& c : codes) {
    if (findErrorCode(c)) continue;
    err << "oxport: there is no diagnostic code '" << c << "'\n";
    const auto near = similarErrorCodes(c);
    if (!near.empty()) {
      err << "  did you mean:";
      for (size_t i = 0; i < near.size(); ++i) err << (i ? ", " : " ") << near[i];
      err << "\n";
    }
    err << "  hint: `oxport explain --all` lists every code\n";
    return 2;
  }
  for (size_t i = 0; i < codes.size(); ++i) {
    if (i) out << "\n";
    const ErrorCodeInfo& e = *findErrorCode(codes[i]);
    if (markdown) printMarkdown(out, e);
    else printText(out, e);
  }
  return 0;
}

}  // namespace oxport
