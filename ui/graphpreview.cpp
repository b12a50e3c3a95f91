#include "graphpreview.h"

#include <QApplication>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QShortcut>
#include <QStackedWidget>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// GUI-thread time per slice when building a scene's items.
constexpr double kBuildSliceMs = 8.0;

// Graphs above this many nodes open with their second level of groups collapsed.
constexpr size_t kAutoCollapseNodes = 1500;

struct LayoutOutcome {
  GraphLayout layout;
  std::set<std::string> collapsed;
  std::shared_ptr<const void> sizes;  // the measured box sizes when this run measured them
};

}  // namespace

struct GraphPreview::Sizes {
  std::unordered_map<int, LayoutSize> nodes, terminals;
  QFont title_font, small_font;
  bool measured = false;
};

// ---------------------------------------------------------------------------------------------

ZoomView::ZoomView(QWidget* parent) : QGraphicsView(parent) {
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setResizeAnchor(QGraphicsView::AnchorViewCenter);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setOptimizationFlags(QGraphicsView::DontSavePainterState);
  setFrameShape(QFrame::NoFrame);
  setBackgroundBrush(palette().color(QPalette::Base));
}

void ZoomView::setZoom(double s) {
  s = std::clamp(s, 0.02, 6.0);
  QTransform t;
  t.scale(s, s);
  setTransform(t);
  emit zoomChanged(s);
}

void ZoomView::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  emit zoomChanged(zoom());  // what spans half the view changed
}

void ZoomView::zoomBy(double factor) { setZoom(zoom() * factor); }

void ZoomView::fitWhole() {
  if (!scene()) return;
  QRectF r = scene()->sceneRect();
  if (r.isEmpty()) return;
  fitInView(r, Qt::KeepAspectRatio);
  if (zoom() > 1.0) setZoom(1.0);  // small graphs are not blown up beyond their natural size
  else emit zoomChanged(zoom());
}

void ZoomView::fitAll() {
  if (!scene()) return;
  const QRectF r = scene()->sceneRect();
  if (r.isEmpty()) return;
  const double whole = std::min(viewport()->width() / r.width(), viewport()->height() / r.height());
  // Fit pressed again right after fitting the width: the whole graph, as an overview.
  const bool again = width_fit_zoom_ > 0 && std::abs(zoom() - width_fit_zoom_) < 1e-9;
  width_fit_zoom_ = 0;
  if (whole >= kReadableZoom || again) {
    fitWhole();
    return;
  }
  // A tall (or very wide) graph fitted whole is too small to read: fit its width instead, never
  // below a readable zoom, and stay at the part of the graph the view shows (scroll for the rest).
  const double y = mapToScene(viewport()->rect().center()).y();
  setZoom(std::clamp(viewport()->width() / r.width(), kReadableZoom, 1.0));
  centerOn(r.center().x(), y);
  width_fit_zoom_ = zoom();
}

void ZoomView::showStart() {
  if (!scene()) return;
  QRectF r = scene()->sceneRect();
  if (r.isEmpty()) return;
  fitWhole();
  // A tall graph fitted whole would be unreadable: start at a readable size, at its top.
  if (zoom() < 0.6) {
    setZoom(std::min(0.85, std::max(zoom(), viewport()->width() / r.width())));
    centerOn(r.center().x(), r.top() + viewport()->height() / 2 / zoom());
  }
  width_fit_zoom_ = 0;
}

void ZoomView::wheelEvent(QWheelEvent* e) {
  if (e->modifiers() & Qt::ShiftModifier) {
    QGraphicsView::wheelEvent(e);  // scroll
    return;
  }
  const double steps = e->angleDelta().y() / 120.0;
  if (steps == 0) return;
  zoomBy(std::pow(1.18, steps));
  e->accept();
}

void ZoomView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::MiddleButton) {
    // Pan with the middle button anywhere, also over items.
    QMouseEvent fake(e->type(), e->position(), e->globalPosition(), Qt::LeftButton, Qt::LeftButton, e->modifiers());
    setInteractive(false);
    QGraphicsView::mousePressEvent(&fake);
    return;
  }
  QGraphicsView::mousePressEvent(e);
}

void ZoomView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() == Qt::MiddleButton) {
    QMouseEvent fake(e->type(), e->position(), e->globalPosition(), Qt::LeftButton, Qt::NoButton, e->modifiers());
    QGraphicsView::mouseReleaseEvent(&fake);
    setInteractive(true);
    return;
  }
  QGraphicsView::mouseReleaseEvent(e);
}

// ---------------------------------------------------------------------------------------------

