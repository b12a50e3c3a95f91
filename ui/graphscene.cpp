#include "graphscene.h"

#include <QElapsedTimer>
#include <limits>

#include <QApplication>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QPainterPathStroker>
#include <QPalette>
#include <QSignalBlocker>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QColor mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(a.redF() + (b.redF() - a.redF()) * t, a.greenF() + (b.greenF() - a.greenF()) * t,
                          a.blueF() + (b.blueF() - a.blueF()) * t);
}

QPalette pal() { return QApplication::palette(); }

double lod(QPainter* p) { return QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform()); }

bool has(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (s.find(w) != std::string::npos) return true;
  return false;
}

QString leafOf(const std::string& path) {
  auto dot = path.rfind('.');
  return q(dot == std::string::npos ? path : path.substr(dot + 1));
}

}  // namespace

QString countText(int n, const char* noun) {
  return QStringLiteral("%1 %2%3").arg(n).arg(QString::fromLatin1(noun), n == 1 ? QString() : QStringLiteral("s"));
}

QColor opColor(const std::string& op_in) {
  std::string op = op_in.substr(op_in.rfind(':') == std::string::npos ? 0 : op_in.rfind(':') + 1);
  std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return std::tolower(c); });
  if (has(op, {"conv"})) return QColor(0x3c, 0x6f, 0xb0);
  if (has(op, {"norm"})) return QColor(0x2a, 0x85, 0x78);
  if (has(op, {"relu", "sigmoid", "tanh", "gelu", "silu", "softmax", "elu", "hardswish", "hardsigmoid", "clip",
               "clamp", "mish", "softplus", "hardtanh"}))
    return QColor(0xb0, 0x48, 0x40);
  if (has(op, {"pool"})) return QColor(0x45, 0x8a, 0x42);
  if (has(op, {"linear", "gemm", "matmul", "addmm", "bmm", "einsum"}) || op == "mm") return QColor(0x68, 0x58, 0xb0);
  if (has(op, {"reshape", "view", "flatten", "transpose", "permute", "squeeze", "concat", "cat", "slice", "gather",
               "shape", "size", "split", "expand", "construct", "unpack", "chunk", "stack", "select", "index",
               "tile", "repeat", "pad", "resize", "upsample", "interpolate"}))
    return QColor(0x67, 0x70, 0x7c);
  if (has(op, {"dropout", "identity", "contiguous", "detach", "type_as", "cast"}) || op == "to")
    return QColor(0x8c, 0x93, 0x9c);
  if (has(op, {"add", "sub", "mul", "div", "pow", "sqrt", "exp", "log", "neg", "abs", "reciprocal", "sum", "mean",
               "reduce", "max", "min", "where", "equal", "greater", "less", "not", "and", "or"}))
    return QColor(0x9c, 0x73, 0x22);
  return QColor(0x84, 0x66, 0x4e);
}

QString shortShape(const std::string& type) {
  auto open = type.find_first_of("([");
  auto close = type.find_last_of(")]");
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) return {};
  QString inner = q(type.substr(open + 1, close - open - 1));
  // Only sizes: "1, 3, 224, 224" (TorchScript may add strides etc. after a ':' or ';').
  inner = inner.section(QLatin1Char(';'), 0, 0).section(QStringLiteral("strides"), 0, 0);
  QStringList dims;
  for (const QString& part : inner.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    QString d = part.trimmed();
    if (d.isEmpty()) continue;
    if (d.contains(QLatin1Char('=')) || d.contains(QLatin1Char(':'))) break;
    dims << d;
  }
  return dims.join(QStringLiteral("×"));
}

NodeLabel nodeLabel(const GraphView& g, const GraphViewNode& n, GraphFlavor flavor) {
  NodeLabel l;
  std::string op = n.op;
  if (flavor == GraphFlavor::TorchScript) {
    for (const char* prefix : {"aten::", "prim::"})
      if (op.rfind(prefix, 0) == 0) op = op.substr(std::char_traits<char>::length(prefix));
  } else if (!n.domain.empty() && n.domain != "ai.onnx") {
    op = n.domain + "::" + op;
  }
  l.title = q(op);
  if (!n.outputs.empty()) {
    int id = n.outputs.front();
    const GraphViewEdge* e = nullptr;
    if (id >= 0 && id < static_cast<int>(g.edges.size()) && g.edges[id].id == id) e = &g.edges[id];
    else
      for (const auto& x : g.edges)
        if (x.id == id) e = &x;
    if (e) l.subtitle = shortShape(e->type);
  }
  if (l.subtitle.isEmpty()) l.subtitle = n.module_path.empty() ? q(n.name) : leafOf(n.module_path);
  return l;
}

