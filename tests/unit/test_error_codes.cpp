// The catalogue of diagnostic codes (core/src/base/error_codes.def) against the sources: every code a
// raise site writes has an entry, every entry is raised somewhere, at the severity it is raised at.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "oxport/error_codes.h"
#include "raise_sites.h"

namespace oxport {
namespace {

namespace fs = std::filesystem;
using test::Lang;
using test::RaiseSite;

// Where diagnostics are raised: the core, the studio, the programs and the Python module.
const char* kRoots[] = {"core/src", "core/include", "cli", "ui", "app", "python"};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Source {
  std::string rel;
  Lang lang;
  std::string text;
};

std::vector<Source> sources() {
  std::vector<Source> out;
  const fs::path root = OXPORT_SOURCE_DIR;
  for (const char* dir : kRoots)
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file()) continue;
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".py") continue;
      out.push_back({fs::relative(e.path(), root).string(), ext == ".py" ? Lang::Python : Lang::Cpp, readFile(e.path())});
    }
  std::sort(out.begin(), out.end(), [](const Source& a, const Source& b) { return a.rel < b.rel; });
  return out;
}

std::vector<RaiseSite> allSites() {
  std::vector<RaiseSite> sites;
  for (const auto& s : sources())
    for (auto& site : test::scanSource(s.text, s.rel, s.lang)) sites.push_back(std::move(site));
  return sites;
}

std::string where(const RaiseSite& s) { return s.file + ":" + std::to_string(s.line); }

TEST(ErrorCodes, CatalogueIsWellFormed) {
  const auto& codes = errorCodes();
  ASSERT_FALSE(codes.empty());
  for (size_t i = 0; i < codes.size(); ++i) {
    const auto& e = codes[i];
    SCOPED_TRACE(std::string(e.code));
    EXPECT_TRUE(test::looksLikeCode(std::string(e.code)));
    if (i > 0) {
      EXPECT_LT(codes[i - 1].code, e.code) << "codes are sorted and unique";
    }
    for (std::string_view text : {e.meaning, e.causes, e.action}) {
      EXPECT_GE(text.size(), 10u) << text;
      EXPECT_TRUE(text.back() == '.' || text.back() == ')') << "a paragraph ends a sentence: " << text;
      EXPECT_EQ(text.find('\n'), std::string_view::npos) << "one paragraph, no line breaks: " << text;
      EXPECT_EQ(text.find("  "), std::string_view::npos) << "no double spaces: " << text;
    }
    EXPECT_EQ(findErrorCode(e.code), &e);
  }
}

TEST(ErrorCodes, Lookup) {
  const ErrorCodeInfo* e = findErrorCode("unsupported-op");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code, "unsupported-op");
  EXPECT_EQ(e->severity, Severity::Error);
  EXPECT_EQ(findErrorCode("baked-dynamic-size")->severity, Severity::Warning);
  EXPECT_EQ(findErrorCode("no-such-code"), nullptr);
  EXPECT_EQ(findErrorCode(""), nullptr);
  EXPECT_EQ(findErrorCode("unsupported-o"), nullptr);
}

TEST(ErrorCodes, SimilarCodes) {
  auto near = similarErrorCodes("unsuported-op");
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near.front(), "unsupported-op");
  near = similarErrorCodes("unknown-key");
  EXPECT_NE(std::find(near.begin(), near.end(), "preset.unknown-key"), near.end());
  near = similarErrorCodes("op-library");
  EXPECT_GE(near.size(), 3u);
  for (auto c : near) EXPECT_EQ(c.substr(0, 10), "op-library");
  EXPECT_LE(similarErrorCodes("op-library", 2).size(), 2u);
  EXPECT_TRUE(similarErrorCodes("zzzzzzzzzzzzzzzzzzzz").empty());
}

