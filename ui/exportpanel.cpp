#include "exportpanel.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <set>

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString shapeText(const std::vector<int64_t>& s) {
  QStringList d;
  for (int64_t x : s) d << QString::number(x);
  return QStringLiteral("[") + d.join(QStringLiteral(", ")) + QStringLiteral("]");
}

}  // namespace

QString phaseLabel(Phase p) {
  switch (p) {
    case Phase::Load: return QObject::tr("Load");
    case Phase::Passes: return QObject::tr("Passes");
    case Phase::Trace: return QObject::tr("Trace");
    case Phase::Convert: return QObject::tr("Convert");
    case Phase::Fold: return QObject::tr("Fold");
    case Phase::Optimize: return QObject::tr("Optimize");
    case Phase::Serialize: return QObject::tr("Serialize");
    case Phase::Check: return QObject::tr("Check");
    case Phase::Verify: return QObject::tr("Verify");
  }
  return QObject::tr("Working");
}

ExportPanel::ExportPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("exportPanel"));
  auto* h = new QHBoxLayout(this);

  // Left: actions and phase progress.
  auto* left = new QVBoxLayout;
  auto* buttons = new QHBoxLayout;
  export_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Export"));
  export_->setObjectName(QStringLiteral("exportButton"));
  export_->setToolTip(tr("Export to ONNX (Ctrl+E)"));
  cancel_ = new QPushButton(style()->standardIcon(QStyle::SP_BrowserStop), tr("Cancel"));
  cancel_->setObjectName(QStringLiteral("cancelButton"));
  cancel_->setEnabled(false);
  verify_ = new QPushButton(style()->standardIcon(QStyle::SP_DialogApplyButton), tr("Verify"));
  verify_->setObjectName(QStringLiteral("verifyButton"));
  verify_->setToolTip(tr("Run the exported model in ONNX Runtime and compare every output with libtorch's"));
  verify_->setEnabled(false);
  buttons->addWidget(export_);
  buttons->addWidget(cancel_);
  buttons->addWidget(verify_);
  buttons->addStretch(1);
  left->addLayout(buttons);
  phases_box_ = new QWidget;
  auto* grid = new QGridLayout(phases_box_);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setVerticalSpacing(4);
  for (int p = 0; p < kPhaseCount; ++p) {
    auto* label = new QLabel(phaseLabel(static_cast<Phase>(p)));
    auto* bar = new QProgressBar;
    bar->setObjectName(QStringLiteral("phase.%1").arg(phaseLabel(static_cast<Phase>(p))));
    bar->setRange(0, 1000);
    bar->setTextVisible(false);
    bar->setMaximumHeight(14);
    grid->addWidget(label, p, 0);
    grid->addWidget(bar, p, 1);
    bars_[p] = bar;
    labels_[p] = label;
    label->hide();
    bar->hide();
  }
  left->addWidget(phases_box_);
  summary_ = new QLabel;
  summary_->setObjectName(QStringLiteral("exportSummary"));
  summary_->setWordWrap(true);
  left->addWidget(summary_);
  left->addStretch(1);
  auto* leftW = new QWidget;
  leftW->setLayout(left);
  leftW->setMinimumWidth(260);
  leftW->setMaximumWidth(380);

  // Middle: statistics. Right: verification.
  stats_ = new QTextBrowser;
  stats_->setObjectName(QStringLiteral("exportStats"));
  stats_->setPlaceholderText(tr("Statistics of the last export appear here."));
  auto* verifyBox = new QWidget;
  auto* vv = new QVBoxLayout(verifyBox);
  vv->setContentsMargins(0, 0, 0, 0);
  verify_summary_ = new QLabel(tr("Verify compares ONNX Runtime's outputs with libtorch's."));
  verify_summary_->setObjectName(QStringLiteral("verifySummary"));
  verify_summary_->setWordWrap(true);
  verify_table_ = new QTreeWidget;
  verify_table_->setObjectName(QStringLiteral("verifyTable"));
  verify_table_->setHeaderLabels({tr("Run / output"), tr("Expected"), tr("Actual"), tr("Max abs error"),
                                  tr("Max rel error"), tr("Result")});
  verify_table_->setRootIsDecorated(true);
  verify_table_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  vv->addWidget(verify_summary_);
  vv->addWidget(verify_table_, 1);

  auto* split = new QSplitter;
  split->addWidget(leftW);
  split->addWidget(stats_);
  split->addWidget(verifyBox);
  split->setStretchFactor(1, 1);
  split->setStretchFactor(2, 1);
  h->setContentsMargins(4, 4, 4, 4);
  h->addWidget(split);
}