// ---------------------------------------------------------------------------------------------

BoxItem::BoxItem(GraphScene* scene, int item) : scene_(scene), item_(item) {
  const LayoutItem& it = scene->layout_.items[item];
  rect_ = QRectF(it.rect.x, it.rect.y, it.rect.w, it.rect.h);
  const GraphView& g = *scene->graph_;
  switch (it.kind) {
    case LayoutItemKind::Node: {
      const auto& n = g.nodes[scene->layout_.node_index.at(it.id)];
      NodeLabel l = nodeLabel(g, n, scene->flavor_);
      title_ = l.title;
      subtitle_ = l.subtitle;
      color_ = opColor(n.op);
      QString tip = QStringLiteral("<b>%1</b><br>%2").arg(q(n.op).toHtmlEscaped(), q(n.name).toHtmlEscaped());
      if (!n.module_path.empty()) tip += QStringLiteral("<br>module: %1").arg(q(n.module_path).toHtmlEscaped());
      if (n.location.known())
        tip += QStringLiteral("<br>%1:%2").arg(q(n.location.file).toHtmlEscaped()).arg(n.location.line);
      setToolTip(tip);
      break;
    }
    case LayoutItemKind::Group: {
      const LayoutGroup& grp = scene->layout_.groups[it.id];
      title_ = QStringLiteral("▸ ") + q(grp.label);
      subtitle_ = countText(grp.node_count, "node");
      color_ = pal().color(QPalette::Button);
      setToolTip(QObject::tr("%1 (collapsed, %2 nodes). Double-click to expand.").arg(q(grp.path)).arg(grp.node_count));
      break;
    }
    case LayoutItemKind::Input:
    case LayoutItemKind::Output: {
      int e = scene->edge_index_.count(it.id) ? scene->edge_index_.at(it.id) : -1;
      if (e >= 0) {
        title_ = q(g.edges[e].name);
        subtitle_ = shortShape(g.edges[e].type);
        setToolTip(QStringLiteral("%1 %2: %3")
                       .arg(it.kind == LayoutItemKind::Input ? QObject::tr("input") : QObject::tr("output"),
                            q(g.edges[e].name), q(g.edges[e].type)));
      }
      color_ = it.kind == LayoutItemKind::Input ? QColor(0x3a, 0x86, 0x5a) : QColor(0x44, 0x4c, 0x58);
      break;
    }
  }
  setFlag(ItemIsSelectable);
  setZValue(10);
  setCursor(Qt::PointingHandCursor);
}

QRectF BoxItem::boundingRect() const { return rect_.adjusted(-5, -5, 5, 5); }

void BoxItem::setHighlighted(bool on) {
  if (highlighted_ == on) return;
  highlighted_ = on;
  update();
}

void BoxItem::setMatched(bool on) {
  if (matched_ == on) return;
  matched_ = on;
  update();
}

void BoxItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const LayoutItemKind kind = scene_->layout_.items[item_].kind;
  const QPalette pl = pal();
  const double detail = lod(p);
  const double radius = kind == LayoutItemKind::Input || kind == LayoutItemKind::Output ? rect_.height() / 2 : 5;
  p->setRenderHint(QPainter::Antialiasing, detail > 0.3);

  if (kind == LayoutItemKind::Group) {
    // A stack of cards: the collapsed group stands for many nodes.
    QColor border = mix(pl.color(QPalette::Button), pl.color(QPalette::ButtonText), 0.45);
    p->setPen(QPen(border, 1));
    p->setBrush(mix(pl.color(QPalette::Button), pl.color(QPalette::ButtonText), 0.08));
    p->drawRoundedRect(rect_.translated(3, 3), radius, radius);
    p->setBrush(pl.color(QPalette::Button));
    p->drawRoundedRect(rect_, radius, radius);
  } else {
    p->setPen(QPen(color_.darker(135), 1));
    p->setBrush(color_);
    p->drawRoundedRect(rect_, radius, radius);
  }

  if (detail > 0.35) {
    const QColor text = kind == LayoutItemKind::Group ? pl.color(QPalette::ButtonText) : QColor(Qt::white);
    QRectF inner = rect_.adjusted(6, 2, -6, -2);
    QFontMetricsF fm(scene_->title_font_);
    p->setFont(scene_->title_font_);
    p->setPen(text);
    QRectF top(inner.left(), inner.top(), inner.width(), inner.height() * 0.55);
    QRectF bottom(inner.left(), inner.top() + inner.height() * 0.52, inner.width(), inner.height() * 0.48);
    if (subtitle_.isEmpty()) top = inner;
    p->drawText(top, Qt::AlignHCenter | Qt::AlignVCenter, fm.elidedText(title_, Qt::ElideRight, inner.width()));
    if (!subtitle_.isEmpty()) {
      QFontMetricsF sm(scene_->small_font_);
      p->setFont(scene_->small_font_);
      QColor sub = text;
      sub.setAlphaF(0.8);
      p->setPen(sub);
      p->drawText(bottom, Qt::AlignHCenter | Qt::AlignVCenter, sm.elidedText(subtitle_, Qt::ElideMiddle, inner.width()));
    }
  }

  if (scene_->hasNodeErrors()) {
    // After a localize: a ring in the error's colour (a filled box when zoomed far out, where a
    // ring would vanish); a collapsed group shows its worst node.
    const LayoutItem& li = scene_->layout_.items[item_];
    double err = qQNaN();
    if (kind == LayoutItemKind::Node) err = scene_->nodeError(li.id);
    else if (kind == LayoutItemKind::Group && li.id >= 0 && li.id < static_cast<int>(scene_->layout_.groups.size()))
      err = scene_->groupError(scene_->layout_.groups[li.id].path);
    const QColor c = GraphScene::errorColor(err, scene_->errorThreshold());
    if (c.isValid()) {
      if (detail < 0.35) {
        p->setPen(Qt::NoPen);
        p->setBrush(c);
        p->drawRoundedRect(rect_, radius, radius);
      } else {
        p->setPen(QPen(c, 4));
        p->setBrush(Qt::NoBrush);
        p->drawRoundedRect(rect_.adjusted(-1, -1, 1, 1), radius + 1, radius + 1);
      }
    }
  }
  if (matched_) {
    p->setPen(QPen(QColor(0xe8, 0xb9, 0x00), 2.5, Qt::DashLine));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(rect_.adjusted(-2.5, -2.5, 2.5, 2.5), radius + 2, radius + 2);
  }
  if (highlighted_) {
    p->setPen(QPen(QColor(0xff, 0x8c, 0x00), 3));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(rect_.adjusted(-3, -3, 3, 3), radius + 3, radius + 3);
  }
  if (isSelected()) {
    p->setPen(QPen(pl.color(QPalette::Highlight), 3));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(rect_.adjusted(-2, -2, 2, 2), radius + 2, radius + 2);
  }
}

QVariant BoxItem::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemSelectedHasChanged) scene_->emphasizeRoutesOf(value.toBool() ? item_ : -1);
  return QGraphicsItem::itemChange(change, value);
}

void BoxItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) {
  const LayoutItem& it = scene_->layout_.items[item_];
  if (it.kind == LayoutItemKind::Group) {
    emit scene_->toggleGroupRequested(q(scene_->layout_.groups[it.id].path));
    e->accept();
    return;
  }
  QGraphicsItem::mouseDoubleClickEvent(e);
}

// ---------------------------------------------------------------------------------------------

FrameItem::FrameItem(GraphScene* scene, int group) : scene_(scene), group_(group) {
  const LayoutGroup& g = scene->layout_.groups[group];
  rect_ = QRectF(g.rect.x, g.rect.y, g.rect.w, g.rect.h);
  label_ = q(g.label);
  setFlag(ItemIsSelectable);
  setZValue(-100 + g.depth);
  setToolTip(QObject::tr("%1: %2 nodes. Click the triangle to collapse.").arg(q(g.path)).arg(g.node_count));
}