// The scanner itself, on every form it must recognize (and things it must not take for a code).
TEST(RaiseSites, ScannerFindsEveryForm) {
  const std::string cpp = R"cpp(
    return Error("form-a", "msg");
    Diagnostic d = makeWarning(
        "form-b", "msg", "hint");
    return ctx.error("form-c", "a " + x + " b");
    n->warning("form-d", "msg");
    return nodeError(n, "form-e", "msg");
    return npyError(file, "npy.form-f", "msg");
    d.code = "form-g";
    // Error("in-a-comment", "msg");
    const char* s = "Error(\"in-a-string\", \"msg\")";
    return Error(d);
    if (r.error().code() == "compared") {}
    Diagnostic makeError(std::string code, std::string message, std::string hint) { return Error(std::move(code), m); }
    return makeError(which, "msg");
    return makeError("Not A Code", "msg");
    const ErrorCodeInfo* findErrorCode(std::string_view code);
  )cpp";
  const auto sites = test::scanSource(cpp, "x.cpp", Lang::Cpp);
  std::vector<std::string> found, problems;
  for (const auto& s : sites) (s.problem.empty() ? found : problems).push_back(s.code.empty() ? s.problem : s.code);
  EXPECT_EQ(found, (std::vector<std::string>{"form-a", "form-b", "form-c", "form-d", "form-e", "npy.form-f", "form-g"}));
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("which"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("Not A Code"), std::string::npos) << problems[1];
  EXPECT_TRUE(sites[1].warning);
  EXPECT_EQ(sites[1].line, 3);
  EXPECT_FALSE(sites[0].warning);

  const std::string py = R"py(
    raise _error("py-a", f"msg {x}")
    raise ExportError([Diagnostic.error(
        "py-b", "msg", "hint", "f")])
    d = Diagnostic("warning", "py-c", "msg")
    # raise _error("in-a-comment", "msg")
    def error(cls, code: str, message: str) -> "Diagnostic":
        return cls("error", code, message)
    warnings.warn(OxportWarning(d), stacklevel=3)
  )py";
  const auto py_sites = test::scanSource(py, "x.py", Lang::Python);
  ASSERT_EQ(py_sites.size(), 3u);
  EXPECT_EQ(py_sites[0].code, "py-a");
  EXPECT_EQ(py_sites[1].code, "py-b");
  EXPECT_EQ(py_sites[2].code, "py-c");
  EXPECT_TRUE(py_sites[2].warning);

  EXPECT_EQ(test::findCodeParameters(cpp, Lang::Cpp), (std::vector<std::string>{"makeError/0"}));
  EXPECT_EQ(test::findCodeParameters(py, Lang::Python), (std::vector<std::string>{"error/0"}));
}

// Every helper that takes a code is a form the scanner knows, so no raise site goes unseen.
TEST(RaiseSites, EveryHelperTakingACodeIsAKnownForm) {
  std::set<std::string> known;
  for (const auto& f : test::raiseForms())
    known.insert(std::string(f.lang == Lang::Python ? "py:" : "cpp:") + f.name + "/" + std::to_string(f.code_arg));
  for (const auto& s : sources())
    for (const auto& h : test::findCodeParameters(s.text, s.lang))
      EXPECT_TRUE(known.count((s.lang == Lang::Python ? "py:" : "cpp:") + h))
          << s.rel << " defines " << h << " (a function taking a code): add it to raiseForms() in tests/unit/raise_sites.cpp";
}

TEST(RaiseSites, EveryRaiseSiteHasALiteralCode) {
  for (const auto& s : allSites()) EXPECT_TRUE(s.problem.empty()) << where(s) << ": " << s.problem;
}

TEST(ErrorCodes, EveryRaisedCodeIsInTheCatalogue) {
  std::map<std::string, std::vector<std::string>> missing;
  size_t count = 0;
  for (const auto& s : allSites()) {
    if (s.code.empty()) continue;
    ++count;
    if (!findErrorCode(s.code)) missing[s.code].push_back(where(s));
  }
  EXPECT_GT(count, 100u) << "the scanner found too few raise sites to be working";
  for (const auto& [code, sites] : missing)
    ADD_FAILURE() << "\"" << code << "\" is raised at " << sites.front() << (sites.size() > 1 ? " and elsewhere" : "")
                  << " but has no entry in core/src/base/error_codes.def";
}

TEST(ErrorCodes, EveryCatalogueEntryIsRaised) {
  std::map<std::string, std::pair<bool, bool>> raised;  // code -> (as an error, as a warning)
  for (const auto& s : allSites()) {
    if (s.code.empty()) continue;
    auto& r = raised[s.code];
    (s.warning ? r.second : r.first) = true;
  }
  for (const auto& e : errorCodes()) {
    const std::string code(e.code);
    auto it = raised.find(code);
    if (it == raised.end()) {
      ADD_FAILURE() << "\"" << code << "\" is in core/src/base/error_codes.def but nothing raises it (stale entry)";
      continue;
    }
    if (e.severity == Severity::Error)
      EXPECT_TRUE(it->second.first) << code << " is listed as an error but only raised as a warning";
    else
      EXPECT_TRUE(it->second.second) << code << " is listed as a " << severityName(e.severity)
                                     << " but only raised as an error";
  }
}

}  // namespace
}  // namespace oxport