void ExportPanel::startPhases(const QList<Phase>& phases) {
  for (int p = 0; p < kPhaseCount; ++p) {
    const bool on = phases.contains(static_cast<Phase>(p));
    bars_[p]->setVisible(on);
    labels_[p]->setVisible(on);
    bars_[p]->setValue(0);
    bars_[p]->setToolTip(QString());
  }
  summary_->clear();
}

void ExportPanel::setPhaseProgress(Phase phase, double fraction, const QString& message) {
  const int p = static_cast<int>(phase);
  // Earlier phases are done once a later one reports.
  for (int k = 0; k < p; ++k)
    if (bars_[k]->isVisible()) bars_[k]->setValue(1000);
  bars_[p]->setVisible(true);
  labels_[p]->setVisible(true);
  bars_[p]->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
  bars_[p]->setToolTip(message);
  if (!message.isEmpty()) summary_->setText(QStringLiteral("%1: %2").arg(phaseLabel(phase), message));
}

void ExportPanel::finishPhases(bool ok, const QString& summary) {
  if (ok)
    for (auto* b : std::as_const(bars_))
      if (b->isVisible()) b->setValue(1000);
  summary_->setText(summary);
}

void ExportPanel::showResult(const ExportResult& r, const GraphView& onnx) {
  const auto& s = r.stats;
  QLocale loc;
  QString html = QStringLiteral("<table>");
  auto row = [&](const QString& k, const QString& v) {
    html += QStringLiteral("<tr><td style='padding-right:12px'><b>%1</b></td><td>%2</td></tr>").arg(k, v);
  };
  row(tr("File"), q(r.output.string()).toHtmlEscaped() + QStringLiteral(" (%1)").arg(loc.formattedDataSize(s.file_bytes)));
  row(tr("Nodes"), tr("%1 ONNX from %2 TorchScript").arg(s.onnx_nodes).arg(s.torch_nodes));
  row(tr("Initializers"), tr("%1 (%2)%3").arg(s.initializers).arg(loc.formattedDataSize(s.initializer_bytes))
                               .arg(s.external_data ? tr(", external data") : QString()));
  // Graph inputs; initializers also listed as inputs (keep_initializers_as_inputs) are counted.
  std::set<std::string> initializers;
  for (const auto& e : onnx.edges)
    if (e.is_initializer) initializers.insert(e.name);
  QStringList inputs;
  int weights_as_inputs = 0;
  for (const auto& n : r.input_names) {
    if (initializers.count(n)) ++weights_as_inputs;
    else inputs << q(n).toHtmlEscaped();
  }
  QString in_text = inputs.join(QStringLiteral(", "));
  if (weights_as_inputs) in_text += tr(" (+ %1 initializers listed as inputs)").arg(weights_as_inputs);
  row(tr("Inputs"), in_text);
  row(tr("Outputs"), q([&] { std::string j; for (auto& n : r.output_names) j += (j.empty() ? "" : ", ") + n; return j; }()).toHtmlEscaped());
  row(tr("ONNX checker"), s.checker_passed ? tr("passed") : tr("<span style='color:#c03030'>failed</span>"));
  row(tr("Shape inference"), s.shape_inference_passed ? tr("passed") : tr("<span style='color:#c03030'>failed</span>"));
  QStringList phases;
  double total = 0;
  for (const auto& [name, ms] : s.phase_ms) {
    phases << QStringLiteral("%1 %2 ms").arg(q(name)).arg(ms, 0, 'f', 1);
    total += ms;
  }
  row(tr("Time"), tr("%1 ms: %2").arg(total, 0, 'f', 0).arg(phases.join(QStringLiteral(", "))));
  html += QStringLiteral("</table><p><b>%1</b> ").arg(tr("ONNX ops:"));
  QStringList ops;
  for (const auto& [op, n] : s.onnx_op_histogram) ops << QStringLiteral("%1 ×%2").arg(q(op)).arg(n);
  html += ops.join(QStringLiteral(", ")).toHtmlEscaped() + QStringLiteral("</p>");
  stats_->setHtml(html);
}

QString ExportPanel::statsText() const { return stats_->toPlainText(); }

void ExportPanel::clearResult(const QString& note) {
  stats_->clear();
  if (!note.isEmpty()) stats_->setPlainText(note);
}

void ExportPanel::clearVerify() {
  verify_table_->clear();
  verify_summary_->setText(tr("Verify compares ONNX Runtime's outputs with libtorch's."));
}

