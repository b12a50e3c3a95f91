// The document's signals -> the panels, previews, status bar and log.

#include <QDockWidget>

#include "document.h"
#include "exportpanel.h"
#include "formstate.h"
#include "graphpreview.h"
#include "inputspanel.h"
#include "inspector.h"
#include "localizepanel.h"
#include "mainwindow.h"
#include "optionsform.h"

#include <QFileInfo>
#include <QLabel>

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// The export phases shown as bars (Load and Verify have their own jobs).
const QList<Phase> kExportPhases = {Phase::Passes,   Phase::Trace,     Phase::Convert, Phase::Fold,
                                    Phase::Optimize, Phase::Serialize, Phase::Check};

}  // namespace

void MainWindow::connectDocument() {
  Document* d = doc_;
  // The form.
  connect(d, &Document::formChanged, this, [this] {
    inputs_->setState(doc_->formState(), doc_->modelInfo(), doc_->formFromGuesses());
    options_->setState(doc_->formState());
  });
  connect(d, &Document::formEdited, this, [this] { options_->setState(doc_->formState()); });  // summaries of names and axes
  connect(d, &Document::problemsChanged, this, [this] {
    options_->showProblems(doc_->problems());
    updateActions();
    updateTitle();
  });
  connect(d, &Document::dirtyChanged, this, [this] { updateTitle(); });
  connect(d, &Document::actionsChanged, this, &MainWindow::updateActions);
  connect(d, &Document::logged, this, &MainWindow::log);
  connect(d, &Document::statusMessage, status_, &QLabel::setText);
  connect(d, &Document::failed, this, &MainWindow::showError);
  connect(d, &Document::phaseProgress, this, [this](int phase, double fraction, const QString& message) {
    export_->setPhaseProgress(static_cast<Phase>(phase), fraction, message);
  });

  // Opening.
  connect(d, &Document::loadStarted, this, [this](const QString& path) {
    status_->setText(tr("Opening %1…").arg(QFileInfo(path).fileName()));
    export_->startPhases({Phase::Load});
    torch_->setMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
  });
  connect(d, &Document::loadFailed, this, [this](const QString& path, bool cancelled) {
    export_->finishPhases(false, tr("Could not open the model."));
    if (cancelled) {
      status_->setText(tr("Opening cancelled."));
      torch_->clearGraph(doc_->hasModel() ? tr("Opening cancelled.") : tr("No model."));
    } else {
      torch_->clearGraph(tr("Could not open %1:\n%2").arg(path, doc_->lastError()));
    }
  });
  connect(d, &Document::modelOpened, this, &MainWindow::showOpened);
  connect(d, &Document::modelLoaded, this, &MainWindow::modelLoaded);

  // The previews.
  connect(d, &Document::savedGraphReady, this, [this] {
    torch_->setGraph(doc_->torchGraph());
    status_->setText(tr("The graph as saved; running the example inputs for shapes and the exported form…"));
  });
  connect(d, &Document::previewBlocked, this,
          [this] { torch_->clearGraph(tr("Fix the problems listed under Options to preview the graph.")); });
  connect(d, &Document::previewStarted, this, [this] {
    if (!torch_->graph()) torch_->setMessage(tr("Running the example inputs through the model…"));
  });
  connect(d, &Document::previewFailed, this, [this](const Error& e) {
    torch_->clearGraph(tr("Preview unavailable:\n%1").arg(q(e.message())));
    diagnostics_->setDiagnostics(e.diagnostics(), tr("Preview"));
    log(tr("Preview failed:\n%1").arg(q(e.message())));
  });
  connect(d, &Document::previewUpdated, this, [this](bool ok) {
    if (ok) {
      torch_->setGraph(doc_->torchGraph());
      status_->setText(tr("Preview ready"));
    }
    emit previewUpdated(ok);
  });

  // Export and verify.
  connect(d, &Document::exportStarted, this, [this](const QString& file) {
    export_->startPhases(kExportPhases);
    export_->clearVerify();
    log(tr("Exporting to %1").arg(file));
  });
  connect(d, &Document::exportFailed, this, [this](const Error& e, bool cancelled) {
    export_->finishPhases(false, cancelled ? tr("Export cancelled; nothing was written.") : tr("Export failed."));
    diagnostics_->setDiagnostics(e.diagnostics(), tr("Export"));
    if (cancelled) status_->setText(tr("Export cancelled"));
    else showError(tr("Export failed"), e);
  });
  connect(d, &Document::exported, this, &MainWindow::showExported);
  connect(d, &Document::exportFinished, this, &MainWindow::exportFinished);
  connect(d, &Document::verifyStarted, this, [this] {
    export_->startPhases({Phase::Verify});
    export_->clearVerify();
  });
  connect(d, &Document::verifyFailed, this, [this](bool cancelled) {
    if (cancelled) {
      export_->finishPhases(false, tr("Verification cancelled."));
      status_->setText(tr("Verification cancelled"));
      return;
    }
    export_->finishPhases(false, tr("Verification did not run."));
    export_->showVerifyError(doc_->lastVerifyError());
    log(tr("Verify failed:\n%1").arg(doc_->lastVerifyError()));
  });
  connect(d, &Document::verified, this, &MainWindow::showVerified);
  connect(d, &Document::verifyFinished, this, &MainWindow::verifyFinished);
}

