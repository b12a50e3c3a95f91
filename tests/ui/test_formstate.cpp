// The studio's form mapping: argument kinds, positional/keyword rows, names, dynamic axes.
#include <QtTest>

#include "formstate.h"

using namespace oxport;
using namespace oxport::studio;

class FormStateTest : public QObject {
  Q_OBJECT

 private:
  static ModelInfo info() {
    ModelInfo m;
    m.path = "/models/net.pt";
    m.return_type = "Tuple[Tensor, Tensor]";
    auto arg = [&](std::string name, std::string type, bool def = false, std::string dv = {}, bool kw = false) {
      ArgumentInfo a;
      a.name = std::move(name);
      a.type = std::move(type);
      a.has_default = def;
      a.default_value = std::move(dv);
      a.keyword_only = kw;
      m.arguments.push_back(a);
    };
    arg("x", "Tensor");
    arg("lengths", "List[Tensor]");
    arg("scale", "float", true, "0.5");
    arg("mask", "Optional[Tensor]", true, "None");
    arg("mode", "int", false, "", true);
    m.input_guesses["x"] = {{2, 3, 8}, DType::Float64, "test"};
    return m;
  }

 private slots:
  void typesParse() {
    QCOMPARE(int(argTypeOf("Tensor").kind), int(ArgKind::Tensor));
    QCOMPARE(int(argTypeOf("Optional[Tensor]").kind), int(ArgKind::Tensor));
    QVERIFY(argTypeOf("Optional[Tensor]").optional);
    QCOMPARE(int(argTypeOf("Tuple[Tensor, Tensor]").kind), int(ArgKind::TensorList));
    QCOMPARE(argTypeOf("Tuple[Tensor, Tensor]").fixed_count, 2);
    QCOMPARE(int(argTypeOf("List[int]").kind), int(ArgKind::NumberList));
    QCOMPARE(int(argTypeOf("Dict[str, Tensor]").kind), int(ArgKind::Other));
    QCOMPARE(outputCountOf("Tuple[Tensor, Tuple[Tensor, Tensor]]"), 3);
    QCOMPARE(outputCountOf("int"), 0);
  }

  void defaultPresetFollowsTheSchema() {
    Preset p = defaultPresetFor(info());
    QCOMPARE(QString::fromStdString(*p.output), QStringLiteral("/models/net.onnx"));
    const ExportOptions& o = p.options;
    // x and lengths are required and positional; scale and mask keep their defaults; the
    // keyword-only mode goes into kwargs.
    QCOMPARE(o.args.size(), size_t(2));
    QVERIFY(o.args[0].isTensor());
    QCOMPARE(std::get<TensorSpec>(o.args[0].v).shape, (std::vector<int64_t>{2, 3, 8}));
    QCOMPARE(int(std::get<TensorSpec>(o.args[0].v).dtype), int(DType::Float64));  // the guessed dtype too
    QVERIFY(o.args[1].isList());
    QCOMPARE(o.kwargs.size(), size_t(1));
    QCOMPARE(QString::fromStdString(o.kwargs[0].first), QStringLiteral("mode"));
    QCOMPARE(o.input_names, (std::vector<std::string>{"x", "lengths_0"}));
    QCOMPARE(o.output_names, (std::vector<std::string>{"output_0", "output_1"}));
    QVERIFY(checkForm(nullptr, o).empty());
    ModelInfo m = info();
    QVERIFY(checkForm(&m, o).empty());
  }

  void rowsRoundTrip() {
    ModelInfo m = info();
    ExportOptions o = defaultPresetFor(m).options;
    auto rows = rowsFromOptions(&m, o);
    QCOMPARE(rows.size(), size_t(5));
    QCOMPARE(int(rows[2].passing), int(Passing::Default));
    QCOMPARE(std::get<double>(rows[2].value.v), 0.5);
    QCOMPARE(int(rows[4].passing), int(Passing::Keyword));
    rows[3].passing = Passing::Keyword;  // pass mask by name
    ExportOptions back = o;
    rowsToOptions(rows, back);
    QCOMPARE(back.kwargs.size(), size_t(2));
    QCOMPARE(QString::fromStdString(back.kwargs[0].first), QStringLiteral("mask"));
    // Graph inputs: positional tensors first, then keyword ones.
    auto leaves = tensorLeaves(rows);
    QCOMPARE(leaves.size(), size_t(3));
    QCOMPARE(QString::fromStdString(leaves[2].suggested_name), QStringLiteral("mask"));
  }

  void formProblemsAreFound() {
    ModelInfo m = info();
    ExportOptions o = defaultPresetFor(m).options;
    o.kwargs.clear();  // mode is required
    o.kwargs.push_back({"nope", ArgValue::integer(1)});
    auto problems = checkForm(&m, o);
    QStringList codes;
    for (const auto& d : problems) codes << QString::fromStdString(d.code);
    QVERIFY2(codes.contains("form.missing-arg"), qPrintable(codes.join(',')));
    QVERIFY2(codes.contains("form.unknown-kwarg"), qPrintable(codes.join(',')));
    TensorSpec npy;
    npy.fill = FillKind::Npy;
    o.args[0] = ArgValue::tensor(npy);
    problems = checkForm(&m, o);
    bool npy_flagged = false;
    for (const auto& d : problems) npy_flagged |= d.code == "form.npy-missing";
    QVERIFY(npy_flagged);
  }

  void dynamicAxesForms() {
    auto list = dynamicSpecFrom("x", {{0, ""}, {2, ""}});
    QVERIFY(list.list_form);
    QCOMPARE(QString::fromStdString(formatAxes(list)), QStringLiteral("0, 2"));
    auto dict = dynamicSpecFrom("x", {{0, "batch"}, {2, ""}});
    QVERIFY(!dict.list_form);
    QCOMPARE(QString::fromStdString(dict.axes[2]), QStringLiteral("x_dim2"));
    std::string err;
    auto parsed = parseAxes("y", "0:batch, 1", &err);
    QVERIFY(parsed);
    QCOMPARE(QString::fromStdString(parsed->axes[0]), QStringLiteral("batch"));
    QCOMPARE(QString::fromStdString(parsed->axes[1]), QStringLiteral("y_dim1"));
    QVERIFY(!parseAxes("y", "zero", &err));
    QVERIFY(!err.empty());
    auto opsets = parseOpsets("com.example:2, ai.onnx.ml:3", &err);
    QVERIFY(opsets);
    QCOMPARE(opsets->at("com.example"), int64_t(2));
    QVERIFY(!parseOpsets("com.example", &err));
  }

  void presetPathsRelativeAndBack() {
    Preset p;
    p.model = "/data/proj/models/net.pt";
    p.output = "/data/proj/out/net.onnx";
    TensorSpec t;
    t.fill = FillKind::Npy;
    t.npy = "/data/proj/inputs/x.npy";
    p.options.args.push_back(ArgValue::tensor(t));
    Preset rel = withRelativePaths(p, "/data/proj");
    QCOMPARE(QString::fromStdString(*rel.model), QStringLiteral("models/net.pt"));
    QCOMPARE(QString::fromStdString(std::get<TensorSpec>(rel.options.args[0].v).npy), QStringLiteral("inputs/x.npy"));
    Preset outside = withRelativePaths(p, "/elsewhere");
    QCOMPARE(QString::fromStdString(*outside.model), QStringLiteral("/data/proj/models/net.pt"));
    QVERIFY(withAbsolutePaths(rel, "/data/proj") == p);
  }
};

QTEST_GUILESS_MAIN(FormStateTest)
#include "test_formstate.moc"