GraphPreview::GraphPreview(GraphFlavor flavor, const QString& title, QWidget* parent)
    : QWidget(parent), flavor_(flavor), title_(title) {
  setObjectName(flavor == GraphFlavor::TorchScript ? QStringLiteral("torchPreview") : QStringLiteral("onnxPreview"));
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 0, 0, 0);
  v->setSpacing(2);

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(6, 4, 6, 0);
  title_label_ = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()));
  stats_ = new QLabel;
  stats_->setObjectName(QStringLiteral("stats"));
  stats_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // long text must not widen the window
  QPalette sp = stats_->palette();
  sp.setColor(QPalette::WindowText, sp.color(QPalette::PlaceholderText));
  stats_->setPalette(sp);
  bar->addWidget(title_label_);
  bar->addWidget(stats_, 1);
  auto tool = [&](const QString& text, const QString& tip, auto fn) {
    auto* b = new QToolButton;
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    connect(b, &QToolButton::clicked, this, fn);
    bar->addWidget(b);
    return b;
  };
  tool(tr("Collapse"), tr("Collapse every module group"), [this] { collapseAll(); })->setObjectName(QStringLiteral("collapseAll"));
  tool(tr("Expand"), tr("Expand every module group"), [this] { expandAll(); })->setObjectName(QStringLiteral("expandAll"));
  tool(tr("Fit"), tr("Fit the graph in the view. A graph too tall to read whole is fitted to its width "
                      "(scroll for the rest); press Fit again to see all of it."), [this] { fit(); })->setObjectName(QStringLiteral("fit"));
  search_ = new QLineEdit;
  search_->setObjectName(QStringLiteral("search"));
  search_->setPlaceholderText(tr("Find node (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  search_->setToolTip(tr("Search by node name, op or module path. Enter: next match, Shift+Enter: previous."));
  search_->setMaximumWidth(220);
  search_->setMinimumWidth(90);
  match_label_ = new QLabel;
  match_label_->setMinimumWidth(48);
  bar->addWidget(search_);
  bar->addWidget(match_label_);
  v->addLayout(bar);
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& t) { search(t); });
  connect(search_, &QLineEdit::returnPressed, this, [this] { searchStep(QApplication::keyboardModifiers() & Qt::ShiftModifier ? -1 : 1); });

  stack_ = new QStackedWidget;
  message_ = new QLabel;
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->setObjectName(QStringLiteral("message"));
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setMargin(24);
  scene_ = new GraphScene(this);
  view_ = new ZoomView;
  view_->setScene(scene_);
  stack_->addWidget(message_);
  stack_->addWidget(view_);
  v->addWidget(stack_, 1);

  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphPreview::onSelectionChanged);
  connect(scene_, &GraphScene::toggleGroupRequested, this, &GraphPreview::toggleGroup);
  // Semantic zoom: modules become labelled boxes far out and open as the user zooms in.
  connect(view_, &ZoomView::zoomChanged, this, [this](double z) {
    if (!scene_->building()) scene_->setViewZoom(z, view_->viewport()->size());
  });
  connect(scene_, &GraphScene::zoomToRequested, this, [this](const QRectF& r) {
    view_->fitInView(r.adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
    view_->setZoom(std::min(view_->zoom(), 1.0));
  });
  clearGraph(tr("No graph yet."));
}

GraphPreview::~GraphPreview() {
  ++generation_;  // layouts still running are dropped when they finish
  disconnect(scene_, nullptr, this, nullptr);
  scene_->clearContent();
}

void GraphPreview::setMessage(const QString& message) {
  message_->setText(message);
  stack_->setCurrentWidget(message_);
}

void GraphPreview::clearGraph(const QString& message) {
  ++generation_;
  graph_.reset();
  scene_->clearContent();
  matches_.clear();
  highlighted_nodes_.clear();
  selected_node_ = -1;
  stats_->clear();
  match_label_->clear();
  setMessage(message);
}

