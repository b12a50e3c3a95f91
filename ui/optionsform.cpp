#include "optionsform.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "formstate.h"

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

void setInvalid(QWidget* w, bool bad, const QString& why) {
  if (!w) return;
  if (!w->property("normalToolTip").isValid()) w->setProperty("normalToolTip", w->toolTip());
  w->setStyleSheet(bad ? QStringLiteral("border: 1px solid #d03030;") : QString());
  w->setToolTip(bad ? why + QStringLiteral("\n\n") + w->property("normalToolTip").toString()
                    : w->property("normalToolTip").toString());
}

QString namesText(const std::vector<std::string>& names) {
  if (names.empty()) return QObject::tr("[] (the exporter names them)");
  QStringList l;
  for (const auto& n : names) l << (n.empty() ? QStringLiteral("\"\"") : q(n));
  return QStringLiteral("[") + l.join(QStringLiteral(", ")) + QStringLiteral("]");
}

}  // namespace

OptionsForm::OptionsForm(QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::WrapLongRows);
  v->addLayout(form);

  auto tip = [](QWidget* w, const QString& t) {
    w->setToolTip(t);
    w->setProperty("normalToolTip", t);
  };

  // f
  auto* outRow = new QWidget;
  auto* ol = new QHBoxLayout(outRow);
  ol->setContentsMargins(0, 0, 0, 0);
  output_ = new QLineEdit;
  output_->setObjectName(QStringLiteral("opt.output"));
  output_->setPlaceholderText(tr("model.onnx"));
  tip(output_, tr("f: the file the ONNX model (a binary protobuf) is written to. It is written atomically: "
                  "an export that fails or is cancelled leaves no file behind."));
  browse_ = new QToolButton;
  browse_->setText(QStringLiteral("…"));
  browse_->setToolTip(tr("Choose where to write the ONNX file"));
  ol->addWidget(output_, 1);
  ol->addWidget(browse_);
  form->addRow(tr("Output file (f)"), outRow);
  connect(output_, &QLineEdit::textEdited, this, [this](const QString& t) {
    state_.output = t.isEmpty() ? std::optional<std::string>() : t.toStdString();
    commit(QStringLiteral("output"), tr("Change output file"));
  });
  connect(browse_, &QToolButton::clicked, this, [this] {
    QString f = QFileDialog::getSaveFileName(this, tr("Export to"), output_->text(), tr("ONNX models (*.onnx)"));
    if (f.isEmpty()) return;
    output_->setText(f);
    state_.output = f.toStdString();
    commit(QString(), tr("Change output file"));
  });

  export_params_ = new QCheckBox(tr("Store the parameters in the file"));
  export_params_->setObjectName(QStringLiteral("opt.export_params"));
  tip(export_params_, tr("export_params (default on): write the trained weights into the model. Off: the "
                         "parameters are left out of the file."));
  form->addRow(tr("export_params"), export_params_);
  connect(export_params_, &QCheckBox::toggled, this, [this](bool on) {
    state_.options.export_params = on;
    commit(QString(), tr("Set export_params"));
  });

  verbose_ = new QCheckBox(tr("Describe the exported graph"));
  verbose_->setObjectName(QStringLiteral("opt.verbose"));
  tip(verbose_, tr("verbose (default off): print a description of the exported graph (shown in the Log) "
                   "and add doc strings to its nodes."));
  form->addRow(tr("verbose"), verbose_);
  connect(verbose_, &QCheckBox::toggled, this, [this](bool on) {
    state_.options.verbose = on;
    commit(QString(), tr("Set verbose"));
  });

  training_ = new QComboBox;
  training_->setObjectName(QStringLiteral("opt.training"));
  for (TrainingMode m : {TrainingMode::Eval, TrainingMode::Preserve, TrainingMode::Training})
    training_->addItem(QString::fromLatin1(trainingModeName(m)), static_cast<int>(m));
  tip(training_, tr("training (default EVAL): EVAL exports in inference mode. PRESERVE keeps the mode the "
                    "module was saved in (inference when it was in eval mode). TRAINING exports in training "
                    "mode and skips optimizations that would change training behaviour."));
  form->addRow(tr("training"), training_);
  connect(training_, &QComboBox::currentIndexChanged, this, [this](int) {
    state_.options.training = static_cast<TrainingMode>(training_->currentData().toInt());
    commit(QString(), tr("Set training to %1").arg(training_->currentText()));
  });

  operator_export_type_ = new QComboBox;
  operator_export_type_->setObjectName(QStringLiteral("opt.operator_export_type"));
  for (OperatorExportType t : {OperatorExportType::Onnx, OperatorExportType::OnnxFallthrough,
                               OperatorExportType::OnnxAten, OperatorExportType::OnnxAtenFallback})
    operator_export_type_->addItem(QString::fromLatin1(operatorExportTypeName(t)), static_cast<int>(t));
  tip(operator_export_type_,
      tr("operator_export_type (default ONNX_FALLTHROUGH):\n"
         "ONNX: only standard ONNX ops in the default domain.\n"
         "ONNX_FALLTHROUGH: convert every op that has a standard ONNX form; others pass through as they are.\n"
         "ONNX_ATEN: every ATen op becomes an ATen node.\n"
         "ONNX_ATEN_FALLBACK: standard ONNX where possible, an ATen node where no conversion exists."));
  form->addRow(tr("operator_export_type"), operator_export_type_);
  connect(operator_export_type_, &QComboBox::currentIndexChanged, this, [this](int) {
    state_.options.operator_export_type = static_cast<OperatorExportType>(operator_export_type_->currentData().toInt());
    commit(QString(), tr("Set operator_export_type to %1").arg(operator_export_type_->currentText()));
  });

  opset_ = new QSpinBox;
  opset_->setObjectName(QStringLiteral("opt.opset_version"));
  opset_->setRange(1, 99);  // out-of-range values are shown as problems, not clamped away
  tip(opset_, tr("opset_version (default %1): the ONNX operator set the model targets; %2 to %3 are supported.")
                  .arg(kDefaultOpset)
                  .arg(kMinOpset)
                  .arg(kMaxOpset));
  form->addRow(tr("opset_version"), opset_);
  connect(opset_, &QSpinBox::valueChanged, this, [this](int v) {
    state_.options.opset_version = v;
    commit(QStringLiteral("opset_version"), tr("Set opset_version to %1").arg(v));
  });

  constant_folding_ = new QCheckBox(tr("Fold constant subgraphs"));
  constant_folding_->setObjectName(QStringLiteral("opt.do_constant_folding"));
  tip(constant_folding_, tr("do_constant_folding (default on): ops whose inputs are all constant are computed "
                            "once at export and replaced by constants."));
  form->addRow(tr("do_constant_folding"), constant_folding_);
  connect(constant_folding_, &QCheckBox::toggled, this, [this](bool on) {
    state_.options.do_constant_folding = on;
    commit(QString(), tr("Set do_constant_folding"));
  });

  keep_initializers_ = new QComboBox;
  keep_initializers_->setObjectName(QStringLiteral("opt.keep_initializers_as_inputs"));
  keep_initializers_->addItem(tr("None (default)"), 0);
  keep_initializers_->addItem(tr("True"), 1);
  keep_initializers_->addItem(tr("False"), 2);
  tip(keep_initializers_, tr("keep_initializers_as_inputs (default None): True also lists every weight as a "
                             "graph input (so it can be fed at run time); False lists only the real inputs, "
                             "which lets runtimes optimize more."));
  form->addRow(tr("keep_initializers_as_inputs"), keep_initializers_);
  connect(keep_initializers_, &QComboBox::currentIndexChanged, this, [this](int) {
    int k = keep_initializers_->currentData().toInt();
    state_.options.keep_initializers_as_inputs = k == 0 ? std::optional<bool>() : std::optional<bool>(k == 1);
    commit(QString(), tr("Set keep_initializers_as_inputs"));
  });

  custom_opsets_ = new QLineEdit;
  custom_opsets_->setObjectName(QStringLiteral("opt.custom_opsets"));
  custom_opsets_->setPlaceholderText(tr("domain:version, …"));
  tip(custom_opsets_, tr("custom_opsets (default none): the version of each custom operator domain, as "
                         "domain:version pairs separated by commas. A custom domain the model uses but that is "
                         "not listed gets version 1."));
  form->addRow(tr("custom_opsets"), custom_opsets_);
  connect(custom_opsets_, &QLineEdit::textEdited, this, [this](const QString& t) {
    std::string error;
    auto m = parseOpsets(t.toStdString(), &error);
    setInvalid(custom_opsets_, !m, q(error));
    if (!m) return;
    state_.options.custom_opsets = *m;
    commit(QStringLiteral("custom_opsets"), tr("Edit custom_opsets"));
  });

  graph_mode_ = new QComboBox;
  graph_mode_->setObjectName(QStringLiteral("opt.graph_mode"));
  for (GraphMode m : {GraphMode::Script, GraphMode::Trace})
    graph_mode_->addItem(QString::fromLatin1(graphModeName(m)), static_cast<int>(m));
  tip(graph_mode_,
      tr("graph_mode (default script; oxport's own option): how a scripted model's control flow is exported.\n"
         "script: a data-dependent if becomes ONNX If and a loop becomes Loop, right for every input.\n"
         "trace: the model is re-traced on the example inputs, as torch.jit.trace would record it: only the "
         "branch they take, loops unrolled by their example count. Use it when the script export fails on a "
         "construct ONNX cannot hold (raise, strings, dicts); the file is then right only for inputs that take "
         "the same path, and the export warns for each if and loop it unrolled."));
  form->addRow(tr("graph_mode"), graph_mode_);
  connect(graph_mode_, &QComboBox::currentIndexChanged, this, [this](int) {
    state_.options.graph_mode = static_cast<GraphMode>(graph_mode_->currentData().toInt());
    commit(QString(), tr("Set graph_mode to %1").arg(graph_mode_->currentText()));
  });

  // load_libraries: op libraries to load before the model (paths, separated by ';').
  load_libraries_ = new QLineEdit;
  load_libraries_->setObjectName(QStringLiteral("opt.load_libraries"));
  load_libraries_->setPlaceholderText(tr("none (torchvision's is found by itself)"));
  tip(load_libraries_, tr("load_libraries (oxport's own option): shared libraries that register operators with "
                          "TORCH_LIBRARY (a vendor's ops, as torch.ops.load_library loads them in Python), loaded "
                          "before the model; separate several with ';'. A model that uses torchvision's ops loads "
                          "torchvision's library without it. Saved in the preset relative to its folder."));
  auto* pick = new QToolButton;
  pick->setObjectName(QStringLiteral("opt.load_libraries.pick"));
  pick->setText(tr("Add…"));
  pick->setToolTip(tr("Choose an op library (.so) to add"));
  auto* libs_row = new QHBoxLayout;
  libs_row->setContentsMargins(0, 0, 0, 0);
  libs_row->addWidget(load_libraries_, 1);
  libs_row->addWidget(pick);
  form->addRow(tr("load_libraries"), libs_row);
  auto setLibraries = [this](const QString& text) {
    std::vector<std::string> libs;
    for (const QString& part : text.split(QLatin1Char(';'), Qt::SkipEmptyParts))
      if (!part.trimmed().isEmpty()) libs.push_back(part.trimmed().toStdString());
    state_.load_libraries = std::move(libs);
  };
  connect(load_libraries_, &QLineEdit::textEdited, this, [this, setLibraries](const QString& t) {
    setLibraries(t);
    commit(QStringLiteral("load_libraries"), tr("Edit load_libraries"));
  });
  connect(pick, &QToolButton::clicked, this, [this, setLibraries] {
    const QString file = QFileDialog::getOpenFileName(this, tr("Add an op library"), QString(),
                                                      tr("Shared libraries (*.so *.so.*);;All files (*)"));
    if (file.isEmpty()) return;
    QString text = load_libraries_->text().trimmed();
    text = text.isEmpty() ? file : text + QStringLiteral("; ") + file;
    load_libraries_->setText(text);
    setLibraries(text);
    commit(QString(), tr("Add the op library %1").arg(QFileInfo(file).fileName()));
  });

  auto summary = [&](const QString& label, QLabel*& l, const QString& name, const QString& t) {
    l = new QLabel;
    l->setObjectName(name);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->setToolTip(t);
    form->addRow(label, l);
  };
  summary(tr("input_names"), input_names_, QStringLiteral("opt.input_names"),
          tr("input_names: names of the graph inputs, in order. Edited in the Inputs panel."));
  summary(tr("output_names"), output_names_, QStringLiteral("opt.output_names"),
          tr("output_names: names of the graph outputs, in order. Edited under Outputs in the Inputs panel."));
  summary(tr("dynamic_axes"), dynamic_axes_, QStringLiteral("opt.dynamic_axes"),
          tr("dynamic_axes: for an input or output name, the axes whose size is only known at run time (a list "
             "of indices, or index → axis name). Without it every shape is fixed to the example's. Edited in the "
             "Inputs panel: the dyn boxes under each dimension and the outputs' axes."));

  auto* reset = new QPushButton(tr("Restore defaults"));
  reset->setObjectName(QStringLiteral("opt.reset"));
  reset->setToolTip(tr("Set every option above back to the defaults of export_to_onnx (arguments and names stay)"));
  connect(reset, &QPushButton::clicked, this, [this] {
    ExportOptions d;
    ExportOptions& o = state_.options;
    o.export_params = d.export_params;
    o.verbose = d.verbose;
    o.training = d.training;
    o.operator_export_type = d.operator_export_type;
    o.opset_version = d.opset_version;
    o.do_constant_folding = d.do_constant_folding;
    o.keep_initializers_as_inputs = d.keep_initializers_as_inputs;
    o.custom_opsets = d.custom_opsets;
    o.graph_mode = d.graph_mode;
    setState(state_);
    commit(QString(), tr("Restore default options"));
  });
  auto* rl = new QHBoxLayout;
  rl->addStretch(1);
  rl->addWidget(reset);
  v->addLayout(rl);

  problems_ = new QListWidget;
  problems_->setObjectName(QStringLiteral("opt.problems"));
  problems_->setWordWrap(true);
  problems_->setMaximumHeight(110);
  problems_->setToolTip(tr("Problems found before export. Export is possible once the list is empty."));
  connect(problems_, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* it) { emit problemActivated(it->data(Qt::UserRole).toString()); });
  v->addWidget(problems_);
  v->addStretch(1);
  setState(Preset{});
}

