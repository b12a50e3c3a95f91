// Converters read a node's arguments by schema name (convert/args.h): the name wins over the
// place, aliases cover overloads that rename an argument, the place is only the fallback for a
// node without names, and a missing argument is a typed diagnostic, not a crash.
#include <gtest/gtest.h>

#include "convert/args.h"

using namespace oxport;
using namespace oxport::convert;

namespace {

struct Fixture {
  onnx_ir::Model model;
  ts::Graph graph;
  Context ctx{model, graph, Settings{}};

  ts::Node* node(const std::string& kind, std::vector<std::string> names, size_t inputs) {
    ts::Node* n = graph.newNode(kind);
    for (size_t i = 0; i < inputs; ++i) n->inputs.push_back(graph.newConstant(ts::Constant{int64_t(10 + i)}));
    n->arg_names = std::move(names);
    if (!n->arg_names.empty()) n->schema = kind + "(...)";
    return n;
  }
};

TEST(Args, NameWinsOverPlace) {
  Fixture f;
  // max.dim(self, dim, keepdim): "dim" is input 1 whatever position the caller guessed.
  const ts::Node* n = f.node("aten::max", {"self", "dim", "keepdim"}, 3);
  const Args args(f.ctx, *n);
  EXPECT_EQ(args.in("dim", 2), n->input(1));
  EXPECT_EQ(*args.constInt("keepdim", 0), 12);
  EXPECT_EQ(args.optIn("other", 1), nullptr);  // max.other's argument: not in this overload
  EXPECT_FALSE(args.has("other", 1));
}

TEST(Args, AliasesCoverRenamingOverloads) {
  Fixture f;
  const ts::Node* n = f.node("aten::add", {"a", "b"}, 2);  // add.int(a, b)
  const Args args(f.ctx, *n);
  EXPECT_EQ(args.in({"self", "a"}, 0), n->input(0));
  EXPECT_EQ(args.in({"other", "b"}, 1), n->input(1));
  EXPECT_EQ(args.optIn("alpha", 2), nullptr);
}

TEST(Args, PlaceIsTheFallbackWithoutNames) {
  Fixture f;
  const ts::Node* n = f.node("prim::oxport_thing", {}, 2);
  const Args args(f.ctx, *n);
  EXPECT_FALSE(args.named());
  EXPECT_EQ(args.in("whatever", 1), n->input(1));
  EXPECT_EQ(args.optIn("whatever", 5), nullptr);
  EXPECT_EQ(args.optIn("whatever"), nullptr);  // by name only: no names, no argument
}

TEST(Args, MissingArgumentIsATypedDiagnostic) {
  Fixture f;
  const ts::Node* n = f.node("aten::max", {"self", "other"}, 2);
  const Args args(f.ctx, *n);
  try {
    args.in("dim", 1);
    FAIL() << "no exception";
  } catch (const MissingArgument& e) {
    EXPECT_EQ(e.diagnostic.code, "unsupported-form");
    EXPECT_NE(e.diagnostic.message.find("'dim'"), std::string::npos) << e.diagnostic.message;
    EXPECT_NE(e.diagnostic.message.find("aten::max"), std::string::npos) << e.diagnostic.message;
  }
  const ts::Node* bare = f.node("aten::thing", {}, 1);
  EXPECT_THROW(Args(f.ctx, *bare).in("dim", 3), MissingArgument);
}

TEST(Args, NoneIsPresentButNotHad) {
  Fixture f;
  ts::Node* n = f.node("aten::linear", {"input", "weight", "bias"}, 2);
  n->inputs.push_back(f.graph.newConstant(ts::Constant{}));
  const Args args(f.ctx, *n);
  EXPECT_NE(args.optIn("bias", 2), nullptr);
  EXPECT_FALSE(args.has("bias", 2));
  EXPECT_TRUE(args.has("weight", 1));
}

}  // namespace
