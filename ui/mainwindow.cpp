#include "mainwindow.h"
#include "localizepanel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTime>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>

#include <filesystem>

#include "document.h"
#include "exportpanel.h"
#include "formstate.h"
#include "graphpreview.h"
#include "inputspanel.h"
#include "inspector.h"
#include "optionsform.h"
#include "opening.h"
#include "settingswriter.h"
#include "taskrunner.h"

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QIcon themed(const char* name, QStyle::StandardPixmap fallback) {
  return QIcon::fromTheme(QString::fromLatin1(name), QApplication::style()->standardIcon(fallback));
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  doc_ = new Document(this);

  torch_ = new GraphPreview(GraphFlavor::TorchScript, tr("TorchScript"));
  onnx_ = new GraphPreview(GraphFlavor::Onnx, tr("ONNX"));
  torch_->clearGraph(tr("Open a TorchScript model (.pt) with File ▸ Open, by dropping it here, or from the command line."));
  onnx_->clearGraph(tr("Export (Ctrl+E) to see the ONNX graph."));
  auto* split = new QSplitter(Qt::Horizontal);
  split->setObjectName(QStringLiteral("previewSplit"));
  split->addWidget(torch_);
  split->addWidget(onnx_);
  split->setChildrenCollapsible(false);
  setCentralWidget(split);
  last_preview_ = torch_;

  buildDocks();
  buildActions();

  status_ = new QLabel(tr("Ready"));
  status_->setObjectName(QStringLiteral("status"));
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(220);
  progress_->setMaximumHeight(14);
  progress_->hide();
  status_cancel_ = new QToolButton;
  status_cancel_->setDefaultAction(cancel_action_);
  status_cancel_->setAutoRaise(true);
  status_cancel_->hide();
  // Which model is loaded, from where: opening a model runs its code, so the user should always
  // see which file that was (the full path is in the tooltip and the title).
  model_path_ = new QLabel;
  model_path_->setObjectName(QStringLiteral("modelPath"));
  model_path_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(model_path_);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(status_cancel_);

  // Forms -> the document, and the document -> the window.
  connect(inputs_, &InputsPanel::edited, this, [this](const Preset& p, const QString& f, const QString& w) {
    doc_->editForm(p, Document::FormPart::Inputs, f, w);
  });
  connect(options_, &OptionsForm::edited, this, [this](const Preset& p, const QString& f, const QString& w) {
    doc_->editForm(p, Document::FormPart::Options, f, w);
  });
  connectDocument();

  // Jobs -> progress.
  TaskRunner* runner = doc_->runner();
  connect(runner, &TaskRunner::jobStarted, this, [this](int, const QString& title) {
    status_->setText(title + QStringLiteral("…"));
    progress_->setValue(0);
    progress_->show();
    status_cancel_->show();
  });
  connect(runner, &TaskRunner::progress, this, [this, runner](int id, int phase, double fraction, const QString& message) {
    const Phase ph = static_cast<Phase>(phase);
    progress_->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    QString where = runner->title(id);
    if (where != phaseLabel(ph)) where += QStringLiteral(" · ") + phaseLabel(ph);
    status_->setText(where + (message.isEmpty() ? QString() : QStringLiteral(": ") + message));
  });
  connect(runner, &TaskRunner::busyChanged, this, [this](bool busy) {
    progress_->setVisible(busy);
    status_cancel_->setVisible(busy);
    updateActions();
  });

  // Graph selection -> inspector and the other graph.
  connect(torch_, &GraphPreview::nodeSelected, this, [this](int id) {
    last_preview_ = torch_;
    if (torch_->graph()) inspector_->showNode(*torch_->graph(), id, GraphFlavor::TorchScript, onnx_->graph());
    crossHighlight(true, id);
  });
  connect(onnx_, &GraphPreview::nodeSelected, this, [this](int id) {
    last_preview_ = onnx_;
    if (onnx_->graph()) inspector_->showNode(*onnx_->graph(), id, GraphFlavor::Onnx, torch_->graph());
    crossHighlight(false, id);
  });
  for (GraphPreview* p : {torch_, onnx_}) {
    const GraphFlavor flavor = p == torch_ ? GraphFlavor::TorchScript : GraphFlavor::Onnx;
    connect(p, &GraphPreview::groupSelected, this, [this, p, flavor](const QString& path, int n) {
      last_preview_ = p;
      inspector_->showGroup(path, n, flavor);
    });
    connect(p, &GraphPreview::valueSelected, this, [this, p, flavor](int edge) {
      last_preview_ = p;
      if (p->graph()) inspector_->showValue(*p->graph(), edge, flavor);
    });
    connect(p, &GraphPreview::selectionCleared, this, [this] {
      torch_->highlightNodes({});
      onnx_->highlightNodes({});
    });
  }
  connect(inspector_, &Inspector::nodeLinkActivated, this,
          [this](bool torch, int id) { (torch ? torch_ : onnx_)->selectNode(id, true); });
  connect(diagnostics_, &DiagnosticsView::diagnosticActivated, this, &MainWindow::jumpToDiagnostic);
  inspector_->setNodeNotes([this](GraphFlavor f, int id) { return localize_->notesFor(f, id); });
  connect(localize_, &LocalizeController::finished, this, [this](bool, const QString& text) { log(text); });
  connect(options_, &OptionsForm::problemActivated, this, &MainWindow::focusOption);
  connect(export_->exportButton(), &QPushButton::clicked, this, &MainWindow::startExport);
  connect(export_->verifyButton(), &QPushButton::clicked, this, &MainWindow::startVerify);
  connect(export_->cancelButton(), &QPushButton::clicked, this, &MainWindow::cancelJobs);

  QSettings settings;
  if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray())) {
    const QRect avail = screen() ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
    resize(std::min(1500, avail.width()), std::min(940, avail.height()));
  }
  docks_sized_ = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  // The document's first (empty) form, shown.
  inputs_->setState(doc_->formState(), doc_->modelInfo(), doc_->formFromGuesses());
  options_->setState(doc_->formState());
  options_->showProblems(doc_->problems());
  updateActions();
  updateTitle();
}