void OptionsForm::setState(const Preset& p) {
  state_ = p;
  const ExportOptions& o = p.options;
  const QSignalBlocker b1(output_), b2(export_params_), b3(verbose_), b4(training_), b5(operator_export_type_),
      b6(opset_), b7(constant_folding_), b8(keep_initializers_), b9(custom_opsets_), b10(graph_mode_);
  const QString out = p.output ? q(*p.output) : QString();
  if (output_->text() != out) output_->setText(out);
  {
    const QSignalBlocker b11(load_libraries_);
    QStringList libs;
    for (const auto& l : p.load_libraries) libs << q(l);
    const QString text = libs.join(QStringLiteral("; "));
    if (load_libraries_->text() != text) load_libraries_->setText(text);
  }
  export_params_->setChecked(o.export_params);
  verbose_->setChecked(o.verbose);
  training_->setCurrentIndex(training_->findData(static_cast<int>(o.training)));
  operator_export_type_->setCurrentIndex(operator_export_type_->findData(static_cast<int>(o.operator_export_type)));
  opset_->setValue(o.opset_version);
  constant_folding_->setChecked(o.do_constant_folding);
  keep_initializers_->setCurrentIndex(!o.keep_initializers_as_inputs ? 0 : (*o.keep_initializers_as_inputs ? 1 : 2));
  graph_mode_->setCurrentIndex(graph_mode_->findData(static_cast<int>(o.graph_mode)));
  // Keep a half-typed (invalid) entry as it is while it means the same.
  std::string err;
  auto shown = parseOpsets(custom_opsets_->text().toStdString(), &err);
  if (!shown || *shown != o.custom_opsets) {
    custom_opsets_->setText(q(formatOpsets(o.custom_opsets)));
    setInvalid(custom_opsets_, false, QString());
  }
  input_names_->setText(namesText(o.input_names));
  output_names_->setText(namesText(o.output_names));
  QStringList axes;
  for (const auto& [name, spec] : o.dynamic_axes)
    axes << q(name) + (spec.list_form ? QStringLiteral(": [") : QStringLiteral(": {")) + q(formatAxes(spec)) +
                (spec.list_form ? QStringLiteral("]") : QStringLiteral("}"));
  dynamic_axes_->setText(axes.isEmpty() ? tr("{} (all shapes fixed)") : axes.join(QStringLiteral("\n")));
}

