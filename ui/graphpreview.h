// A graph preview: the scene in a pan/zoom view, module groups that collapse and expand, search
// (Ctrl+F) by name, op or module path, and selection reported as node / group / value ids. The
// layout runs on a worker thread; the view keeps working meanwhile.
#pragma once

#include <QGraphicsView>
#include <QSet>
#include <QWidget>

#include <memory>
#include <set>
#include <string>

#include "graphscene.h"

class QLabel;
class QLineEdit;
class QStackedWidget;
class QToolButton;

namespace oxport::studio {

class ZoomView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit ZoomView(QWidget* parent = nullptr);
  void zoomBy(double factor);
  void setZoom(double scale);
  double zoom() const { return transform().m11(); }
  // The Fit button: the whole graph when it is readable that way (zoom >= kReadableZoom); else
  // its width at a readable zoom, keeping the part in view; pressed again, the whole graph.
  void fitAll();
  void fitWhole();
  // The first view of a new graph: all of it when readable, else its top at a readable size.
  void showStart();
  static constexpr double kReadableZoom = 0.45;

 signals:
  void zoomChanged(double zoom);

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;

 private:
  double width_fit_zoom_ = 0;  // the zoom fitAll() chose by width, until something else zooms
};

class GraphPreview : public QWidget {
  Q_OBJECT

 public:
  GraphPreview(GraphFlavor flavor, const QString& title, QWidget* parent = nullptr);
  ~GraphPreview() override;

  // Shows a graph; the layout is computed in the background (layoutReady() when shown).
  void setGraph(GraphView graph);
  void setGraph(std::shared_ptr<const GraphView> graph);  // shared with the document, not copied
  // Drops the graph and shows a message instead.
  void clearGraph(const QString& message);
  void setMessage(const QString& message);

  const GraphView* graph() const { return graph_.get(); }
  const GraphLayout& layout() const { return scene_->layout(); }
  bool layoutPending() const { return pending_ > 0 || scene_->building(); }
  GraphScene* scene() const { return scene_; }
  ZoomView* view() const { return view_; }
  QStringList groupPaths() const;
  const std::set<std::string>& collapsedGroups() const { return collapsed_; }
  int selectedNode() const { return selected_node_; }

  // Selects a node, expanding the groups that hide it; centres it in the view.
  void selectNode(int node_id, bool center = true);
  void selectGroup(const QString& path);
  // Marks nodes chosen in the other preview (their origins / derived nodes).
  void highlightNodes(const QSet<int>& node_ids);
  // Finds nodes whose name, op or module path contains `text`; selects the first. Returns the count.
  int search(const QString& text);
  void searchStep(int step);
  int matchCount() const { return matches_.size(); }
  void focusSearch();

  void toggleGroup(const QString& path);
  void collapseAll();
  void expandAll();
  void fit();

 signals:
  void nodeSelected(int node_id);
  void groupSelected(const QString& path, int node_count);
  void valueSelected(int edge_id);
  void selectionCleared();
  void layoutReady();

 private:
  void relayout(bool fit, bool auto_collapse = false);
  void layoutDone(int generation, GraphLayout layout, std::set<std::string> collapsed, bool fit);
  void buildStep(int generation, bool fit, QPointF center, double zoom);
  void onSelectionChanged();
  void applyMatches();
  void applyHighlights();
  void updateStats();

  GraphFlavor flavor_;
  QString title_;
  std::shared_ptr<const GraphView> graph_;
  struct Sizes;
  std::shared_ptr<const Sizes> sizes_;
  std::set<std::string> collapsed_;
  int generation_ = 0;
  int pending_ = 0;
  int pending_select_ = -1;
  int selected_node_ = -1;
  bool selecting_ = false;
  QVector<int> matches_;
  int match_pos_ = -1;
  QSet<int> highlighted_nodes_;

  GraphScene* scene_ = nullptr;
  ZoomView* view_ = nullptr;
  QStackedWidget* stack_ = nullptr;
  QLabel* message_ = nullptr;
  QLabel* title_label_ = nullptr;
  QLabel* stats_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* match_label_ = nullptr;
};

}  // namespace oxport::studio