void MainWindow::showOpened(const std::vector<Diagnostic>& diagnostics, bool preset_failed) {
  const QString path = doc_->loadedPath();
  const ModelInfo& info = *doc_->modelInfo();
  showLoadedPath();
  export_->finishPhases(true, tr("Opened %1: %2, %3 parameters.")
                                  .arg(QFileInfo(path).fileName(), QString::fromLatin1(modelKindName(info.kind)))
                                  .arg(info.parameter_count));
  export_->clearResult();
  export_->clearVerify();
  localize_->clear();
  diagnostics_->setDiagnostics(diagnostics, diagnostics.empty() ? QString() : tr("Loading"));
  onnx_->clearGraph(tr("Export (Ctrl+E) to see the ONNX graph."));
  inspector_->showNothing();
  status_->setText(!preset_failed
                       ? tr("Opened %1").arg(path)
                       : tr("Opened %1; the preset next to it could not be used (see Diagnostics)").arg(path));
  updateTitle();
}

void MainWindow::showExported() {
  const ExportResult& res = *doc_->lastExport();
  const QString file = doc_->lastExportFile();
  export_->showResult(res, *doc_->onnxGraph());
  export_->finishPhases(true, tr("Exported %1 ONNX nodes to %2.").arg(res.stats.onnx_nodes).arg(file));
  diagnostics_->setDiagnostics(res.diagnostics, tr("Export"));
  if (!res.verbose_log.empty()) log(q(res.verbose_log));
  torch_->setGraph(doc_->torchGraph());
  onnx_->setGraph(doc_->onnxGraph());
  localize_->setTarget(doc_->model(), *doc_->lastExportOptions(), file);
  status_->setText(res.diagnostics.empty()
                       ? tr("Exported %1").arg(file)
                       : tr("Exported %1 (%2: see Diagnostics)")
                             .arg(file, countText(static_cast<int>(res.diagnostics.size()), "diagnostic")));
}

void MainWindow::showVerified() {
  const VerifyReport& report = *doc_->lastVerify();
  export_->showVerify(report);
  if (report.skipped) {
    // Custom-domain nodes (ONNX_FALLTHROUGH): ONNX Runtime cannot run the file at all.
    export_->finishPhases(true, tr("Not verified: ONNX Runtime cannot run this file's custom ops."));
    log(q(report.toText()));
    return;
  }
  export_->finishPhases(true, report.passed ? tr("Verified: outputs match.") : tr("Verification found differences."));
  if (!report.passed) localize_->offer(tr("Verification found differences."));
  log(q(report.toText()));
}

}  // namespace oxport::studio
