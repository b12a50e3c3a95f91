// A 20 000-node graph (a 24-layer transformer with its attention heads unrolled, as a traced
// model with per-head code records it) in one preview: it opens, expands, and then zooms from
// readable down to the whole graph and back, and pans, with each repaint timed. Far out, modules
// become labelled boxes (the semantic zoom), so a frame never paints 20 000 boxes and their edges.
#include <QtTest>

#include <QApplication>
#include <QElapsedTimer>
#include <QScrollBar>

#include <algorithm>

#include "graphpreview.h"
#include "ui_support.h"

using namespace oxport;
using namespace oxport::studio;
using namespace oxport::studio::test;

namespace {

constexpr int kBigJobTimeout = 300000;

GraphView transformer(int layers, int heads) {
  GraphBuilder b("Float(1, 128, 64)");
  int x = b.graphInput();
  for (int l = 0; l < layers; ++l) {
    const std::string p = "encoder.layers." + std::to_string(l);
    int res = x;
    int h = b.node("aten::layer_norm", p + ".norm1", {x});
    int q = b.node("aten::linear", p + ".attn.q_proj", {h});
    int k = b.node("aten::linear", p + ".attn.k_proj", {h});
    int v = b.node("aten::linear", p + ".attn.v_proj", {h});
    std::vector<int> outs;
    for (int hd = 0; hd < heads; ++hd) {
      const std::string hp = p + ".attn.head" + std::to_string(hd);
      int qh = b.node("aten::slice", hp, {q});
      int kh = b.node("aten::slice", hp, {k});
      int vh = b.node("aten::slice", hp, {v});
      int kt = b.node("aten::transpose", hp, {kh});
      int s = b.node("aten::matmul", hp, {qh, kt});
      s = b.node("aten::div", hp, {s});
      for (int r = 0; r < 28; ++r) s = b.node(r % 2 ? "aten::mul" : "aten::add", hp + ".rel_pos", {s});  // relative positions
      s = b.node("aten::softmax", hp, {s});
      s = b.node("aten::dropout", hp, {s});
      outs.push_back(b.node("aten::matmul", hp, {s, vh}));
    }
    int cat = b.node("aten::cat", p + ".attn", outs);
    int o = b.node("aten::linear", p + ".attn.out_proj", {cat});
    x = b.node("aten::add", p, {o, res});
    res = x;
    h = b.node("aten::layer_norm", p + ".norm2", {x});
    h = b.node("aten::linear", p + ".mlp.fc1", {h});
    h = b.node("aten::gelu", p + ".mlp.act", {h});
    h = b.node("aten::linear", p + ".mlp.fc2", {h});
    x = b.node("aten::add", p, {h, res});
  }
  b.graphOutput(b.node("aten::layer_norm", "norm", {x}));
  return std::move(b.graph());
}

struct Frames {
  qint64 worst_wall_ms = 0, worst_cpu_ms = 0;
  std::vector<double> wall;
  double median() {
    std::sort(wall.begin(), wall.end());
    return wall.empty() ? 0 : wall[wall.size() / 2];
  }
};

// One synchronous repaint of the view, timed.
void frame(ZoomView* view, Frames& f) {
  QElapsedTimer t;
  t.start();
  const qint64 cpu = threadCpuUs();
  view->viewport()->repaint();
  QCoreApplication::processEvents();
  const qint64 wall = t.elapsed();
  f.worst_wall_ms = std::max(f.worst_wall_ms, wall);
  f.worst_cpu_ms = std::max(f.worst_cpu_ms, (threadCpuUs() - cpu) / 1000);
  f.wall.push_back(static_cast<double>(wall));
}

}  // namespace

class BigGraphTest : public QObject {
  Q_OBJECT

 private slots:
  void twentyThousandNodesZoomAndPanWithoutStalls() {
    const GraphView g = transformer(24, 24);
    QVERIFY2(g.nodes.size() >= 20000, qPrintable(QString::number(g.nodes.size())));
    GraphPreview preview(GraphFlavor::TorchScript, "big");
    preview.resize(1000, 750);
    preview.show();
    QSignalSpy laid(&preview, &GraphPreview::layoutReady);
    QElapsedTimer clock;
    clock.start();
    preview.setGraph(g);
    QVERIFY(laid.wait(kBigJobTimeout));
    const qint64 open_ms = clock.elapsed();
    clock.restart();
    preview.expandAll();
    QVERIFY(laid.wait(kBigJobTimeout));
    const qint64 expand_ms = clock.elapsed();
    ZoomView* view = preview.view();
    const int items = static_cast<int>(preview.layout().items.size());

    // Zoom from readable (1.0) to the whole graph, then back in, 1.25x a step.
    Frames zoom;
    const QRectF scene = preview.scene()->sceneRect();
    const double whole = std::min(view->viewport()->width() / scene.width(), view->viewport()->height() / scene.height());
    view->setZoom(1.0);
    view->centerOn(scene.center());
    int summarized_far = 0;
    for (double z = 1.0; z > whole; z /= 1.25) {
      view->setZoom(z);
      frame(view, zoom);
    }
    view->fitWhole();
    frame(view, zoom);
    summarized_far = preview.scene()->summarizedGroups();
    if (qgetenv("OXPORT_UPDATE_SCREENSHOT") == "1") {  // the whole graph, and a middle zoom
      QVERIFY(preview.grab().save(QStringLiteral(OXPORT_SOURCE_DIR "/docs/big_graph_whole.png")));
      view->setZoom(0.12);
      view->centerOn(scene.center());
      QCoreApplication::processEvents();
      QVERIFY(preview.grab().save(QStringLiteral(OXPORT_SOURCE_DIR "/docs/big_graph_zoom.png")));
      view->fitWhole();
    }
    for (double z = view->zoom(); z < 1.0; z *= 1.25) {
      view->setZoom(z);
      frame(view, zoom);
    }
    const int summarized_near = preview.scene()->summarizedGroups();
    // Pan at a middle zoom and at the whole-graph zoom.
    Frames pan;
    for (double z : {0.15, 0.5}) {
      view->setZoom(z);
      for (int i = 0; i < 20; ++i) {
        view->verticalScrollBar()->setValue(view->verticalScrollBar()->value() + view->viewport()->height() / 3);
        frame(view, pan);
      }
    }
    qInfo("%d nodes, %d boxes expanded: opened (collapsed) in %lld ms, expanded in %lld ms (layout %.0f ms); "
          "zoom 1 -> %.3f -> 1: %zu frames, median %.0f ms, worst %lld ms wall / %lld ms CPU; pan: median %.0f ms, "
          "worst %lld ms wall / %lld ms CPU; %d module boxes at the whole-graph zoom, %d at zoom 1",
          int(g.nodes.size()), items, open_ms, expand_ms, preview.layout().stats.ms, whole, zoom.wall.size(),
          zoom.median(), zoom.worst_wall_ms, zoom.worst_cpu_ms, pan.median(), pan.worst_wall_ms, pan.worst_cpu_ms,
          summarized_far, summarized_near);
    QVERIFY(summarized_far > 0);   // far out, modules are boxes
    QCOMPARE(summarized_near, 0);  // at a readable zoom, every module is open
    QVERIFY2(zoom.worst_cpu_ms < 100, qPrintable(QString::number(zoom.worst_cpu_ms)));
    QVERIFY2(pan.worst_cpu_ms < 100, qPrintable(QString::number(pan.worst_cpu_ms)));
  }
};

int main(int argc, char** argv) { return runIsolated<BigGraphTest>(argc, argv, "oxport-big-graph-test"); }

#include "test_big_graph.moc"