MainWindow::~MainWindow() {
  // Stop the document's worker (and its signals) before the widgets they refer to go away.
  doc_->disconnect(this);
  delete doc_;
  doc_ = nullptr;
}

void MainWindow::buildDocks() {
  inputs_ = new InputsPanel;
  options_ = new OptionsForm;
  inspector_ = new Inspector;
  export_ = new ExportPanel;
  diagnostics_ = new DiagnosticsView;
  log_ = new QPlainTextEdit;
  log_->setObjectName(QStringLiteral("log"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);

  auto dock = [&](const QString& name, const QString& title, QWidget* w, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);
    d->setWidget(w);
    addDockWidget(area, d);
    return d;
  };
  auto* inputsDock = dock(QStringLiteral("inputsDock"), tr("Inputs"), inputs_, Qt::LeftDockWidgetArea);
  auto* optionsScroll = new QScrollArea;
  optionsScroll->setWidget(options_);
  optionsScroll->setWidgetResizable(true);
  optionsScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  optionsScroll->setFrameShape(QFrame::NoFrame);
  auto* optionsDock = dock(QStringLiteral("optionsDock"), tr("Options"), optionsScroll, Qt::LeftDockWidgetArea);
  splitDockWidget(inputsDock, optionsDock, Qt::Vertical);
  inputs_->setMinimumWidth(300);
  optionsScroll->setMinimumWidth(300);
  dock(QStringLiteral("inspectorDock"), tr("Inspector"), inspector_, Qt::RightDockWidgetArea);
  inspector_->setMinimumWidth(200);
  auto* exportDock = dock(QStringLiteral("exportDock"), tr("Export"), export_, Qt::BottomDockWidgetArea);
  auto* diagDock = dock(QStringLiteral("diagnosticsDock"), tr("Diagnostics"), diagnostics_, Qt::BottomDockWidgetArea);
  auto* logDock = dock(QStringLiteral("logDock"), tr("Log"), log_, Qt::BottomDockWidgetArea);
  localize_ = new LocalizeController(doc_->runner(), torch_, onnx_, this);
  auto* localizeDock = dock(QStringLiteral("localizeDock"), tr("Localize"), localize_->panel(), Qt::BottomDockWidgetArea);
  tabifyDockWidget(exportDock, diagDock);
  tabifyDockWidget(diagDock, logDock);
  tabifyDockWidget(logDock, localizeDock);
  exportDock->raise();
}

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  open_action_ = file->addAction(themed("document-open", QStyle::SP_DialogOpenButton), tr("&Open Model…"), this, [this] {
    const Preset& form = doc_->formState();
    QString start = form.model ? QFileInfo(q(*form.model)).absolutePath() : QString();
    QString f = QFileDialog::getOpenFileName(this, tr("Open TorchScript model"), start,
                                             tr("TorchScript models (*.pt *.pth *.ptl *.zip);;All files (*)"));
    if (!f.isEmpty()) openModel(f);
  });
  open_action_->setShortcut(QKeySequence::Open);
  open_action_->setToolTip(tr("Open a TorchScript model saved with torch.jit.save (Ctrl+O)"));
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  connect(recent_menu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
  file->addSeparator();
  open_preset_action_ = file->addAction(tr("Open &Preset…"), this, [this] {
    QString f = QFileDialog::getOpenFileName(this, tr("Open preset"), QFileInfo(doc_->presetFile()).absolutePath(),
                                             tr("Presets (*.json);;All files (*)"));
    if (!f.isEmpty()) openPreset(f);
  });
  open_preset_action_->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+O")));
  save_preset_action_ = file->addAction(themed("document-save", QStyle::SP_DialogSaveButton), tr("&Save Preset"), this, [this] {
    if (doc_->presetFile().isEmpty()) save_preset_as_action_->trigger();
    else savePresetAs(doc_->presetFile());
  });
  save_preset_action_->setShortcut(QKeySequence::Save);
  save_preset_action_->setToolTip(tr("Save the whole form as a preset file (Ctrl+S)"));
  save_preset_as_action_ = file->addAction(tr("Save Preset &As…"), this, [this] {
    const Preset& form = doc_->formState();
    QString start = doc_->presetFile();
    if (start.isEmpty() && form.model) start = QFileInfo(q(*form.model)).absolutePath() + QStringLiteral("/preset.json");
    QString f = QFileDialog::getSaveFileName(this, tr("Save preset"), start, tr("Presets (*.json)"));
    if (!f.isEmpty()) savePresetAs(f);
  });
  save_preset_as_action_->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = doc_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  undo->setIcon(themed("edit-undo", QStyle::SP_ArrowBack));
  QAction* redo = doc_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  redo->setIcon(themed("edit-redo", QStyle::SP_ArrowForward));
  edit->addAction(undo);
  edit->addAction(redo);
  edit->addSeparator();
  QAction* find = edit->addAction(tr("&Find Node…"), this, [this] { activePreview()->focusSearch(); });
  find->setShortcut(QKeySequence::Find);

  QMenu* model = menuBar()->addMenu(tr("&Model"));
  refresh_action_ = model->addAction(themed("view-refresh", QStyle::SP_BrowserReload), tr("&Refresh Preview"), this,
                                     &MainWindow::refreshPreview);
  refresh_action_->setShortcut(QKeySequence::Refresh);
  refresh_action_->setToolTip(tr("Run the example inputs through the model and show its TorchScript graph (F5)"));
  export_action_ = model->addAction(themed("document-export", QStyle::SP_MediaPlay), tr("&Export to ONNX"), this,
                                    &MainWindow::startExport);
  export_action_->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
  export_action_->setToolTip(tr("Export to ONNX (Ctrl+E)"));
  verify_action_ = model->addAction(themed("dialog-ok-apply", QStyle::SP_DialogApplyButton), tr("&Verify in ONNX Runtime"),
                                    this, &MainWindow::startVerify);
  verify_action_->setShortcut(QKeySequence(QStringLiteral("Ctrl+R")));
  verify_action_->setToolTip(tr("Compare ONNX Runtime's outputs with libtorch's (Ctrl+R)"));
  model->addAction(localize_->action());
  cancel_action_ = model->addAction(themed("process-stop", QStyle::SP_BrowserStop), tr("&Cancel"), this, &MainWindow::cancelJobs);
  cancel_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  cancel_action_->setToolTip(tr("Cancel the running job (Esc)"));

  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* fit = view->addAction(tr("&Fit Graph"), this, [this] { activePreview()->fit(); });
  fit->setShortcut(QKeySequence(QStringLiteral("Ctrl+0")));
  QAction* zin = view->addAction(tr("Zoom &In"), this, [this] { activePreview()->view()->zoomBy(1.25); });
  zin->setShortcut(QKeySequence::ZoomIn);
  QAction* zout = view->addAction(tr("Zoom &Out"), this, [this] { activePreview()->view()->zoomBy(0.8); });
  zout->setShortcut(QKeySequence::ZoomOut);
  view->addAction(tr("&Collapse All Groups"), this, [this] { activePreview()->collapseAll(); });
  view->addAction(tr("&Expand All Groups"), this, [this] { activePreview()->expandAll(); });
  view->addSeparator();
  for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About oxport Studio"), this, &MainWindow::about);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);

  QToolBar* tb = addToolBar(tr("Main"));
  tb->setObjectName(QStringLiteral("mainToolBar"));
  tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  tb->addAction(open_action_);
  tb->addAction(save_preset_action_);
  tb->addSeparator();
  tb->addAction(undo);
  tb->addAction(redo);
  // Their text names the edit ("Undo Change opset_version"): icons only in the toolbar.
  for (QAction* a : {undo, redo})
    if (auto* b = qobject_cast<QToolButton*>(tb->widgetForAction(a))) b->setToolButtonStyle(Qt::ToolButtonIconOnly);
  tb->addSeparator();
  tb->addAction(refresh_action_);
  tb->addAction(export_action_);
  tb->addAction(verify_action_);
  tb->addAction(localize_->action());
  tb->addAction(cancel_action_);
}