QRectF FrameItem::headerRect() const { return QRectF(rect_.left(), rect_.top(), rect_.width(), 22); }
QRectF FrameItem::toggleRect() const { return QRectF(rect_.left() + 2, rect_.top() + 2, 18, 18); }

QPainterPath FrameItem::shape() const {
  if (summarized_) {
    QPainterPath all;
    all.addRoundedRect(rect_, 6, 6);
    return all;
  }
  QPainterPath outline;
  outline.addRoundedRect(rect_, 6, 6);
  QPainterPathStroker stroker;
  stroker.setWidth(6);
  QPainterPath p = stroker.createStroke(outline);
  p.addRect(headerRect());
  return p;
}

void FrameItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const QPalette pl = pal();
  const LayoutGroup& g = scene_->layout_.groups[group_];
  const double detail = lod(p);
  if (summarized_) {
    paintSummary(p, detail);
    return;
  }
  p->setRenderHint(QPainter::Antialiasing, detail > 0.3);
  QColor base = pl.color(QPalette::Base), text = pl.color(QPalette::Text);
  p->setPen(QPen(isSelected() ? pl.color(QPalette::Highlight) : mix(base, text, 0.28), isSelected() ? 2 : 1));
  p->setBrush(mix(base, text, 0.035 + 0.03 * std::min(g.depth, 5)));
  p->drawRoundedRect(rect_, 6, 6);
  if (scene_->hasNodeErrors()) {  // the header in the subtree's worst error colour
    const QColor c = GraphScene::errorColor(scene_->groupError(g.path), scene_->errorThreshold());
    if (c.isValid()) {
      QColor band = c;
      band.setAlphaF(0.35);
      p->setPen(Qt::NoPen);
      p->setBrush(band);
      p->drawRoundedRect(headerRect(), 6, 6);
    }
  }
  if (detail < 0.3) return;
  p->setFont(scene_->small_font_);
  QFontMetricsF fm(scene_->small_font_);
  QRectF header = headerRect().adjusted(20, 0, -6, 0);
  p->setPen(mix(base, text, 0.55));
  p->drawText(toggleRect(), Qt::AlignCenter, QStringLiteral("▾"));
  QFont bold = scene_->small_font_;
  bold.setBold(true);
  p->setFont(bold);
  p->setPen(text);
  QFontMetricsF bm(bold);
  QString label = bm.elidedText(label_, Qt::ElideMiddle, header.width() * 0.7);
  p->drawText(header, Qt::AlignLeft | Qt::AlignVCenter, label);
  p->setFont(scene_->small_font_);
  p->setPen(mix(base, text, 0.5));
  QRectF rest = header.adjusted(bm.horizontalAdvance(label) + 8, 0, 0, 0);
  p->drawText(rest, Qt::AlignLeft | Qt::AlignVCenter,
              fm.elidedText(countText(g.node_count, "node"), Qt::ElideRight, rest.width()));
}

void FrameItem::mousePressEvent(QGraphicsSceneMouseEvent* e) {
  if (e->button() == Qt::LeftButton && toggleRect().adjusted(-3, -3, 3, 3).contains(e->pos())) {
    emit scene_->toggleGroupRequested(q(scene_->layout_.groups[group_].path));
    e->accept();
    return;
  }
  QGraphicsItem::mousePressEvent(e);
}

void FrameItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) {
  if (summarized_) {  // zoom in until it opens
    emit scene_->zoomToRequested(rect_);
    e->accept();
    return;
  }
  if (headerRect().contains(e->pos())) {
    emit scene_->toggleGroupRequested(q(scene_->layout_.groups[group_].path));
    e->accept();
    return;
  }
  QGraphicsItem::mouseDoubleClickEvent(e);
}

// ---------------------------------------------------------------------------------------------

