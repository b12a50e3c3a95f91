// The semantic zoom of GraphScene: far out, modules become labelled boxes over their hidden
// contents; zooming in opens them. No relayout: the boxes are the modules' frames, so nothing moves
// under the user; only which items are visible changes, and only when a module opens or closes.
#include <QApplication>
#include <QPainter>
#include <QPalette>

#include <algorithm>
#include <cmath>

#include "graphscene.h"

namespace oxport::studio {

namespace {

QColor mixed(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(a.redF() + (b.redF() - a.redF()) * t, a.greenF() + (b.greenF() - a.greenF()) * t,
                          a.blueF() + (b.blueF() - a.blueF()) * t);
}

}  // namespace

void FrameItem::setSummarized(bool on) {
  if (on == summarized_) return;
  prepareGeometryChange();  // the shape (what takes clicks) changes
  summarized_ = on;
  // Above the routes and boxes that cross it, below selection rings of the boxes outside.
  setZValue(on ? 8 : -100 + scene_->layout_.groups[group_].depth);
  update();
}

void FrameItem::paintSummary(QPainter* p, double detail) {
  const LayoutGroup& g = scene_->layout_.groups[group_];
  const QPalette pl = QApplication::palette();
  QColor fill = mixed(pl.color(QPalette::Base), pl.color(QPalette::Text), 0.10 + 0.04 * std::min(g.depth, 4));
  QColor border = mixed(pl.color(QPalette::Base), pl.color(QPalette::Text), 0.45);
  if (scene_->hasNodeErrors()) {
    const QColor c = GraphScene::errorColor(scene_->groupError(g.path), scene_->errorThreshold());
    if (c.isValid()) {
      fill = mixed(pl.color(QPalette::Base), c, 0.55);
      border = c;
    }
  }
  p->setRenderHint(QPainter::Antialiasing, true);
  p->setPen(QPen(isSelected() ? pl.color(QPalette::Highlight) : border, (isSelected() ? 3 : 1.5) / std::max(detail, 1e-3)));
  p->setBrush(fill);
  p->drawRoundedRect(rect_, 6 / std::max(detail, 0.05), 6 / std::max(detail, 0.05));
  // The label at a readable size on screen (about 11 px), whatever the zoom: the module path
  // below its parent, and its node count.
  const double px = 11.0 / std::max(detail, 1e-3);  // scene units for 11 screen pixels
  if (rect_.height() < px * 1.2 || rect_.width() < px * 2) return;  // too small on screen for text
  QFont title = scene_->titleFont();
  title.setPixelSize(std::max(1, static_cast<int>(std::lround(px))));
  QFont small = scene_->smallFont();
  small.setPixelSize(std::max(1, static_cast<int>(std::lround(px * 0.85))));
  QFontMetricsF tm(title), sm(small);
  QRectF inner = rect_.adjusted(px * 0.4, px * 0.2, -px * 0.4, -px * 0.2);
  const QString count = countText(g.node_count, "node");
  // A numbered module ("0" below "layers") is named with its parent's leaf: "layers.0".
  QString label = label_;
  if (!label.isEmpty() && std::all_of(label.begin(), label.end(), [](QChar c) { return c.isDigit(); })) {
    const QStringList parts = QString::fromStdString(g.path).split(QLatin1Char('.'));
    if (parts.size() >= 2) label = parts[parts.size() - 2] + QLatin1Char('.') + label;
  }
  // A tall, narrow box (a column of heads) gets its text turned, reading upwards.
  p->save();
  if (inner.height() > 2 * inner.width() && tm.horizontalAdvance(label) > inner.width()) {
    const QPointF c = inner.center();
    p->translate(c);
    p->rotate(-90);
    inner = QRectF(-inner.height() / 2, -inner.width() / 2, inner.height(), inner.width());
  }
  const bool two_lines = inner.height() >= tm.height() + sm.height() + px * 0.2;
  p->setPen(pl.color(QPalette::Text));
  p->setFont(title);
  const QRectF top = two_lines ? QRectF(inner.left(), inner.center().y() - tm.height(), inner.width(), tm.height()) : inner;
  p->drawText(top, Qt::AlignHCenter | Qt::AlignVCenter, tm.elidedText(label, Qt::ElideMiddle, inner.width()));
  if (two_lines) {
    p->setFont(small);
    p->drawText(QRectF(inner.left(), inner.center().y(), inner.width(), sm.height()), Qt::AlignHCenter | Qt::AlignVCenter,
                sm.elidedText(count, Qt::ElideRight, inner.width()));
  }
  p->restore();
}

void GraphScene::setViewZoom(double zoom, const QSizeF& viewport) {
  QSet<int> next;
  if (zoom < kSummaryZoom && !layout_.groups.empty()) {
    // Parents first: a module inside a summarized one is hidden with it.
    std::vector<int> order(layout_.groups.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return layout_.groups[static_cast<size_t>(a)].depth < layout_.groups[static_cast<size_t>(b)].depth; });
    for (int gi : order) {
      const LayoutGroup& g = layout_.groups[static_cast<size_t>(gi)];
      if (!g.visible || g.collapsed || !frames_.contains(gi)) continue;
      bool covered = false;
      for (int a = g.parent; a >= 0 && !covered; a = layout_.groups[static_cast<size_t>(a)].parent) covered = next.contains(a);
      if (covered) continue;
      // Open when the user has zoomed in on it (it spans half the view), closed otherwise.
      const bool open = g.rect.w * zoom >= viewport.width() * 0.5 || g.rect.h * zoom >= viewport.height() * 0.5;
      if (!open) next.insert(gi);
    }
  }
  applySummaries(std::move(next));
}

