// QGraphicsScene for a laid-out GraphView: node boxes, group frames (click the triangle to collapse),
// collapsed-group boxes, graph inputs/outputs, constant stubs and edges. Items are painted by hand
// (no child widgets or text items) so that tens of thousands stay cheap.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHash>
#include <QtNumeric>
#include <QPainterPath>
#include <QSet>
#include <QVector>

#include <memory>

#include "oxport/layout.h"

namespace oxport::studio {

enum class GraphFlavor { TorchScript, Onnx };

// Text shown in a node box.
struct NodeLabel {
  QString title;     // "conv2d", "Conv"
  QString subtitle;  // "1×16×32×32" or the module leaf
};
NodeLabel nodeLabel(const GraphView& g, const GraphViewNode& n, GraphFlavor flavor);
QColor opColor(const std::string& op);
// "1 node", "3 nodes".
QString countText(int n, const char* noun);
// "Float(1, 3, 224, 224)" / "float32[1,3,224,224]" -> "1×3×224×224"; empty when no shape is found.
QString shortShape(const std::string& type);

class GraphScene;

class BoxItem : public QGraphicsItem {
 public:
  BoxItem(GraphScene* scene, int item);
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;
  int layoutItem() const { return item_; }
  void setHighlighted(bool on);
  void setMatched(bool on);
  bool highlighted() const { return highlighted_; }

 protected:
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) override;
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

 private:
  GraphScene* scene_;
  int item_;
  QRectF rect_;
  QString title_, subtitle_;
  QColor color_;
  bool highlighted_ = false, matched_ = false;
};

class FrameItem : public QGraphicsItem {
 public:
  FrameItem(GraphScene* scene, int group);
  QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;
  int group() const { return group_; }
  QRectF headerRect() const;
  QRectF toggleRect() const;
  QPainterPath shape() const override;  // only the border and header take clicks (all of it when summarized)
  void setSummarized(bool on);           // drawn as one labelled box over its hidden contents
  bool summarized() const { return summarized_; }

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* e) override;
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) override;

 private:
  void paintSummary(QPainter* p, double detail);  // graphscene_summary.cpp

  GraphScene* scene_;
  int group_;
  QRectF rect_;
  QString label_;
  bool summarized_ = false;
};

class StubItem : public QGraphicsItem {
 public:
  StubItem(GraphScene* scene, int stub);
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;
  int stub() const { return stub_; }

 private:
  GraphScene* scene_;
  int stub_;
  QRectF rect_;
  QString text_;
  double line_to_ = 0;  // x of the consumer's left edge
};

class RouteItem : public QGraphicsItem {
 public:
  RouteItem(GraphScene* scene, int route);
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;
  QPainterPath shape() const override { return QPainterPath(); }  // not clickable
  void setEmphasis(bool on);
  int route() const { return route_; }

 private:
  GraphScene* scene_;
  int route_;
  QPainterPath path_;
  QPolygonF arrow_;
  QRectF bounds_;
  bool emphasis_ = false;
};

class GraphScene : public QGraphicsScene {
  Q_OBJECT

 public:
  explicit GraphScene(QObject* parent = nullptr);
  ~GraphScene() override;

  // All items at once (small graphs, tests).
  void setContent(std::shared_ptr<const GraphView> graph, GraphLayout layout, GraphFlavor flavor);
  // In steps, so a big graph never holds the event loop: beginContent() drops the old items and
  // takes the new layout; each buildSome() adds items for about `budget_ms` and returns true once
  // every item exists. Until then boxOfItem() may return nullptr.
  void beginContent(std::shared_ptr<const GraphView> graph, GraphLayout layout, GraphFlavor flavor);
  bool buildSome(double budget_ms);
  bool building() const { return graph_ && build_pos_ < buildTotal(); }
  void clearContent();

  const GraphView* graph() const { return graph_.get(); }
  const GraphLayout& layout() const { return layout_; }
  GraphFlavor flavor() const { return flavor_; }

  BoxItem* boxOfItem(int item) const { return item >= 0 && item < boxes_.size() ? boxes_[item] : nullptr; }
  FrameItem* frameOfGroup(int group) const { return frames_.value(group); }
  QVector<StubItem*> stubsOfNode(int node_id) const;
  void emphasizeRoutesOf(int item);
  void setHighlightedItems(const QSet<int>& items);
  void setMatchedItems(const QSet<int>& items);

  // After a localize: each compared node's worst relative error (GraphViewNode::id -> error).
  // Boxes get a ring coloured by errorColor, collapsed groups and frame headers their worst
  // node's colour. Kept while the same graph is relaid (collapse, expand); a new graph drops it.
  void setNodeErrors(QHash<int, double> errors, double threshold);
  void setErrorThreshold(double threshold);
  void clearNodeErrors() { setNodeErrors({}, error_threshold_); }
  bool hasNodeErrors() const { return !node_errors_.isEmpty(); }
  double errorThreshold() const { return error_threshold_; }
  // The worst error of a node (NaN when not compared) and of a module path's subtree.
  double nodeError(int node_id) const { return node_errors_.value(node_id, qQNaN()); }
  double groupError(const std::string& path) const;
  // Green well under the threshold, amber near it, red over it (darker the further over).
  static QColor errorColor(double error, double threshold);

  // Semantic zoom (graphscene_summary.cpp): below kSummaryZoom, where labels are unreadable, each
  // module whose frame spans less than half the viewport both ways is drawn as one labelled box
  // (coloured by its worst error after a localize) and its contents are hidden, so a frame paints
  // a few boxes instead of thousands; zooming in opens them again. The view calls this on zoom.
  static constexpr double kSummaryZoom = 0.3;
  void setViewZoom(double zoom, const QSizeF& viewport);
  int summarizedGroups() const { return static_cast<int>(summarized_.size()); }
  bool isSummarized(int group) const { return summarized_.contains(group); }

  const QFont& titleFont() const { return title_font_; }
  const QFont& smallFont() const { return small_font_; }

 signals:
  void toggleGroupRequested(const QString& path);
  void zoomToRequested(const QRectF& rect);  // a summarized module was double-clicked

 private:
  friend class BoxItem;
  friend class FrameItem;
  friend class StubItem;
  friend class RouteItem;

  size_t buildTotal() const {
    return layout_.groups.size() + layout_.routes.size() + layout_.stubs.size() + layout_.items.size();
  }

  std::shared_ptr<const GraphView> graph_;
  GraphLayout layout_;
  size_t build_pos_ = 0;  // items built so far, in the order groups, routes, stubs, boxes
  GraphFlavor flavor_ = GraphFlavor::TorchScript;
  QVector<BoxItem*> boxes_;
  QHash<int, FrameItem*> frames_;
  QVector<StubItem*> stubs_;
  QVector<RouteItem*> routes_;
  QVector<QVector<int>> routes_of_item_;
  QSet<int> emphasized_;
  QSet<int> highlighted_, matched_;
  std::unordered_map<int, int> edge_index_;
  QFont title_font_, small_font_;
  void applySummaries(QSet<int> next);
  QSet<int> summarized_;  // groups drawn as labelled boxes
  QHash<int, double> node_errors_;
  QHash<QString, double> group_errors_;  // module path -> worst error in its subtree
  double error_threshold_ = 1e-4;
};

}  // namespace oxport::studio