StubItem::StubItem(GraphScene* scene, int stub) : scene_(scene), stub_(stub) {
  const LayoutStub& s = scene->layout_.stubs[stub];
  rect_ = QRectF(s.rect.x, s.rect.y, s.rect.w, s.rect.h);
  line_to_ = scene->layout_.items[s.item].rect.x;
  const GraphView& g = *scene->graph_;
  auto ei = scene->edge_index_.find(s.edge);
  QString name, tip;
  if (ei != scene->edge_index_.end()) {
    const GraphViewEdge& e = g.edges[ei->second];
    name = q(e.name);
    tip = QStringLiteral("<b>%1</b><br>%2").arg(name.toHtmlEscaped(), q(e.type).toHtmlEscaped());
    if (!e.summary.empty()) tip += QStringLiteral("<br>") + q(e.summary).toHtmlEscaped();
    if (!e.is_initializer && s.node < 0) tip += QObject::tr("<br>read by %1 nodes (drawn apart)").arg(e.consumers.size());
  }
  if (s.node >= 0) {
    const auto& n = g.nodes[scene->layout_.node_index.at(s.node)];
    for (const auto& [k, v] : n.attributes)
      if (k == "value" && v.size() <= 6) text_ = q(v);
    tip += QStringLiteral("<br>%1").arg(q(n.op).toHtmlEscaped());
    for (const auto& [k, v] : n.attributes) tip += QStringLiteral("<br>%1 = %2").arg(q(k).toHtmlEscaped(), q(v).toHtmlEscaped());
  }
  if (text_.isEmpty()) {
    QString leaf = name.section(QLatin1Char('.'), -1);
    // Short names for the usual parameters; otherwise the start of the value's name.
    const QString lower = leaf.toLower();
    if (lower.contains(QLatin1String("running_mean"))) text_ = QStringLiteral("mean");
    else if (lower.contains(QLatin1String("running_var"))) text_ = QStringLiteral("var");
    else if (lower.contains(QLatin1String("weight"))) text_ = QStringLiteral("W");
    else if (lower.contains(QLatin1String("bias"))) text_ = QStringLiteral("B");
    else text_ = leaf.left(4);
  }
  if (s.folded > 0) {
    text_ = QStringLiteral("+%1").arg(s.folded + 1);
    tip += QObject::tr("<br>and %1 more").arg(s.folded);
  }
  setToolTip(tip);
  setFlag(ItemIsSelectable);
  setZValue(9);
}

QRectF StubItem::boundingRect() const { return rect_.united(QRectF(rect_.right(), rect_.center().y() - 1, line_to_ - rect_.right(), 2)).adjusted(-2, -2, 2, 2); }

void StubItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const QPalette pl = pal();
  const double detail = lod(p);
  if (detail < 0.2) return;
  p->setRenderHint(QPainter::Antialiasing);
  QColor base = pl.color(QPalette::Base), text = pl.color(QPalette::Text);
  p->setPen(QPen(mix(base, text, 0.35), 1, Qt::DotLine));
  p->drawLine(QPointF(rect_.right(), rect_.center().y()), QPointF(line_to_, rect_.center().y()));
  p->setPen(QPen(isSelected() ? pl.color(QPalette::Highlight) : mix(base, text, 0.4), isSelected() ? 2 : 1));
  p->setBrush(mix(base, text, 0.1));
  p->drawRoundedRect(rect_, 3, 3);
  if (detail < 0.6) return;
  QFont f = scene_->small_font_;
  f.setPointSizeF(f.pointSizeF() * 0.85);
  p->setFont(f);
  p->setPen(mix(base, text, 0.8));
  p->drawText(rect_, Qt::AlignCenter, QFontMetricsF(f).elidedText(text_, Qt::ElideRight, rect_.width() - 2));
}

// ---------------------------------------------------------------------------------------------

RouteItem::RouteItem(GraphScene* scene, int route) : scene_(scene), route_(route) {
  const auto& pts = scene->layout_.routes[route].points;
  if (pts.size() < 2) return;
  path_.moveTo(pts[0].x, pts[0].y);
  for (size_t i = 1; i < pts.size(); ++i) {
    QPointF a(pts[i - 1].x, pts[i - 1].y), b(pts[i].x, pts[i].y);
    if (std::abs(a.x() - b.x()) < 0.5) {
      path_.lineTo(b);
    } else {
      double dy = (b.y() - a.y()) * 0.5;
      path_.cubicTo(QPointF(a.x(), a.y() + dy), QPointF(b.x(), b.y() - dy), b);
    }
  }
  QPointF tip(pts.back().x, pts.back().y);
  double dir = pts.back().y >= pts[pts.size() - 2].y ? 1 : -1;
  arrow_ << tip << QPointF(tip.x() - 3.5, tip.y() - 7 * dir) << QPointF(tip.x() + 3.5, tip.y() - 7 * dir);
  bounds_ = path_.boundingRect().united(arrow_.boundingRect()).adjusted(-3, -3, 3, 3);
  setZValue(0);
}