void GraphScene::applySummaries(QSet<int> next) {
  if (next == summarized_) return;
  summarized_ = std::move(next);
  // covered[g]: g or one of its ancestors is summarized (its contents are hidden).
  // summary[g]: the summarized group that covers g (g itself or an ancestor), or -1.
  std::vector<int> summary(layout_.groups.size(), -1);
  std::vector<char> frame_hidden(layout_.groups.size(), 0);
  for (size_t gi = 0; gi < layout_.groups.size(); ++gi) {
    for (int a = static_cast<int>(gi); a >= 0; a = layout_.groups[static_cast<size_t>(a)].parent) {
      if (!summarized_.contains(a)) continue;
      summary[gi] = a;
      if (a != static_cast<int>(gi)) frame_hidden[gi] = 1;
    }
  }
  for (auto it = frames_.constBegin(); it != frames_.constEnd(); ++it) {
    it.value()->setSummarized(summarized_.contains(it.key()));
    it.value()->setVisible(!frame_hidden[static_cast<size_t>(it.key())]);
  }
  auto summaryOfItem = [&](int item) {
    const int g = layout_.items[static_cast<size_t>(item)].group;
    return g >= 0 ? summary[static_cast<size_t>(g)] : -1;
  };
  auto hiddenItem = [&](int item) { return summaryOfItem(item) >= 0; };
  for (int i = 0; i < boxes_.size(); ++i) {
    const bool show = !hiddenItem(i);
    if (boxes_[i] && boxes_[i]->isVisible() != show) boxes_[i]->setVisible(show);
  }
  for (StubItem* s : std::as_const(stubs_)) {
    const bool show = !hiddenItem(layout_.stubs[static_cast<size_t>(s->stub())].item);
    if (s->isVisible() != show) s->setVisible(show);
  }
  for (RouteItem* r : std::as_const(routes_)) {
    const LayoutRoute& lr = layout_.routes[static_cast<size_t>(r->route())];
    // A route inside one summarized module is hidden; one that leaves it still connects its box
    // to the rest (its end inside is covered by the box).
    const int sf = summaryOfItem(lr.from);
    const bool show = sf < 0 || sf != summaryOfItem(lr.to);
    if (r->isVisible() != show) r->setVisible(show);
  }
}

}  // namespace oxport::studio