QWidget* OptionsForm::widgetForOption(const std::string& option) const {
  if (option == "output" || option == "f") return output_;
  if (option == "export_params") return export_params_;
  if (option == "verbose") return verbose_;
  if (option == "training") return training_;
  if (option == "operator_export_type") return operator_export_type_;
  if (option == "opset_version") return opset_;
  if (option == "do_constant_folding") return constant_folding_;
  if (option == "keep_initializers_as_inputs") return keep_initializers_;
  if (option.rfind("custom_opsets", 0) == 0) return custom_opsets_;
  if (option == "graph_mode") return graph_mode_;
  if (option.rfind("load_libraries", 0) == 0) return load_libraries_;
  if (option.rfind("input_names", 0) == 0) return input_names_;
  if (option.rfind("output_names", 0) == 0) return output_names_;
  if (option.rfind("dynamic_axes", 0) == 0) return dynamic_axes_;
  return nullptr;
}

void OptionsForm::showProblems(const std::vector<Diagnostic>& problems) {
  problems_->clear();
  for (QWidget* w : {static_cast<QWidget*>(output_), static_cast<QWidget*>(export_params_),
                     static_cast<QWidget*>(verbose_), static_cast<QWidget*>(training_),
                     static_cast<QWidget*>(operator_export_type_), static_cast<QWidget*>(opset_),
                     static_cast<QWidget*>(constant_folding_), static_cast<QWidget*>(keep_initializers_),
                     static_cast<QWidget*>(graph_mode_), static_cast<QWidget*>(input_names_), static_cast<QWidget*>(output_names_),
                     static_cast<QWidget*>(dynamic_axes_)})
    setInvalid(w, false, QString());
  QHash<QWidget*, QStringList> why;
  for (const auto& d : problems) {
    QString text = q(d.message);
    if (!d.option.empty()) text = q(d.option) + QStringLiteral(": ") + text;
    auto* item = new QListWidgetItem(
        style()->standardIcon(d.severity == Severity::Error ? QStyle::SP_MessageBoxCritical : QStyle::SP_MessageBoxWarning),
        text, problems_);
    item->setData(Qt::UserRole, q(d.option));
    if (!d.hint.empty()) item->setToolTip(q(d.hint));
    if (QWidget* w = widgetForOption(d.option)) why[w] << q(d.message);
  }
  std::string opsets_error;
  if (!parseOpsets(custom_opsets_->text().toStdString(), &opsets_error)) why[custom_opsets_] << q(opsets_error);
  else setInvalid(custom_opsets_, false, QString());
  for (auto it = why.begin(); it != why.end(); ++it) setInvalid(it.key(), true, it.value().join(QStringLiteral("\n")));
  problems_->setVisible(!problems.empty());
}

int OptionsForm::problemCount() const { return problems_->count(); }

bool OptionsForm::focusOption(const std::string& option) {
  QWidget* w = widgetForOption(option);
  if (!w || w == input_names_ || w == output_names_ || w == dynamic_axes_) return false;
  w->setFocus(Qt::OtherFocusReason);
  return true;
}

void OptionsForm::commit(const QString& field, const QString& what) { emit edited(state_, field, what); }

}  // namespace oxport::studio