void RouteItem::setEmphasis(bool on) {
  if (emphasis_ == on) return;
  emphasis_ = on;
  setZValue(on ? 5 : 0);
  update();
}

void RouteItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const QPalette pl = pal();
  const double detail = lod(p);
  p->setRenderHint(QPainter::Antialiasing, detail > 0.3);
  QColor c = emphasis_ ? pl.color(QPalette::Highlight) : mix(pl.color(QPalette::Base), pl.color(QPalette::Text), 0.5);
  const bool reversed = scene_->layout_.routes[route_].reversed;
  QPen pen(c, emphasis_ ? 2.2 : 1.2, reversed ? Qt::DashLine : Qt::SolidLine);
  p->setPen(pen);
  p->setBrush(Qt::NoBrush);
  p->drawPath(path_);
  if (detail > 0.3) {
    p->setPen(Qt::NoPen);
    p->setBrush(c);
    p->drawPolygon(arrow_);
  }
}

// ---------------------------------------------------------------------------------------------

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
  title_font_ = QApplication::font();
  title_font_.setBold(true);
  small_font_ = QApplication::font();
  small_font_.setPointSizeF(std::max(6.0, small_font_.pointSizeF() * 0.85));
}

GraphScene::~GraphScene() { clearContent(); }

void GraphScene::clearContent() {
  // Forget the items before deleting them: deleting a selected item deselects it, and nothing may
  // reach into half-deleted items (nor announce a selection change) on the way.
  boxes_.clear();
  frames_.clear();
  stubs_.clear();
  routes_.clear();
  routes_of_item_.clear();
  emphasized_.clear();
  highlighted_.clear();
  matched_.clear();
  summarized_.clear();
  {
    const QSignalBlocker quiet(this);
    clear();
  }
  graph_.reset();
  layout_ = GraphLayout{};
}

void GraphScene::setContent(std::shared_ptr<const GraphView> graph, GraphLayout layout, GraphFlavor flavor) {
  beginContent(std::move(graph), std::move(layout), flavor);
  buildSome(std::numeric_limits<double>::infinity());
}

void GraphScene::beginContent(std::shared_ptr<const GraphView> graph, GraphLayout layout, GraphFlavor flavor) {
  clearContent();
  if (graph != graph_) {  // errors belong to the graph they were measured on
    node_errors_.clear();
    group_errors_.clear();
  }
  graph_ = std::move(graph);
  layout_ = std::move(layout);
  flavor_ = flavor;
  build_pos_ = 0;
  edge_index_.clear();
  for (size_t i = 0; i < graph_->edges.size(); ++i) edge_index_.emplace(graph_->edges[i].id, static_cast<int>(i));
  routes_of_item_.resize(static_cast<int>(layout_.items.size()));
  const LayoutRect& b = layout_.bounds;
  setSceneRect(QRectF(b.x, b.y, b.w, b.h).adjusted(-60, -60, 60, 60));
}

bool GraphScene::buildSome(double budget_ms) {
  if (!graph_) return true;
  QElapsedTimer clock;
  clock.start();
  const size_t groups = layout_.groups.size(), routes = layout_.routes.size(), stubs = layout_.stubs.size();
  const size_t total = buildTotal();
  while (build_pos_ < total) {
    size_t k = build_pos_++;
    if (k < groups) {
      const auto& g = layout_.groups[k];
      if (g.visible && !g.collapsed) {
        auto* f = new FrameItem(this, static_cast<int>(k));
        frames_.insert(static_cast<int>(k), f);
        addItem(f);
      }
    } else if ((k -= groups) < routes) {
      auto* it = new RouteItem(this, static_cast<int>(k));
      routes_.push_back(it);
      addItem(it);
      routes_of_item_[layout_.routes[k].from].push_back(static_cast<int>(k));
      routes_of_item_[layout_.routes[k].to].push_back(static_cast<int>(k));
    } else if ((k -= routes) < stubs) {
      auto* it = new StubItem(this, static_cast<int>(k));
      stubs_.push_back(it);
      addItem(it);
    } else {
      k -= stubs;
      auto* it = new BoxItem(this, static_cast<int>(k));
      boxes_.push_back(it);
      addItem(it);
    }
    // Check the clock every 64 items: reading it costs more than making a small item.
    if ((build_pos_ & 63) == 0 && clock.nsecsElapsed() > budget_ms * 1e6) break;
  }
  if (build_pos_ < total) return false;
  // Highlights and matches set while building apply to the boxes made after them too.
  setHighlightedItems(QSet<int>(highlighted_));
  setMatchedItems(QSet<int>(matched_));
  return true;
}