GraphPreview* MainWindow::activePreview() const {
  QWidget* f = QApplication::focusWidget();
  if (f && onnx_->isAncestorOf(f)) return onnx_;
  if (f && torch_->isAncestorOf(f)) return torch_;
  return last_preview_ ? last_preview_.data() : torch_;
}

// ---- the document's state, shown

void MainWindow::updateActions() {
  const bool busy = doc_->busy();
  const bool errors = doc_->hasErrors();
  export_action_->setEnabled(doc_->canExport());
  export_->exportButton()->setEnabled(export_action_->isEnabled());
  export_->exportButton()->setToolTip(errors ? tr("Fix the problems listed under Options first") : tr("Export to ONNX (Ctrl+E)"));
  refresh_action_->setEnabled(doc_->canRefresh());
  verify_action_->setEnabled(doc_->canVerify());
  export_->verifyButton()->setEnabled(verify_action_->isEnabled());
  cancel_action_->setEnabled(busy);
  export_->cancelButton()->setEnabled(busy);
  localize_->updateEnabled(busy || !doc_->hasModel());
}

void MainWindow::updateTitle() {
  const Preset& form = doc_->formState();
  const QString loaded = doc_->loadedPath();
  QString name = form.model ? QFileInfo(q(*form.model)).fileName() : tr("no model");
  // The folder the loaded model came from, as editors show it ("name (folder)").
  if (!loaded.isEmpty() && QFileInfo(loaded).fileName() == name)
    name += QStringLiteral(" (%1)").arg(QDir::toNativeSeparators(QFileInfo(loaded).absolutePath()));
  setWindowTitle(tr("%1[*] — oxport Studio").arg(name));
  setWindowFilePath(loaded);
  setWindowModified(doc_->isDirty());
}