// Box sizes from the fonts, for every node and graph input/output. Runs on the layout's pool
// thread (QFontMetricsF works off the GUI thread): a 1 500-node graph takes tens of milliseconds.
static void measureBoxes(const GraphView& graph, GraphFlavor flavor, const QFont& title_font, const QFont& small_font,
                         std::unordered_map<int, LayoutSize>& nodes, std::unordered_map<int, LayoutSize>& terminals) {
  QFontMetricsF tf(title_font), sf(small_font);
  for (const auto& n : graph.nodes) {
    NodeLabel l = nodeLabel(graph, n, flavor);
    double w = std::max(tf.horizontalAdvance(l.title), sf.horizontalAdvance(l.subtitle)) + 18;
    double h = l.subtitle.isEmpty() ? tf.height() + 12 : tf.height() + sf.height() + 10;
    nodes[n.id] = {std::clamp(w, 64.0, 230.0), std::max(h, 30.0)};
  }
  for (const auto& e : graph.edges) {
    if (!e.is_graph_input && !e.is_graph_output) continue;
    double w = std::max(tf.horizontalAdvance(q(e.name)), sf.horizontalAdvance(shortShape(e.type))) + 28;
    terminals[e.id] = {std::clamp(w, 64.0, 230.0), tf.height() + sf.height() + 8};
  }
}

void GraphPreview::setGraph(GraphView graph) { setGraph(std::make_shared<const GraphView>(std::move(graph))); }

void GraphPreview::setGraph(std::shared_ptr<const GraphView> graph) {
  graph_ = std::move(graph);
  // Only the fonts here; the boxes are measured with the first layout, off the GUI thread.
  auto sizes = std::make_shared<Sizes>();
  sizes->title_font = scene_->titleFont();
  sizes->small_font = scene_->smallFont();
  sizes_ = sizes;
  collapsed_.clear();
  matches_.clear();
  highlighted_nodes_.clear();
  selected_node_ = -1;
  pending_select_ = -1;
  if (stack_->currentWidget() == message_) setMessage(tr("Laying out %1…").arg(countText(static_cast<int>(graph_->nodes.size()), "node")));
  relayout(true, graph_->nodes.size() > kAutoCollapseNodes);
}

void GraphPreview::relayout(bool fit, bool auto_collapse) {
  if (!graph_) return;
  const int gen = ++generation_;
  ++pending_;
  stats_->setText(tr("laying out…"));
  auto graph = graph_;
  auto sizes = sizes_;
  LayoutOptions opt;
  opt.collapsed = collapsed_;
  auto* watcher = new QFutureWatcher<LayoutOutcome>(this);
  connect(watcher, &QFutureWatcher<LayoutOutcome>::finished, this, [this, watcher, gen, fit] {
    LayoutOutcome out = watcher->result();
    watcher->deleteLater();
    --pending_;
    // Keep the measured sizes for later layouts of the same graph (group toggles).
    if (out.sizes && gen == generation_) sizes_ = std::static_pointer_cast<const Sizes>(out.sizes);
    layoutDone(gen, std::move(out.layout), std::move(out.collapsed), fit);
  });
  const GraphFlavor flavor = flavor_;
  watcher->setFuture(QtConcurrent::run([graph, sizes_in = sizes, opt, auto_collapse, flavor]() mutable {
    // Runs on a pool thread: only plain data and this thread's own font metrics.
    LayoutOutcome out;
    std::shared_ptr<const Sizes> sizes = sizes_in;
    if (!sizes_in->measured) {
      auto m = std::make_shared<Sizes>(*sizes_in);
      measureBoxes(*graph, flavor, m->title_font, m->small_font, m->nodes, m->terminals);
      m->measured = true;
      sizes = m;
      out.sizes = m;
    }
    QFontMetricsF tf(sizes->title_font), sf(sizes->small_font);
    LayoutMeasureFn measure = [&](const LayoutItem& it, const LayoutGroup* grp) -> LayoutSize {
      switch (it.kind) {
        case LayoutItemKind::Node: {
          auto f = sizes->nodes.find(it.id);
          return f != sizes->nodes.end() ? f->second : LayoutSize{90, 34};
        }
        case LayoutItemKind::Group: {
          double w = std::max(tf.horizontalAdvance(QStringLiteral("▸ ") + q(grp->label)),
                              sf.horizontalAdvance(QStringLiteral("0000 nodes"))) + 34;
          return {std::clamp(w, 96.0, 280.0), tf.height() + sf.height() + 14};
        }
        default: {
          auto f = sizes->terminals.find(it.id);
          return f != sizes->terminals.end() ? f->second : LayoutSize{90, 30};
        }
      }
    };
    out.layout = layoutGraph(*graph, opt, measure);
    if (auto_collapse) {
      // Collapse the second level of groups (the first when there is no second).
      int level = 1;
      bool any = std::any_of(out.layout.groups.begin(), out.layout.groups.end(), [](const LayoutGroup& g) { return g.depth == 1; });
      if (!any) level = 0;
      for (const auto& g : out.layout.groups)
        if (g.depth == level) opt.collapsed.insert(g.path);
      if (!opt.collapsed.empty()) out.layout = layoutGraph(*graph, opt, measure);
    }
    out.collapsed = opt.collapsed;
    return out;
  }));
}

