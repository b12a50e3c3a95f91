// Diagnostics as the user reads them (toString) and as tools read them (toJson).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "oxport/diagnostic.h"

namespace oxport {
namespace {

TEST(Diagnostic, SeverityNames) {
  EXPECT_STREQ(severityName(Severity::Note), "note");
  EXPECT_STREQ(severityName(Severity::Warning), "warning");
  EXPECT_STREQ(severityName(Severity::Error), "error");
}

TEST(Diagnostic, MakeErrorAndWarning) {
  const Diagnostic e = makeError("unsupported-op", "aten::foo is not supported", "rewrite it");
  EXPECT_EQ(e.severity, Severity::Error);
  EXPECT_EQ(e.code, "unsupported-op");
  EXPECT_EQ(e.message, "aten::foo is not supported");
  EXPECT_EQ(e.hint, "rewrite it");
  EXPECT_TRUE(e.option.empty());
  EXPECT_FALSE(e.location.known());

  const Diagnostic w = makeWarning("w", "careful");
  EXPECT_EQ(w.severity, Severity::Warning);
  EXPECT_EQ(w.toString(), "warning[w]: careful");
}

TEST(Diagnostic, ToStringWithEveryPart) {
  Diagnostic d = makeError("unsupported-op", "aten::view cannot be exported", "use reshape");
  d.node_kind = "aten::view";
  d.module_path = "layer1.0";
  d.location = {"model.py", 12, 0};
  d.option = "dynamic_axes";
  EXPECT_EQ(d.toString(),
            "error[unsupported-op]: aten::view cannot be exported\n"
            "  at aten::view in layer1.0 (model.py:12)\n"
            "  option: dynamic_axes\n"
            "  hint: use reshape");
}

TEST(Diagnostic, ToStringShowsOnlyWhatIsSet) {
  EXPECT_EQ(makeError("", "plain").toString(), "error: plain");
  EXPECT_EQ(makeError("c", "m").toString(), "error[c]: m");

  Diagnostic module_only = makeError("c", "m");
  module_only.module_path = "backbone.conv1";
  EXPECT_EQ(module_only.toString(), "error[c]: m\n  in backbone.conv1");

  Diagnostic node_only = makeError("c", "m");
  node_only.node_kind = "aten::add";
  EXPECT_EQ(node_only.toString(), "error[c]: m\n  at aten::add");

  Diagnostic location_only = makeError("c", "m");
  location_only.location = {"preset.json", 3, 7};
  EXPECT_EQ(location_only.toString(), "error[c]: m\n  at preset.json:3:7");

  Diagnostic file_only = makeError("c", "m");
  file_only.location.file = "preset.json";
  EXPECT_EQ(file_only.toString(), "error[c]: m\n  at preset.json");

  Diagnostic line_only = makeError("c", "m");
  line_only.location.line = 4;
  EXPECT_EQ(line_only.toString(), "error[c]: m\n  at line 4");

  Diagnostic option_only = makeError("c", "m");
  option_only.option = "opset_version";
  EXPECT_EQ(option_only.toString(), "error[c]: m\n  option: opset_version");
}

TEST(Diagnostic, MultiLineHintIsIndented) {
  const Diagnostic d = makeError("c", "m", "first\nsecond");
  EXPECT_EQ(d.toString(), "error[c]: m\n  hint: first\n    second");
}

TEST(Diagnostic, ToJsonHasEveryField) {
  Diagnostic d = makeError("unsupported-op", "msg", "hint text");
  d.node_kind = "aten::view";
  d.module_path = "layer1.0";
  d.location = {"model.py", 12, 3};
  d.option = "opset_version";
  Diagnostic w = makeWarning("w", "plain");

  const auto j = nlohmann::json::parse(toJson({d, w}));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["severity"], "error");
  EXPECT_EQ(j[0]["code"], "unsupported-op");
  EXPECT_EQ(j[0]["message"], "msg");
  EXPECT_EQ(j[0]["node_kind"], "aten::view");
  EXPECT_EQ(j[0]["module_path"], "layer1.0");
  EXPECT_EQ(j[0]["location"]["file"], "model.py");
  EXPECT_EQ(j[0]["location"]["line"], 12);
  EXPECT_EQ(j[0]["location"]["column"], 3);
  EXPECT_EQ(j[0]["option"], "opset_version");
  EXPECT_EQ(j[0]["hint"], "hint text");
  EXPECT_EQ(j[1]["severity"], "warning");
  EXPECT_TRUE(j[1]["location"].is_null());
  EXPECT_EQ(j[1]["hint"], "");
}

TEST(Diagnostic, ToJsonOfNothingIsAnEmptyArray) {
  EXPECT_EQ(nlohmann::json::parse(toJson({})), nlohmann::json::array());
}

TEST(Diagnostic, ToJsonSurvivesInvalidUtf8) {
  // A Latin-1 file name in a message must not turn reporting into a crash.
  const Diagnostic d = makeError("c", "cannot open caf\xe9.pt");
  std::string text;
  ASSERT_NO_THROW(text = toJson({d}));
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j[0]["message"].get<std::string>().substr(0, 15), "cannot open caf");
}

TEST(Diagnostic, ErrorMessageListsEveryDiagnostic) {
  Error e(std::vector<Diagnostic>{makeError("a", "first"), makeError("b", "second", "fix b")});
  EXPECT_EQ(e.message(), "error[a]: first\nerror[b]: second\n  hint: fix b");
  EXPECT_EQ(e.code(), "a");
  EXPECT_EQ(Error("x", "only").message(), "error[x]: only");
  EXPECT_FALSE(Error().message().empty());
}

}  // namespace
}  // namespace oxport
