// The Localize panel and its controller: after a verification fails, find the first TorchScript
// node whose ONNX values differ from libtorch's (oxport::localizeExport on the worker thread),
// colour both graphs by each node's error (legend, a threshold the user moves), select and scroll
// to the first divergence, and give the inspector each node's numbers.
#pragma once

#include <QHash>
#include <QObject>
#include <QWidget>

#include <filesystem>
#include <memory>
#include <optional>

#include "graphscene.h"
#include "oxport/localize.h"
#include "oxport/options.h"

class QAction;
class QLabel;
class QPushButton;
class QSlider;
class QTextBrowser;

namespace oxport {
class Model;
}

namespace oxport::studio {

class GraphPreview;
class TaskRunner;

class LocalizePanel : public QWidget {
  Q_OBJECT

 public:
  explicit LocalizePanel(QWidget* parent = nullptr);
  QPushButton* localizeButton() const { return localize_; }
  QPushButton* firstButton() const { return first_; }
  QSlider* thresholdSlider() const { return slider_; }
  QTextBrowser* summary() const { return summary_; }
  // The threshold, as a relative error: 10^(slider / 4), 1e-8 .. 1.
  double threshold() const;
  void setThreshold(double t);
  void setLegend(double threshold);

 signals:
  void thresholdChanged(double threshold);

 private:
  QPushButton* localize_ = nullptr;
  QPushButton* first_ = nullptr;
  QSlider* slider_ = nullptr;
  QLabel* threshold_label_ = nullptr;
  QLabel* legend_ = nullptr;
  QTextBrowser* summary_ = nullptr;
};

class LocalizeController : public QObject {
  Q_OBJECT

 public:
  LocalizeController(TaskRunner* runner, GraphPreview* torch, GraphPreview* onnx, QObject* parent = nullptr);

  LocalizePanel* panel() const { return panel_; }
  QAction* action() const { return action_; }
  // The file to localize: set after each export (the previews then show its graphs).
  void setTarget(std::shared_ptr<Model> model, const ExportOptions& options, const QString& onnx_file);
  void clear();
  // A verification found differences: say so in the panel and offer the action.
  void offer(const QString& why);
  void start();
  bool running() const { return job_ >= 0; }
  const LocalizeReport* report() const { return report_ ? &*report_ : nullptr; }
  // The first node (topological order) over the current threshold, or -1; selects it.
  int showFirstDivergence();
  // The inspector's extra section for a node.
  QString notesFor(GraphFlavor flavor, int node_id) const;
  void updateEnabled(bool busy);

 signals:
  void finished(bool ok, const QString& text);  // text: the report, for the log

 private:
  void applyColours();
  void setThreshold(double t);
  void showSummary();

  TaskRunner* runner_;
  GraphPreview* torch_;
  GraphPreview* onnx_;
  LocalizePanel* panel_ = nullptr;
  QAction* action_ = nullptr;
  std::shared_ptr<Model> model_;
  std::optional<ExportOptions> options_;
  std::filesystem::path file_;
  std::optional<LocalizeReport> report_;
  QHash<int, int> node_of_torch_;          // TorchScript node id -> index in report_->nodes
  QHash<int, QList<int>> nodes_of_onnx_;   // ONNX preview node id -> indices in report_->nodes
  int job_ = -1;
  double threshold_ = 1e-4;
};

}  // namespace oxport::studio
