// The studio's Localize: export the bundled sample, break the written file in one node (its first
// Relu becomes a Sigmoid, with Python's onnx), verify (fails), and check that Localize is offered,
// finds that node, selects the first divergence in both graphs, colours them by error, moves
// with the threshold, and gives the inspector the numbers. Screenshot: docs/localize.png with
// OXPORT_UPDATE_SCREENSHOT=1.
#include <QtTest>

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSlider>
#include <QTemporaryDir>
#include <QTextBrowser>

#include <memory>

#include "graphpreview.h"
#include "inspector.h"
#include "localizepanel.h"
#include "mainwindow.h"
#include "ui_support.h"

using namespace oxport;
using namespace oxport::studio;
using namespace oxport::studio::test;

class LocalizeUiTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

 private slots:
  void localizeFindsTheBrokenNodeAndColoursBothGraphs() {
    auto w = openInWindow(kSample);
    QVERIFY(w);
    LocalizeController* loc = w->localizeController();
    QVERIFY(loc);
    QVERIFY(!loc->action()->isEnabled());  // nothing exported yet

    const QString file = tmp_.filePath("broken.onnx");
    auto* output = w->findChild<QLineEdit*>(QStringLiteral("opt.output"));
    QVERIFY(output);
    output->selectAll();
    QTest::keyClicks(output, file);
    QSignalSpy exported(w.get(), &MainWindow::exportFinished);
    QSignalSpy onnxLaid(w->onnxPreview(), &GraphPreview::layoutReady);
    w->startExport();
    QVERIFY(exported.wait(kJobTimeout) && exported.first().first().toBool());
    QVERIFY(onnxLaid.count() || onnxLaid.wait(kJobTimeout));

    // Break the written file as a buggy converter would: its first Relu computes a Sigmoid.
    QProcess py;
    py.start(QStringLiteral(OXPORT_PYTHON),
             {QStringLiteral(OXPORT_SOURCE_DIR "/tests/localize/test_localize.py"), QStringLiteral("swap-first"), file,
              file, QStringLiteral("Relu"), QStringLiteral("Sigmoid")});
    QVERIFY(py.waitForFinished(60000));
    QCOMPARE(py.exitCode(), 0);
    const QString broken = QString::fromUtf8(py.readAllStandardOutput()).trimmed().split('\n').last();
    QVERIFY(!broken.isEmpty());

    // Verification fails: Localize is offered.
    QSignalSpy verified(w.get(), &MainWindow::verifyFinished);
    w->startVerify();
    QVERIFY(verified.wait(kJobTimeout));
    QCOMPARE(verified.first().first().toBool(), false);
    QVERIFY(loc->action()->isEnabled());
    QVERIFY(loc->panel()->summary()->toPlainText().contains("Verification found differences"));

    QSignalSpy done(loc, &LocalizeController::finished);
    loc->action()->trigger();
    QVERIFY(done.wait(kJobTimeout));
    QVERIFY2(done.first().first().toBool(), qPrintable(done.first().at(1).toString()));
    const LocalizeReport* r = loc->report();
    QVERIFY(r && r->first_divergence);
    const LocalizedNode& first = *r->first_divergence;
    QVERIFY2(std::find(first.onnx_nodes.begin(), first.onnx_nodes.end(), broken.toStdString()) != first.onnx_nodes.end(),
             qPrintable(QString::fromStdString(first.torch_node) + " vs " + broken));

    // Selected and scrolled to in the TorchScript graph; the broken ONNX node is coloured over the threshold.
    QTRY_COMPARE_WITH_TIMEOUT(w->torchPreview()->selectedNode(), first.torch_id, 10000);
    GraphScene* os = w->onnxPreview()->scene();
    QVERIFY(os->hasNodeErrors());
    int broken_id = -1;
    for (const auto& n : w->onnxPreview()->graph()->nodes)
      if (QString::fromStdString(n.name) == broken) broken_id = n.id;
    QVERIFY(broken_id >= 0);
    QVERIFY(os->nodeError(broken_id) > os->errorThreshold());
    QVERIFY(w->torchPreview()->scene()->nodeError(first.torch_id) > 0.01);
    // A node before it is compared and within the threshold.
    bool some_ok = false;
    for (const auto& n : r->nodes) some_ok |= n.index < first.index && n.max_rel_error <= r->tolerance;
    QVERIFY(some_ok);
    // The inspector shows the numbers of the selected node.
    auto* inspector = w->inspector();
    QVERIFY(inspector->toPlainText().contains("Localize"));
    QVERIFY(inspector->toPlainText().contains("differs"));

    // The threshold: at 1 (errors as large as the values) nothing is over it; back to 1e-4.
    loc->panel()->setThreshold(1.0);
    QCOMPARE(os->errorThreshold(), 1.0);
    QVERIFY(!loc->panel()->firstButton()->isEnabled());
    QVERIFY(loc->panel()->summary()->toPlainText().contains("No node over the threshold"));
    loc->panel()->setThreshold(1e-4);
    QVERIFY(loc->panel()->firstButton()->isEnabled());
    QCOMPARE(loc->showFirstDivergence(), first.torch_id);

    if (auto* dock = w->findChild<QDockWidget*>(QStringLiteral("localizeDock"))) dock->raise();
    QCoreApplication::processEvents();
    const QImage shot = w->grab().toImage();
    QVERIFY(!shot.isNull());
    if (qgetenv("OXPORT_UPDATE_SCREENSHOT") == "1") {
      const QString path = QStringLiteral(OXPORT_SOURCE_DIR "/docs/localize.png");
      QVERIFY(shot.save(path));
      qInfo("saved %s", qPrintable(path));
    }
  }
};

int main(int argc, char** argv) { return runIsolated<LocalizeUiTest>(argc, argv, "oxport-localize-test"); }

#include "test_localize_ui.moc"
