#include "localizepanel.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <cmath>

#include "graphpreview.h"
#include "oxport/model.h"
#include "oxport/runtime.h"
#include "taskrunner.h"

namespace oxport::studio {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString num(double v) {
  if (std::isnan(v)) return QStringLiteral("—");
  if (std::isinf(v)) return QStringLiteral("∞");
  return QString::number(v, 'g', 3);
}

QString swatch(const QColor& c) {
  return QStringLiteral("<span style='background:%1; color:%1'>&nbsp;&nbsp;&nbsp;&nbsp;</span>").arg(c.name());
}

QString valueRow(const ValueComparison& c, const QString& role) {
  QString what;
  if (!c.compared) {
    what = QObject::tr("not compared") + (c.note.empty() ? QString() : QStringLiteral(" (%1)").arg(q(c.note)));
  } else {
    what = QObject::tr("max abs %1 · max rel %2 · %3% off · <b>%4</b>")
               .arg(num(c.max_abs_error), num(c.max_rel_error), num(c.share_off * 100),
                    c.passed ? QObject::tr("ok") : QObject::tr("differs"));
    if (!c.note.empty()) what += QStringLiteral("<br><small>%1</small>").arg(q(c.note));
  }
  return QStringLiteral("<tr><td style='padding-right:8px'>%1 %%2</td><td>%3</td></tr>").arg(role, q(c.torch_value), what);
}

}  // namespace

// ---- the panel

LocalizePanel::LocalizePanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("localizePanel"));
  auto* top = new QHBoxLayout;
  localize_ = new QPushButton(tr("Localize"));
  localize_->setObjectName(QStringLiteral("localizeButton"));
  localize_->setToolTip(tr("Run ONNX Runtime with every intermediate value exposed and libtorch node by node, "
                           "and find the first node whose values differ (Ctrl+L)"));
  first_ = new QPushButton(tr("Show First Divergence"));
  first_->setObjectName(QStringLiteral("firstDivergenceButton"));
  first_->setEnabled(false);
  slider_ = new QSlider(Qt::Horizontal);
  slider_->setObjectName(QStringLiteral("thresholdSlider"));
  slider_->setRange(-32, 0);  // 10^(v/4): 1e-8 .. 1
  slider_->setMaximumWidth(220);
  slider_->setToolTip(tr("Threshold: a node is over it when its largest error exceeds this share of its output's "
                         "largest magnitude"));
  threshold_label_ = new QLabel;
  top->addWidget(localize_);
  top->addWidget(first_);
  top->addSpacing(12);
  top->addWidget(new QLabel(tr("Threshold")));
  top->addWidget(slider_);
  top->addWidget(threshold_label_);
  top->addStretch(1);
  legend_ = new QLabel;
  legend_->setObjectName(QStringLiteral("localizeLegend"));
  legend_->setTextFormat(Qt::RichText);
  summary_ = new QTextBrowser;
  summary_->setObjectName(QStringLiteral("localizeSummary"));
  summary_->setOpenLinks(false);
  auto* col = new QVBoxLayout(this);
  col->addLayout(top);
  col->addWidget(legend_);
  col->addWidget(summary_, 1);
  connect(slider_, &QSlider::valueChanged, this, [this] {
    threshold_label_->setText(QString::number(threshold(), 'g', 2));
    setLegend(threshold());
    emit thresholdChanged(threshold());
  });
  setThreshold(1e-4);
  setLegend(1e-4);
}

double LocalizePanel::threshold() const { return std::pow(10.0, slider_->value() / 4.0); }

void LocalizePanel::setThreshold(double t) {
  const int v = static_cast<int>(std::lround(std::log10(std::max(t, 1e-8)) * 4));
  slider_->setValue(std::clamp(v, slider_->minimum(), slider_->maximum()));
  threshold_label_->setText(QString::number(threshold(), 'g', 2));
}

void LocalizePanel::setLegend(double t) {
  legend_->setText(tr("%1 under 1/10 of the threshold &nbsp; %2 near it &nbsp; %3 over it &nbsp; %4 1000× over "
                      "&nbsp; (no ring: not compared)")
                       .arg(swatch(GraphScene::errorColor(t * 0.01, t)), swatch(GraphScene::errorColor(t * 0.5, t)),
                            swatch(GraphScene::errorColor(t * 2, t)), swatch(GraphScene::errorColor(t * 1000, t))));
}

// ---- the controller

LocalizeController::LocalizeController(TaskRunner* runner, GraphPreview* torch, GraphPreview* onnx, QObject* parent)
    : QObject(parent), runner_(runner), torch_(torch), onnx_(onnx) {
  panel_ = new LocalizePanel;
  action_ = new QAction(tr("&Localize"), this);
  action_->setObjectName(QStringLiteral("localizeAction"));
  action_->setShortcut(QKeySequence(QStringLiteral("Ctrl+L")));
  action_->setToolTip(panel_->localizeButton()->toolTip());
  connect(action_, &QAction::triggered, this, &LocalizeController::start);
  connect(panel_->localizeButton(), &QPushButton::clicked, this, &LocalizeController::start);
  connect(panel_->firstButton(), &QPushButton::clicked, this, [this] { showFirstDivergence(); });
  connect(panel_, &LocalizePanel::thresholdChanged, this, &LocalizeController::setThreshold);
  clear();
}