void GraphPreview::layoutDone(int generation, GraphLayout layout, std::set<std::string> collapsed, bool fit) {
  if (generation != generation_ || !graph_) return;  // a newer graph or layout is on its way
  const QPointF center = view_->mapToScene(view_->viewport()->rect().center());
  const double zoom = view_->zoom();
  collapsed_ = std::move(collapsed);
  selecting_ = true;
  scene_->beginContent(graph_, std::move(layout), flavor_);
  selecting_ = false;
  buildStep(generation, fit, center, zoom);
}

// Builds the scene's items a slice at a time (kBuildSliceMs of GUI-thread work per event-loop
// turn), so 12 000 boxes and their routes never hold the event loop; then shows the result.
void GraphPreview::buildStep(int generation, bool fit, QPointF center, double zoom) {
  if (generation != generation_ || !graph_) return;  // replaced by a newer layout or graph
  selecting_ = true;
  const bool done = scene_->buildSome(kBuildSliceMs);
  selecting_ = false;
  if (!done) {
    QTimer::singleShot(0, this, [this, generation, fit, center, zoom] { buildStep(generation, fit, center, zoom); });
    return;
  }
  stack_->setCurrentWidget(view_);
  if (fit) {
    view_->showStart();
  } else {
    view_->setZoom(zoom);
    view_->centerOn(center);
  }
  scene_->setViewZoom(view_->zoom(), view_->viewport()->size());
  updateStats();
  applyHighlights();
  applyMatches();
  int select = pending_select_ >= 0 ? pending_select_ : selected_node_;
  bool center_it = pending_select_ >= 0;
  pending_select_ = -1;
  if (select >= 0) selectNode(select, center_it);
  emit layoutReady();
}

void GraphPreview::updateStats() {
  const GraphLayout& L = scene_->layout();
  int visible_groups = 0, collapsed = 0;
  for (const auto& g : L.groups) {
    visible_groups += g.visible ? 1 : 0;
    collapsed += g.visible && g.collapsed ? 1 : 0;
  }
  QString text = countText(graph_ ? static_cast<int>(graph_->nodes.size()) : 0, "node");
  if (!L.groups.empty()) text += tr(" · %1 groups (%2 collapsed)").arg(visible_groups).arg(collapsed);
  text += tr(" · %1 crossings · layout %2 ms").arg(L.stats.crossings).arg(L.stats.ms, 0, 'f', 0);
  stats_->setText(text);
}

QStringList GraphPreview::groupPaths() const {
  QStringList out;
  for (const auto& g : scene_->layout().groups) out << q(g.path);
  return out;
}

void GraphPreview::toggleGroup(const QString& path) {
  const std::string p = path.toStdString();
  if (collapsed_.count(p)) collapsed_.erase(p);
  else collapsed_.insert(p);
  relayout(false);
}

void GraphPreview::collapseAll() {
  collapsed_.clear();
  for (const auto& g : scene_->layout().groups)
    if (g.depth == 0) collapsed_.insert(g.path);
  relayout(true);
}

void GraphPreview::expandAll() {
  collapsed_.clear();
  relayout(true);
}

void GraphPreview::fit() { view_->fitAll(); }

void GraphPreview::selectNode(int node_id, bool center) {
  const GraphLayout& L = scene_->layout();
  if (!graph_ || L.node_index.find(node_id) == L.node_index.end()) return;
  int item = L.itemOfNode(node_id);
  if (item >= 0 && L.items[item].kind == LayoutItemKind::Group) {
    // Hidden in a collapsed group: expand its chain, select after the layout.
    for (const auto& path : L.groupPathsOfNode(node_id)) collapsed_.erase(path);
    pending_select_ = node_id;
    relayout(false);
    return;
  }
  selecting_ = true;
  scene_->clearSelection();
  QGraphicsItem* target = nullptr;
  if (item >= 0) {
    target = scene_->boxOfItem(item);
  } else {
    auto stubs = scene_->stubsOfNode(node_id);
    if (!stubs.isEmpty()) target = stubs.front();
  }
  if (target) target->setSelected(true);
  selecting_ = false;
  selected_node_ = node_id;
  if (target && center) {
    if (view_->zoom() < 0.6) view_->setZoom(1.0);
    view_->centerOn(target);
  }
  emit nodeSelected(node_id);
}

