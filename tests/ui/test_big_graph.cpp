// A 20 000-node graph (a 24-layer transformer with its attention heads unrolled, as a traced
// model with per-head code records it) in one preview: it opens, expands, and then zooms from
// readable down to the whole graph and back, and pans, with each repaint timed. Far out, modules
// become labelled boxes (the semantic zoom), so a frame never paints 20 000 boxes and their edges.
// Also 12 000 nodes laid out and collapsed without blocking the event loop, and Fit on a tall chain.
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
  void aLargeGraphLaysOutWithoutBlocking() {
    // 12 000 nodes: 400 blocks of 30, each block a module with sub-modules and a residual add.
    GraphBuilder b("Float(1, 64)");
    int x = b.graphInput();
    for (int k = 0; k < 400; ++k) {
      const std::string p = "blocks." + std::to_string(k);
      int res = x;
      for (int j = 0; j < 14; ++j) {
        x = b.node("aten::linear", p + ".mlp.fc" + std::to_string(j % 2), {x});
        x = b.node("aten::gelu", p + ".mlp.act", {x});
      }
      x = b.node("aten::add", p, {x, res});
      x = b.node("aten::layer_norm", p + ".norm", {x});
    }
    b.graphOutput(x);
    const GraphView& g = b.graph();
    QCOMPARE(int(g.nodes.size()), 12000);

    GraphPreview preview(GraphFlavor::TorchScript, "large");
    preview.resize(900, 700);
    preview.show();
    QSignalSpy laid(&preview, &GraphPreview::layoutReady);
    StallMeter meter;
    QElapsedTimer clock;
    clock.start();
    preview.setGraph(g);
    QVERIFY(laid.wait(kJobTimeout));
    const qint64 first = clock.elapsed();
    // Opened with the blocks collapsed; expanding everything lays out all 12 000 boxes.
    QVERIFY(!preview.collapsedGroups().empty());
    const int collapsedItems = int(preview.layout().items.size());
    clock.restart();
    preview.expandAll();
    QVERIFY(laid.wait(kJobTimeout));
    qInfo("12000 nodes: collapsed view %d boxes in %lld ms, expanded %d boxes in %lld ms (layout %.0f ms); "
          "longest event-loop stall %lld ms wall, %lld ms GUI-thread CPU; %d gaps over 50 ms",
          collapsedItems, first, int(preview.layout().items.size()), clock.elapsed(), preview.layout().stats.ms,
          meter.longest(), meter.longestCpu(), meter.gapsOver50());
    QVERIFY(preview.layout().items.size() > 12000);
    QCOMPARE(preview.search("blocks.399.norm"), 1);
    // The scene's items are built on the GUI thread in slices: the thread itself never works
    // 50 ms without returning to the event loop (wall-clock gaps on a loaded machine also hold
    // time spent waiting for a CPU, so they get a looser bound).
    QVERIFY2(meter.longestCpu() < 50, qPrintable(QString::number(meter.longestCpu())));
    QVERIFY2(meter.longest() < 1000, qPrintable(QString::number(meter.longest())));
    // And back: collapsing deletes the 12 000 boxes and their routes.
    StallMeter back;
    clock.restart();
    preview.collapseAll();
    QVERIFY(laid.wait(kJobTimeout));
    qInfo("collapse all: %d boxes in %lld ms; longest event-loop stall %lld ms wall, %lld ms GUI-thread CPU",
          int(preview.layout().items.size()), clock.elapsed(), back.longest(), back.longestCpu());
    QVERIFY2(back.longest() < 1000, qPrintable(QString::number(back.longest())));
  }

  void fitKeepsTallGraphsReadable() {
    // A chain of 300 nodes: far too tall to read when fitted whole in a 900x700 view.
    GraphView g;
    int prev = -1;
    for (int i = 0; i < 300; ++i) {
      GraphViewEdge e;
      e.id = i;
      e.name = "v" + std::to_string(i);
      e.type = "Float(1, 64)";
      e.producer = i == 0 ? -1 : i - 1;
      e.is_graph_input = i == 0;
      g.edges.push_back(e);
      if (i == 0) {
        g.inputs = {0};
        prev = 0;
        continue;
      }
      GraphViewNode n;
      n.id = i - 1;
      n.name = "%" + std::to_string(i);
      n.op = i % 2 ? "aten::linear" : "aten::relu";
      n.inputs = {prev};
      n.outputs = {i};
      g.edges[prev].consumers.push_back(n.id);
      g.nodes.push_back(n);
      prev = i;
    }
    g.edges[prev].is_graph_output = true;
    g.outputs = {prev};
    GraphPreview preview(GraphFlavor::TorchScript, "tall");
    preview.resize(900, 700);
    preview.show();
    QSignalSpy laid(&preview, &GraphPreview::layoutReady);
    preview.setGraph(g);
    QVERIFY(laid.wait(kJobTimeout));
    ZoomView* view = preview.view();
    const QRectF scene = preview.scene()->sceneRect();
    const double whole = std::min(view->viewport()->width() / scene.width(), view->viewport()->height() / scene.height());
    QVERIFY2(whole < ZoomView::kReadableZoom, qPrintable(QString::number(whole)));
    // Fit: readable, the whole width in view, the rest reached by scrolling.
    view->zoomBy(0.3);
    preview.fit();
    QVERIFY2(view->zoom() >= ZoomView::kReadableZoom - 1e-9, qPrintable(QString::number(view->zoom())));
    QVERIFY(view->zoom() <= 1.0);
    const QRectF shown = view->mapToScene(view->viewport()->rect()).boundingRect();
    QVERIFY2(shown.width() + 1 >= scene.width() || view->zoom() == ZoomView::kReadableZoom,
             qPrintable(QString("%1 of %2").arg(shown.width()).arg(scene.width())));
    QVERIFY(view->verticalScrollBar()->isVisible());
    qInfo("tall graph %.0fx%.0f: whole %.3f, Fit %.3f", scene.width(), scene.height(), whole, view->zoom());
    // Fit again: the whole graph as an overview.
    preview.fit();
    QVERIFY(std::abs(view->zoom() - whole) < 0.02);
    const QRectF all = view->mapToScene(view->viewport()->rect()).boundingRect();
    QVERIFY(all.adjusted(-2, -2, 2, 2).contains(scene));
  }

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