void LocalizeController::setTarget(std::shared_ptr<Model> model, const ExportOptions& options, const QString& file) {
  clear();
  model_ = std::move(model);
  options_ = options;
  file_ = file.toStdString();
  panel_->summary()->setHtml(tr("<p>Exported to %1. Verify it (Ctrl+R); when the outputs differ, Localize finds "
                                "where.</p>").arg(file.toHtmlEscaped()));
  updateEnabled(runner_->busy());
}

void LocalizeController::clear() {
  report_.reset();
  node_of_torch_.clear();
  nodes_of_onnx_.clear();
  if (torch_->scene()) torch_->scene()->clearNodeErrors();
  if (onnx_->scene()) onnx_->scene()->clearNodeErrors();
  panel_->firstButton()->setEnabled(false);
  panel_->summary()->setHtml(tr("<p>Export and verify a model. When its outputs differ from libtorch's, Localize "
                                "finds the first node where the ONNX file diverges, and colours both graphs by "
                                "each node's error.</p>"));
  updateEnabled(runner_->busy());
}

void LocalizeController::offer(const QString& why) {
  panel_->summary()->setHtml(
      tr("<p><b>%1</b></p><p>Press <b>Localize</b> (Ctrl+L) to find the first node whose ONNX values differ from "
         "libtorch's.</p>")
          .arg(why.toHtmlEscaped()));
  if (auto* dock = qobject_cast<QWidget*>(panel_->parentWidget())) dock->raise();
  updateEnabled(runner_->busy());
}

void LocalizeController::updateEnabled(bool busy) {
  const bool can = model_ && options_ && !file_.empty() && !busy && job_ < 0;
  action_->setEnabled(can);
  panel_->localizeButton()->setEnabled(can);
}

void LocalizeController::start() {
  if (!model_ || !options_ || file_.empty() || runner_->busy() || job_ >= 0) return;
  auto model = model_;
  const ExportOptions opts = *options_;
  const std::filesystem::path file = file_;
  const double tol = 1e-4;
  panel_->summary()->setHtml(tr("<p>Localizing: ONNX Runtime with every value exposed, then libtorch node by "
                                "node…</p>"));
  job_ = runner_->run<Result<LocalizeReport>>(
      tr("Localize"),
      [model, opts, file, tol](const ProgressFn& progress, const CancelToken& cancel) -> Result<LocalizeReport> {
        auto rt = makeDefaultRuntime();
        if (!rt.ok()) return rt.error();
        LocalizeOptions lo;
        lo.tolerance = tol;
        return localizeExport(*model, opts, file, *rt.value(), lo, cancel, progress);
      },
      [this](Result<LocalizeReport>& r) {
        job_ = -1;
        updateEnabled(runner_->busy());
        if (!r.ok()) {
          panel_->summary()->setHtml(tr("<p><b>Localize did not run:</b> %1</p>").arg(q(r.error().message())));
          emit finished(false, QString::fromStdString(r.error().message()));
          return;
        }
        report_ = std::move(r.value());
        node_of_torch_.clear();
        nodes_of_onnx_.clear();
        QHash<QString, int> onnx_ids;
        if (const GraphView* g = onnx_->graph())
          for (const auto& n : g->nodes) onnx_ids.insert(QString::fromStdString(n.name), n.id);
        for (int i = 0; i < static_cast<int>(report_->nodes.size()); ++i) {
          const LocalizedNode& n = report_->nodes[static_cast<size_t>(i)];
          node_of_torch_.insert(n.torch_id, i);
          for (const auto& on : n.onnx_nodes) {
            auto it = onnx_ids.constFind(QString::fromStdString(on));
            if (it != onnx_ids.constEnd()) nodes_of_onnx_[*it].append(i);
          }
        }
        threshold_ = report_->tolerance;
        panel_->setThreshold(threshold_);
        applyColours();
        showSummary();
        if (report_->first_divergence) showFirstDivergence();
        emit finished(true, QString::fromStdString(report_->toText()));
      });
  updateEnabled(true);
}

void LocalizeController::setThreshold(double t) {
  threshold_ = t;
  if (torch_->scene()) torch_->scene()->setErrorThreshold(t);
  if (onnx_->scene()) onnx_->scene()->setErrorThreshold(t);
  if (report_) showSummary();
}

void LocalizeController::applyColours() {
  if (!report_) return;
  QHash<int, double> torch_errors, onnx_errors;
  for (const auto& n : report_->nodes) torch_errors.insert(n.torch_id, n.max_rel_error);
  for (auto it = nodes_of_onnx_.constBegin(); it != nodes_of_onnx_.constEnd(); ++it) {
    double worst = 0;
    for (int i : it.value()) worst = std::max(worst, report_->nodes[static_cast<size_t>(i)].max_rel_error);
    onnx_errors.insert(it.key(), worst);
  }
  torch_->scene()->setNodeErrors(torch_errors, threshold_);
  onnx_->scene()->setNodeErrors(onnx_errors, threshold_);
}