void MainWindow::showLoadedPath() {
  const QString native = QDir::toNativeSeparators(doc_->loadedPath());
  if (native.isEmpty()) {
    model_path_->clear();
    model_path_->setToolTip(QString());
    return;
  }
  // Long paths are shortened in the middle; the tooltip always has the whole path.
  const QString shown = model_path_->fontMetrics().elidedText(native, Qt::ElideMiddle, 420);
  model_path_->setText(tr("Model: %1").arg(shown));
  model_path_->setToolTip(tr("Loaded from %1\n\nOpening a model runs its TorchScript code: exporting, the preview "
                             "and verification run forward() on the example inputs in this process, with your "
                             "rights. Open only models you trust, as with torch.jit.load.")
                              .arg(native));
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = doc_->recentFiles();
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    QAction* a = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                                         [this, path] { openPath(path); });
    a->setToolTip(path);
    a->setEnabled(QFileInfo::exists(path));
  }
  if (recent.isEmpty()) recent_menu_->addAction(tr("(none)"))->setEnabled(false);
  recent_menu_->addSeparator();
  recent_menu_->addAction(tr("Clear List"), this, [this] { doc_->clearRecentFiles(); });
}

// ---- the document's commands

const Preset& MainWindow::formState() const { return doc_->formState(); }
void MainWindow::applyFormState(const Preset& p) { doc_->applyFormState(p); }
void MainWindow::openPath(const QString& path) { doc_->openPath(path); }
void MainWindow::openModel(const QString& path, std::optional<Preset> form) { doc_->openModel(path, std::move(form)); }
bool MainWindow::openPreset(const QString& file) { return doc_->openPreset(file); }
bool MainWindow::savePresetAs(const QString& file) { return doc_->savePresetAs(file); }
bool MainWindow::restoreSession() { return doc_->restoreSession(); }
QString MainWindow::bundledSample() { return studio::bundledSample(); }
void MainWindow::openAtStartup() { doc_->openAtStartup(); }
void MainWindow::saveSession() const { doc_->saveSession(); }
void MainWindow::refreshPreview() { doc_->refreshPreview(); }
void MainWindow::startExport() { doc_->startExport(); }
void MainWindow::startVerify() { doc_->startVerify(); }
void MainWindow::cancelJobs() { doc_->cancelJobs(); }
bool MainWindow::hasModel() const { return doc_->hasModel(); }
const ModelInfo* MainWindow::modelInfo() const { return doc_->modelInfo(); }
const std::vector<Diagnostic>& MainWindow::problems() const { return doc_->problems(); }
QString MainWindow::lastError() const { return doc_->lastError(); }
QString MainWindow::lastExportFile() const { return doc_->lastExportFile(); }
QString MainWindow::presetFile() const { return doc_->presetFile(); }
QUndoStack* MainWindow::undoStack() const { return doc_->undoStack(); }
TaskRunner* MainWindow::runner() const { return doc_->runner(); }