QVector<StubItem*> GraphScene::stubsOfNode(int node_id) const {
  QVector<StubItem*> out;
  for (StubItem* s : stubs_)
    if (layout_.stubs[s->stub()].node == node_id) out.push_back(s);
  return out;
}

void GraphScene::emphasizeRoutesOf(int item) {
  for (int r : std::as_const(emphasized_))
    if (r < routes_.size()) routes_[r]->setEmphasis(false);
  emphasized_.clear();
  if (item < 0 || item >= routes_of_item_.size()) return;
  for (int r : routes_of_item_[item]) {
    routes_[r]->setEmphasis(true);
    emphasized_.insert(r);
  }
}

void GraphScene::setHighlightedItems(const QSet<int>& items) {
  for (int i : std::as_const(highlighted_))
    if (!items.contains(i) && i < boxes_.size()) boxes_[i]->setHighlighted(false);
  for (int i : items)
    if (i >= 0 && i < boxes_.size()) boxes_[i]->setHighlighted(true);
  highlighted_ = items;
}

void GraphScene::setMatchedItems(const QSet<int>& items) {
  for (int i : std::as_const(matched_))
    if (!items.contains(i) && i < boxes_.size()) boxes_[i]->setMatched(false);
  for (int i : items)
    if (i >= 0 && i < boxes_.size()) boxes_[i]->setMatched(true);
  matched_ = items;
}

void GraphScene::setNodeErrors(QHash<int, double> errors, double threshold) {
  node_errors_ = std::move(errors);
  group_errors_.clear();
  if (graph_)
    for (const auto& n : graph_->nodes) {
      auto it = node_errors_.constFind(n.id);
      if (it == node_errors_.constEnd() || n.module_path.empty()) continue;
      // Every enclosing module path: "layer1", "layer1.0", "layer1.0.conv1".
      const QString path = QString::fromStdString(n.module_path);
      for (qsizetype dot = 0;; ++dot) {
        dot = path.indexOf(QLatin1Char('.'), dot);
        const QString prefix = dot < 0 ? path : path.left(dot);
        double& worst = group_errors_[prefix];
        worst = std::max(worst, *it);
        if (dot < 0) break;
      }
    }
  setErrorThreshold(threshold);
}

void GraphScene::setErrorThreshold(double threshold) {
  error_threshold_ = threshold > 0 ? threshold : 1e-4;
  for (BoxItem* b : std::as_const(boxes_))
    if (b) b->update();
  for (FrameItem* f : std::as_const(frames_))
    if (f) f->update();
}

double GraphScene::groupError(const std::string& path) const {
  return group_errors_.value(QString::fromStdString(path), qQNaN());
}

QColor GraphScene::errorColor(double error, double threshold) {
  if (std::isnan(error)) return QColor();
  const double r = threshold > 0 ? error / threshold : (error > 0 ? 1e9 : 0);
  if (r <= 0.1) return QColor(0x2e, 0xa0, 0x43);                         // well within
  if (r <= 1) return mix(QColor(0x2e, 0xa0, 0x43), QColor(0xf0, 0xb0, 0x00), (std::log10(r) + 1));  // near
  const double over = std::clamp(std::log10(r) / 3, 0.0, 1.0);          // 1x .. 1000x over
  return mix(QColor(0xf0, 0x6a, 0x00), QColor(0xb0, 0x00, 0x20), over);
}

}  // namespace oxport::studio