int LocalizeController::showFirstDivergence() {
  if (!report_) return -1;
  for (const auto& n : report_->nodes) {
    if (!(n.max_rel_error > threshold_)) continue;
    torch_->selectNode(n.torch_id, true);
    // And its ONNX nodes: the first selected and scrolled to as well.
    if (const GraphView* g = onnx_->graph())
      for (const auto& on : g->nodes)
        if (!n.onnx_nodes.empty() && on.name == n.onnx_nodes.front()) {
          onnx_->selectNode(on.id, true);
          break;
        }
    torch_->selectNode(n.torch_id, true);  // the inspector shows the TorchScript node
    return n.torch_id;
  }
  return -1;
}

void LocalizeController::showSummary() {
  const LocalizeReport& r = *report_;
  QString html;
  if (!r.mapped) {
    panel_->summary()->setHtml(QStringLiteral("<p>%1</p>").arg(q(r.message)));
    panel_->firstButton()->setEnabled(false);
    return;
  }
  int over = 0;
  const LocalizedNode* first = nullptr;
  for (const auto& n : r.nodes)
    if (n.max_rel_error > threshold_) {
      ++over;
      if (!first) first = &n;
    }
  html += tr("<p>%1 values compared on %2 TorchScript nodes; %3 of %4 ONNX nodes mapped. ")
              .arg(r.compared)
              .arg(r.torch_nodes)
              .arg(r.onnx_nodes_mapped)
              .arg(r.onnx_nodes);
  html += tr("ONNX Runtime %1 ms, libtorch %2 ms.</p>").arg(std::lround(r.onnx_ms)).arg(std::lround(r.torch_ms));
  if (!first) {
    html += tr("<p><b>No node over the threshold %1</b>: every compared value matches libtorch's.</p>")
                .arg(num(threshold_));
  } else {
    html += tr("<p><b>First divergence</b> (over %1): <b>%2</b> in <b>%3</b>%4<br>ONNX nodes: %5<br>"
               "%6 node(s) over the threshold in all.</p>")
                .arg(num(threshold_), q(first->torch_node), first->module.empty() ? tr("(top level)") : q(first->module),
                     first->source.empty() ? QString() : tr(" at %1").arg(q(first->source)),
                     q([&] {
                       std::string s;
                       for (const auto& o : first->onnx_nodes) s += (s.empty() ? "" : ", ") + o;
                       return s.empty() ? std::string("(none)") : s;
                     }()))
                .arg(over);
    const LocalizedNode* detail = nullptr;
    if (r.first_divergence && r.first_divergence->torch_id == first->torch_id) detail = &*r.first_divergence;
    if (detail) {
      html += QStringLiteral("<table>");
      for (const auto& m : detail->merged) html += QStringLiteral("<tr><td>merged</td><td>%1</td></tr>").arg(q(m));
      for (const auto& c : detail->inputs) html += valueRow(c, tr("input"));
      for (const auto& c : detail->outputs) html += valueRow(c, tr("output"));
      html += QStringLiteral("</table>");
    }
  }
  if (!r.message.empty()) html += QStringLiteral("<p><small>%1</small></p>").arg(q(r.message));
  panel_->summary()->setHtml(html);
  panel_->firstButton()->setEnabled(first != nullptr);
}

QString LocalizeController::notesFor(GraphFlavor flavor, int node_id) const {
  if (!report_) return {};
  QList<int> idx;
  if (flavor == GraphFlavor::TorchScript) {
    auto it = node_of_torch_.constFind(node_id);
    if (it != node_of_torch_.constEnd()) idx.append(*it);
  } else {
    idx = nodes_of_onnx_.value(node_id);
  }
  QString html = QStringLiteral("<h4>%1</h4>").arg(tr("Localize"));
  if (idx.isEmpty()) return html + tr("<p>Not compared: no value of its own in the file.</p>");
  for (int i : idx) {
    const LocalizedNode& n = report_->nodes[static_cast<size_t>(i)];
    const bool over = n.max_rel_error > threshold_;
    html += QStringLiteral("<p><span style='color:%1'>■</span> %2 <b>%3</b></p><table>")
                .arg(GraphScene::errorColor(n.max_rel_error, threshold_).name(), q(n.torch_node),
                     over ? tr("over the threshold") : tr("within the threshold"));
    // Full comparisons for the first divergence; the worst numbers for the others.
    if (report_->first_divergence && report_->first_divergence->torch_id == n.torch_id) {
      for (const auto& c : report_->first_divergence->inputs) html += valueRow(c, tr("input"));
      for (const auto& c : report_->first_divergence->outputs) html += valueRow(c, tr("output"));
    } else {
      for (const auto& c : n.outputs) html += valueRow(c, tr("output"));
      for (const auto& c : n.inputs) html += valueRow(c, tr("input"));
    }
    html += QStringLiteral("</table>");
  }
  return html;
}

}  // namespace oxport::studio