// ---- navigation

void MainWindow::crossHighlight(bool from_torch, int node_id) {
  QSet<int> ids;
  if (from_torch) {
    if (const GraphView* g = onnx_->graph())
      for (const auto& n : g->nodes)
        if (std::find(n.origins.begin(), n.origins.end(), node_id) != n.origins.end()) ids.insert(n.id);
    onnx_->highlightNodes(ids);
    torch_->highlightNodes({});
  } else {
    if (const GraphView* g = onnx_->graph())
      for (const auto& n : g->nodes)
        if (n.id == node_id)
          for (int o : n.origins) ids.insert(o);
    torch_->highlightNodes(ids);
    onnx_->highlightNodes({});
  }
}

void MainWindow::jumpToDiagnostic(const Diagnostic& d) {
  const GraphView* g = torch_->graph();
  if (!g) return;
  int best = -1, best_score = 0;
  for (const auto& n : g->nodes) {
    int score = 0;
    if (!d.node_kind.empty() && n.op == d.node_kind) score += 2;
    if (!d.module_path.empty() && n.module_path == d.module_path) score += 2;
    if (d.location.known() && n.location.line == d.location.line) score += 1;
    if (score > best_score) {
      best = n.id;
      best_score = score;
    }
  }
  if (best >= 0 && best_score >= 2) {
    torch_->selectNode(best, true);
    // And the ONNX nodes made from it, brought into view (also when the TorchScript selection
    // waits for a group to expand).
    crossHighlight(true, best);
  } else if (!d.module_path.empty()) torch_->selectGroup(q(d.module_path));
  else if (!d.option.empty()) focusOption(q(d.option));
}