void GraphPreview::selectGroup(const QString& path) {
  const GraphLayout& L = scene_->layout();
  for (size_t gi = 0; gi < L.groups.size(); ++gi) {
    const auto& g = L.groups[gi];
    if (q(g.path) != path || !g.visible) continue;
    QGraphicsItem* target = g.collapsed ? static_cast<QGraphicsItem*>(scene_->boxOfItem(g.item))
                                        : static_cast<QGraphicsItem*>(scene_->frameOfGroup(static_cast<int>(gi)));
    if (!target) continue;
    scene_->clearSelection();
    target->setSelected(true);
    view_->ensureVisible(target, 40, 40);
    return;
  }
}

void GraphPreview::highlightNodes(const QSet<int>& node_ids) {
  highlighted_nodes_ = node_ids;
  applyHighlights();
  // Bring the first highlighted box into view without changing the zoom.
  const GraphLayout& L = scene_->layout();
  for (int id : node_ids) {
    int item = L.itemOfNode(id);
    if (BoxItem* b = scene_->boxOfItem(item)) {
      view_->ensureVisible(b, 60, 60);
      break;
    }
  }
}

void GraphPreview::applyHighlights() {
  QSet<int> items;
  const GraphLayout& L = scene_->layout();
  for (int id : std::as_const(highlighted_nodes_)) {
    int item = L.itemOfNode(id);
    if (item >= 0) items.insert(item);
  }
  scene_->setHighlightedItems(items);
}

int GraphPreview::search(const QString& text) {
  matches_.clear();
  match_pos_ = -1;
  const QString needle = text.trimmed();
  if (graph_ && !needle.isEmpty()) {
    for (const auto& n : graph_->nodes) {
      if (q(n.name).contains(needle, Qt::CaseInsensitive) || q(n.op).contains(needle, Qt::CaseInsensitive) ||
          q(n.module_path).contains(needle, Qt::CaseInsensitive))
        matches_.push_back(n.id);
    }
  }
  if (search_->text() != text) {
    QSignalBlocker block(search_);
    search_->setText(text);
  }
  applyMatches();
  if (!matches_.isEmpty()) searchStep(1);
  return matches_.size();
}

void GraphPreview::searchStep(int step) {
  if (matches_.isEmpty()) return;
  match_pos_ = (match_pos_ + step + matches_.size()) % matches_.size();
  match_label_->setText(QStringLiteral("%1/%2").arg(match_pos_ + 1).arg(matches_.size()));
  selectNode(matches_[match_pos_], true);
}

void GraphPreview::applyMatches() {
  QSet<int> items;
  const GraphLayout& L = scene_->layout();
  for (int id : std::as_const(matches_)) {
    int item = L.itemOfNode(id);
    if (item >= 0) items.insert(item);
  }
  scene_->setMatchedItems(items);
  if (matches_.isEmpty())
    match_label_->setText(search_->text().trimmed().isEmpty() ? QString() : tr("none"));
  else if (match_pos_ < 0)
    match_label_->setText(QStringLiteral("%1").arg(matches_.size()));
}

void GraphPreview::focusSearch() {
  search_->setFocus(Qt::ShortcutFocusReason);
  search_->selectAll();
}

void GraphPreview::onSelectionChanged() {
  if (selecting_) return;
  const auto sel = scene_->selectedItems();
  if (sel.isEmpty()) {
    selected_node_ = -1;
    emit selectionCleared();
    return;
  }
  const GraphLayout& L = scene_->layout();
  QGraphicsItem* it = sel.front();
  if (auto* box = dynamic_cast<BoxItem*>(it)) {
    const LayoutItem& li = L.items[box->layoutItem()];
    switch (li.kind) {
      case LayoutItemKind::Node:
        selected_node_ = li.id;
        emit nodeSelected(li.id);
        break;
      case LayoutItemKind::Group:
        selected_node_ = -1;
        emit groupSelected(q(L.groups[li.id].path), L.groups[li.id].node_count);
        break;
      default:
        selected_node_ = -1;
        emit valueSelected(li.id);
    }
  } else if (auto* frame = dynamic_cast<FrameItem*>(it)) {
    selected_node_ = -1;
    const auto& g = L.groups[frame->group()];
    emit groupSelected(q(g.path), g.node_count);
  } else if (auto* stub = dynamic_cast<StubItem*>(it)) {
    const LayoutStub& s = L.stubs[stub->stub()];
    if (s.node >= 0) {
      selected_node_ = s.node;
      emit nodeSelected(s.node);
    } else {
      selected_node_ = -1;
      emit valueSelected(s.edge);
    }
  }
}

}  // namespace oxport::studio