void ExportPanel::showVerifyError(const QString& message) {
  verify_table_->clear();
  verify_summary_->setText(QStringLiteral("<span style='color:#c03030'>%1</span>").arg(message.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"))));
}

void ExportPanel::showVerify(const VerifyReport& report) {
  verify_table_->clear();
  if (report.skipped) {
    verify_summary_->setText(QStringLiteral("<span style='color:#a06000'>%1</span>")
                                 .arg(tr("Not verified: %1").arg(QString::fromStdString(report.skip_reason)).toHtmlEscaped()));
    return;
  }
  int passed = 0;
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const VerifyRun& run = report.runs[i];
    passed += run.passed ? 1 : 0;
    QStringList shapes;
    for (const auto& s : run.input_shapes) shapes << shapeText(s);
    auto* top = new QTreeWidgetItem(verify_table_, {tr("Run %1: %2").arg(i + 1).arg(shapes.join(QStringLiteral(" "))),
                                                     QString(), QString(), QString(), QString(),
                                                     run.passed ? tr("pass") : tr("FAIL")});
    top->setIcon(5, style()->standardIcon(run.passed ? QStyle::SP_DialogApplyButton : QStyle::SP_MessageBoxCritical));
    if (!run.error.empty()) {
      auto* e = new QTreeWidgetItem(top, {q(run.error)});
      e->setFirstColumnSpanned(true);
    }
    for (const auto& o : run.outputs) {
      // Tie order and random outputs pass without equal values: say which (the note, as tooltip, why).
      const QString status = !o.passed    ? tr("FAIL")
                             : o.tie_order ? tr("pass (tie order)")
                             : o.random    ? tr("not compared (random)")
                                           : tr("pass");
      auto* it = new QTreeWidgetItem(top, {q(o.name), shapeText(o.expected_shape), shapeText(o.actual_shape),
                                           o.random ? QString() : QString::number(o.max_abs_error, 'g', 3),
                                           o.random ? QString() : QString::number(o.max_rel_error, 'g', 3), status});
      if (!o.note.empty()) it->setToolTip(0, q(o.note));
      it->setIcon(5, style()->standardIcon(o.passed ? QStyle::SP_DialogApplyButton : QStyle::SP_MessageBoxCritical));
    }
    top->setExpanded(true);
  }
  const QString outcome = QString::fromStdString(report.outcome());  // "passed except tie order" ...
  verify_summary_->setText(report.passed
                               ? tr("<b>%1</b>: %2 run(s) within relative tolerance %3.")
                                     .arg(outcome.left(1).toUpper() + outcome.mid(1))
                                     .arg(report.runs.size())
                                     .arg(report.tolerance)
                               : tr("<b style='color:#c03030'>Failed</b>: %1 of %2 run(s) passed (relative tolerance %3).")
                                     .arg(passed)
                                     .arg(report.runs.size())
                                     .arg(report.tolerance));
}

// ---------------------------------------------------------------------------------------------

DiagnosticsView::DiagnosticsView(QWidget* parent) : QTreeWidget(parent) {
  setObjectName(QStringLiteral("diagnostics"));
  setHeaderLabels({tr("Message"), tr("Node"), tr("Module"), tr("Source"), tr("From")});
  setRootIsDecorated(true);
  setWordWrap(true);
  header()->setSectionResizeMode(0, QHeaderView::Stretch);
  header()->setStretchLastSection(false);
  setToolTip(tr("Click a row to jump to its node in the TorchScript graph"));
  connect(this, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* it) {
    while (it->parent()) it = it->parent();
    int i = it->data(0, Qt::UserRole).toInt();
    if (i >= 0 && i < static_cast<int>(diagnostics_.size())) emit diagnosticActivated(diagnostics_[i]);
  });
}

void DiagnosticsView::setDiagnostics(const std::vector<Diagnostic>& diagnostics, const QString& origin) {
  diagnostics_ = diagnostics;
  clear();
  for (size_t i = 0; i < diagnostics.size(); ++i) {
    const Diagnostic& d = diagnostics[i];
    QString source = d.location.known() ? QStringLiteral("%1:%2").arg(q(d.location.file)).arg(d.location.line) : QString();
    auto* it = new QTreeWidgetItem(this, {q(d.message), q(d.node_kind), q(d.module_path), source, origin});
    it->setData(0, Qt::UserRole, static_cast<int>(i));
    QStyle::StandardPixmap icon = d.severity == Severity::Error ? QStyle::SP_MessageBoxCritical
                                  : d.severity == Severity::Warning ? QStyle::SP_MessageBoxWarning
                                                                    : QStyle::SP_MessageBoxInformation;
    it->setIcon(0, style()->standardIcon(icon));
    it->setToolTip(0, q(d.toString()));
    if (!d.hint.empty()) {
      auto* hint = new QTreeWidgetItem(it, {tr("hint: %1").arg(q(d.hint))});
      hint->setFirstColumnSpanned(true);
    }
    if (!d.option.empty()) {
      auto* opt = new QTreeWidgetItem(it, {tr("option: %1").arg(q(d.option))});
      opt->setFirstColumnSpanned(true);
    }
    if (!d.code.empty()) it->setToolTip(4, q(d.code));
    it->setExpanded(true);
  }
}

}  // namespace oxport::studio