void MainWindow::focusOption(const QString& option) {
  // Options edited in the form get the focus; arguments, names and axes live in the Inputs panel.
  if (options_->focusOption(option.toStdString())) {
    if (auto* dock = findChild<QDockWidget*>(QStringLiteral("optionsDock"))) {
      dock->show();
      dock->raise();
    }
    return;
  }
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("inputsDock"))) {
    dock->show();
    dock->raise();
  }
  // "dynamic_axes.image" / "input_names": the first field of that input, when there is one.
  const QString name = option.section(QLatin1Char('.'), 1);
  for (auto* e : inputs_->findChildren<QLineEdit*>()) {
    if (!e->objectName().endsWith(QStringLiteral(".inputName")) && !e->objectName().endsWith(QStringLiteral(".name")))
      continue;
    if (name.isEmpty() || e->text() == name) {
      e->setFocus(Qt::OtherFocusReason);
      return;
    }
  }
}

// ---- messages, events

void MainWindow::log(const QString& text) {
  log_->appendPlainText(QStringLiteral("[%1] %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), text));
}

void MainWindow::showError(const QString& title, const Error& e) {
  const QString details = q(e.message());
  log(title + QStringLiteral(":\n") + details);
  status_->setText(title);
  auto* box = new QMessageBox(QMessageBox::Warning, title, q(e.first().message), QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorBox"));
  if (!e.first().hint.empty()) box->setInformativeText(q(e.first().hint));
  box->setDetailedText(details);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::about() {
  const Versions v = versions();
  QMessageBox::about(this, tr("About oxport Studio"),
                     tr("<h3>oxport Studio %1</h3><p>Exports TorchScript models to ONNX, without Python.</p>"
                        "<table><tr><td>oxport</td><td>%1</td></tr><tr><td>libtorch</td><td>%2</td></tr>"
                        "<tr><td>ONNX</td><td>%3</td></tr><tr><td>protobuf</td><td>%4</td></tr>"
                        "<tr><td>Qt</td><td>%5</td></tr></table>")
                         .arg(q(v.oxport), q(v.libtorch), q(v.onnx), q(v.protobuf), QString::fromLatin1(qVersion())));
}

void MainWindow::closeEvent(QCloseEvent* e) {
  doc_->settings()->write({{QStringLiteral("window/geometry"), saveGeometry()},
                          {QStringLiteral("window/state"), saveState()}});
  doc_->saveSession();
  doc_->settings()->flush();  // the window is going away: the next start reads what this one wrote
  doc_->runner()->cancel();
  QMainWindow::closeEvent(e);
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (docks_sized_) return;
  docks_sized_ = true;
  // Once the window has its size (after this event), not before.
  QTimer::singleShot(0, this, &MainWindow::sizeDocks);
}

void MainWindow::sizeDocks() {
  // First start: the forms get a comfortable width, the previews the rest.
  auto* inputs = findChild<QDockWidget*>(QStringLiteral("inputsDock"));
  auto* options = findChild<QDockWidget*>(QStringLiteral("optionsDock"));
  auto* inspector = findChild<QDockWidget*>(QStringLiteral("inspectorDock"));
  auto* exportDock = findChild<QDockWidget*>(QStringLiteral("exportDock"));
  const int w = width();
  resizeDocks({inputs, inspector}, {std::max(330, w / 4), std::max(220, w / 6)}, Qt::Horizontal);
  resizeDocks({inputs, options}, {height() / 2, height() / 2}, Qt::Vertical);
  resizeDocks({exportDock}, {std::max(180, height() / 4)}, Qt::Vertical);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls() && !e->mimeData()->urls().isEmpty() && e->mimeData()->urls().front().isLocalFile())
    e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  const auto urls = e->mimeData()->urls();
  if (urls.isEmpty() || !urls.front().isLocalFile()) return;
  e->acceptProposedAction();
  openPath(urls.front().toLocalFile());
}

}  // namespace oxport::studio
