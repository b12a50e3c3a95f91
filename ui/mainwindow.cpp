#include "mainwindow.h"
#include "localizepanel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
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

#include "exportpanel.h"
#include "formstate.h"
#include "graphpreview.h"
#include "inputspanel.h"
#include "inspector.h"
#include "optionsform.h"
#include "oxport/op_libraries.h"
#include "oxport/runtime.h"
#include "settingswriter.h"
#include "taskrunner.h"

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

constexpr int kMaxRecent = 8;

// The export phases shown as bars (Load and Verify have their own jobs).
const QList<Phase> kExportPhases = {Phase::Passes,   Phase::Trace,     Phase::Convert, Phase::Fold,
                                    Phase::Optimize, Phase::Serialize, Phase::Check};

QIcon themed(const char* name, QStyle::StandardPixmap fallback) {
  return QIcon::fromTheme(QString::fromLatin1(name), QApplication::style()->standardIcon(fallback));
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  settings_ = new SettingsWriter(this);
  runner_ = new TaskRunner(this);
  undo_ = new QUndoStack(this);

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

  // Forms -> state.
  connect(inputs_, &InputsPanel::edited, this,
          [this](const Preset& p, const QString& f, const QString& w) { onPanelEdited(p, f, w, true); });
  connect(options_, &OptionsForm::edited, this,
          [this](const Preset& p, const QString& f, const QString& w) { onPanelEdited(p, f, w, false); });
  connect(undo_, &QUndoStack::cleanChanged, this, [this] { updateTitle(); });

  // Jobs -> progress.
  connect(runner_, &TaskRunner::jobStarted, this, [this](int, const QString& title) {
    status_->setText(title + QStringLiteral("…"));
    progress_->setValue(0);
    progress_->show();
    status_cancel_->show();
  });
  connect(runner_, &TaskRunner::progress, this, [this](int id, int phase, double fraction, const QString& message) {
    const Phase ph = static_cast<Phase>(phase);
    progress_->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    QString where = runner_->title(id);
    if (where != phaseLabel(ph)) where += QStringLiteral(" · ") + phaseLabel(ph);
    status_->setText(where + (message.isEmpty() ? QString() : QStringLiteral(": ") + message));
    if (id == export_job_ || id == load_job_ || id == verify_job_) export_->setPhaseProgress(ph, fraction, message);
  });
  connect(runner_, &TaskRunner::busyChanged, this, [this](bool busy) {
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
  applyFormState(Preset{});
  updateTitle();
}

MainWindow::~MainWindow() {
  // Stop the worker before the widgets its callbacks refer to go away.
  delete runner_;
  runner_ = nullptr;
  // The undo stack is a child, deleted by ~QWidget after this destructor: it then emits
  // cleanChanged, whose slot (updateTitle) would run on a MainWindow whose members are already
  // destroyed (found by UBSan in the ui test). Delete it while they still exist, unconnected.
  undo_->disconnect(this);
  delete undo_;
  undo_ = nullptr;
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
  localize_ = new LocalizeController(runner_, torch_, onnx_, this);
  auto* localizeDock = dock(QStringLiteral("localizeDock"), tr("Localize"), localize_->panel(), Qt::BottomDockWidgetArea);
  tabifyDockWidget(exportDock, diagDock);
  tabifyDockWidget(diagDock, logDock);
  tabifyDockWidget(logDock, localizeDock);
  exportDock->raise();
}

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  open_action_ = file->addAction(themed("document-open", QStyle::SP_DialogOpenButton), tr("&Open Model…"), this, [this] {
    QString start = preset_.model ? QFileInfo(q(*preset_.model)).absolutePath() : QString();
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
    QString f = QFileDialog::getOpenFileName(this, tr("Open preset"), QFileInfo(preset_file_).absolutePath(),
                                             tr("Presets (*.json);;All files (*)"));
    if (!f.isEmpty()) openPreset(f);
  });
  open_preset_action_->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+O")));
  save_preset_action_ = file->addAction(themed("document-save", QStyle::SP_DialogSaveButton), tr("&Save Preset"), this, [this] {
    if (preset_file_.isEmpty()) save_preset_as_action_->trigger();
    else savePresetAs(preset_file_);
  });
  save_preset_action_->setShortcut(QKeySequence::Save);
  save_preset_action_->setToolTip(tr("Save the whole form as a preset file (Ctrl+S)"));
  save_preset_as_action_ = file->addAction(tr("Save Preset &As…"), this, [this] {
    QString start = preset_file_;
    if (start.isEmpty() && preset_.model) start = QFileInfo(q(*preset_.model)).absolutePath() + QStringLiteral("/preset.json");
    QString f = QFileDialog::getSaveFileName(this, tr("Save preset"), start, tr("Presets (*.json)"));
    if (!f.isEmpty()) savePresetAs(f);
  });
  save_preset_as_action_->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = undo_->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  undo->setIcon(themed("edit-undo", QStyle::SP_ArrowBack));
  QAction* redo = undo_->createRedoAction(this, tr("&Redo"));
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

// ---- form state

void MainWindow::applyFormState(const Preset& p) {
  preset_ = p;
  inputs_->setState(preset_, modelInfo(), form_from_guesses_);
  options_->setState(preset_);
  stateChanged();
}

void MainWindow::onPanelEdited(const Preset& p, const QString& field, const QString& what, bool from_inputs) {
  Preset before = preset_;
  // Each panel owns its part of the state; take only that part.
  if (from_inputs) {
    preset_.options.args = p.options.args;
    preset_.options.kwargs = p.options.kwargs;
    preset_.options.input_names = p.options.input_names;
    preset_.options.output_names = p.options.output_names;
    preset_.options.dynamic_axes = p.options.dynamic_axes;
  } else {
    ExportOptions keep = preset_.options;
    preset_.output = p.output;
    preset_.options = p.options;
    preset_.options.args = keep.args;
    preset_.options.kwargs = keep.kwargs;
    preset_.options.input_names = keep.input_names;
    preset_.options.output_names = keep.output_names;
    preset_.options.dynamic_axes = keep.dynamic_axes;
  }
  if (preset_ == before) return;
  options_->setState(preset_);  // summaries of names and axes
  undo_->push(new FormEditCommand(this, std::move(before), (from_inputs ? QStringLiteral("in:") : QStringLiteral("opt:")) + field,
                                  what, true));
  stateChanged();
}

void MainWindow::stateChanged() {
  problems_ = validateOptions(preset_.options);
  for (auto& d : checkForm(modelInfo(), preset_.options)) problems_.push_back(std::move(d));
  if (!preset_.output || preset_.output->empty()) {
    Diagnostic d = makeError("form.no-output", "Choose an output file.");
    d.option = "output";
    problems_.push_back(std::move(d));
  }
  options_->showProblems(problems_);
  updateActions();
  updateTitle();
}

void MainWindow::updateActions() {
  const bool busy = runner_ && runner_->busy();
  const bool errors = std::any_of(problems_.begin(), problems_.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; });
  export_action_->setEnabled(model_ && !errors && export_job_ < 0 && load_job_ < 0 && verify_job_ < 0);
  export_->exportButton()->setEnabled(export_action_->isEnabled());
  export_->exportButton()->setToolTip(errors ? tr("Fix the problems listed under Options first") : tr("Export to ONNX (Ctrl+E)"));
  refresh_action_->setEnabled(model_ && !busy && !errors);
  verify_action_->setEnabled(model_ && !busy && !last_export_file_.isEmpty());
  export_->verifyButton()->setEnabled(verify_action_->isEnabled());
  cancel_action_->setEnabled(busy);
  export_->cancelButton()->setEnabled(busy);
  localize_->updateEnabled(busy || !model_);
}

void MainWindow::updateTitle() {
  QString name = preset_.model ? QFileInfo(q(*preset_.model)).fileName() : tr("no model");
  // The folder the loaded model came from, as editors show it ("name (folder)").
  if (!loaded_path_.isEmpty() && QFileInfo(loaded_path_).fileName() == name)
    name += QStringLiteral(" (%1)").arg(QDir::toNativeSeparators(QFileInfo(loaded_path_).absolutePath()));
  setWindowTitle(tr("%1[*] — oxport Studio").arg(name));
  setWindowFilePath(loaded_path_);
  setWindowModified(!undo_->isClean());
}

void MainWindow::showLoadedPath() {
  const QString native = QDir::toNativeSeparators(loaded_path_);
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

// ---- files

void MainWindow::openPath(const QString& path) {
  if (path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) openPreset(path);
  else openModel(path);
}

void MainWindow::openModel(const QString& path_in, std::optional<Preset> form) {
  const QString path = QFileInfo(path_in).absoluteFilePath();
  runner_->cancel();
  status_->setText(tr("Opening %1…").arg(QFileInfo(path).fileName()));
  export_->startPhases({Phase::Load});
  torch_->setMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
  const std::filesystem::path p = path.toStdString();
  // Op libraries the model needs, loaded first: the form's (a preset opened with it), else those
  // of the preset beside the model, and those already in the form for this same model.
  std::vector<std::string> libraries;
  if (form) {
    libraries = form->load_libraries;
  } else {
    const QFileInfo fi(path);
    const QString sibling = fi.absolutePath() + QLatin1Char('/') + fi.completeBaseName() + QStringLiteral(".preset.json");
    if (QFileInfo::exists(sibling))
      if (auto sp = loadPreset(sibling.toStdString()); sp.ok())
        libraries = withAbsolutePaths(sp.value(), fi.absolutePath().toStdString()).load_libraries;
    if (preset_.model && q(*preset_.model) == path)
      libraries.insert(libraries.end(), preset_.load_libraries.begin(), preset_.load_libraries.end());
  }
  load_job_ = runner_->run<Result<Model>>(
      tr("Loading %1").arg(QFileInfo(path).fileName()),
      [p, libraries](const ProgressFn& progress, const CancelToken& cancel) -> Result<Model> {
        for (const auto& lib : libraries) OXPORT_TRY(loadOpLibrary(lib));
        return Model::load(p, progress, cancel);
      },
      [this, path, form](Result<Model>& r) {
        load_job_ = -1;
        updateActions();
        if (!r.ok()) {
          export_->finishPhases(false, tr("Could not open the model."));
          if (r.error().code() == "cancelled") {
            status_->setText(tr("Opening cancelled."));
            torch_->clearGraph(model_ ? tr("Opening cancelled.") : tr("No model."));
          } else {
            torch_->clearGraph(tr("Could not open %1:\n%2").arg(path, q(r.error().message())));
            showError(tr("Could not open %1").arg(QFileInfo(path).fileName()), r.error());
          }
          emit modelLoaded(false);
          return;
        }
        model_ = std::make_shared<Model>(std::move(r).value());
        info_ = model_->info();
        loaded_path_ = path;
        showLoadedPath();
        Preset state = form ? *form : defaultPresetFor(info_);
        bool from_guesses = !form;  // until a preset beside the model gives the form
        std::vector<Diagnostic> preset_problems;  // a preset beside the model that cannot be used
        if (!form) {
          // A preset saved next to the model (model.preset.json) describes how to export it.
          const QFileInfo fi(path);
          const QString sibling = fi.absolutePath() + QLatin1Char('/') + fi.completeBaseName() + QStringLiteral(".preset.json");
          if (QFileInfo::exists(sibling)) {
            auto sp = loadPreset(sibling.toStdString());
            if (sp.ok()) {
              Preset p = withAbsolutePaths(sp.value(), fi.absolutePath().toStdString());
              if (!p.model || QFileInfo(q(*p.model)).absoluteFilePath() == path) {
                state = p;
                from_guesses = false;
                log(tr("Using the preset next to the model: %1").arg(sibling));
              }
            } else {
              // Said where it is seen (Diagnostics, status bar), not only in the log: the form
              // then holds guesses, not what the user saved.
              log(tr("Ignoring %1: %2").arg(sibling, q(sp.error().message())));
              for (Diagnostic d : sp.error().diagnostics()) {
                d.severity = Severity::Warning;
                d.message = "the preset next to the model was not used: " + d.message;
                d.hint = (d.hint.empty() ? std::string() : d.hint + "; ") +
                         "the form starts from the model's own guesses; fix the file, or fill the form and "
                         "save the preset again";
                preset_problems.push_back(std::move(d));
              }
            }
          }
        }
        state.model = path.toStdString();
        if (!state.output || state.output->empty()) state.output = defaultPresetFor(info_).output;
        if (state.output && !QFileInfo(QFileInfo(q(*state.output)).absolutePath()).isWritable()) {
          // A model in a read-only place (the installed sample, a shared folder): write to home.
          const QString home = QDir::homePath() + QLatin1Char('/') + QFileInfo(q(*state.output)).fileName();
          log(tr("%1 is in a folder this user cannot write; the output goes to %2 instead")
                  .arg(q(*state.output), home));
          state.output = home.toStdString();
        }
        last_export_file_.clear();
        last_export_options_.reset();
        undo_->clear();
        form_from_guesses_ = from_guesses;
        applyFormState(state);
        undo_->setClean();
        addRecent(path);
        export_->finishPhases(true, tr("Opened %1: %2, %3 parameters.")
                                        .arg(QFileInfo(path).fileName(), QString::fromLatin1(modelKindName(info_.kind)))
                                        .arg(info_.parameter_count));
        export_->clearResult();
        export_->clearVerify();
        localize_->clear();
        const bool preset_failed = !preset_problems.empty();
        for (const auto& d : info_.load_notes) {
          log(q(d.toString()));
          preset_problems.push_back(d);  // an op library loaded for the model, or one it does not use
        }
        diagnostics_->setDiagnostics(preset_problems, preset_problems.empty() ? QString() : tr("Loading"));
        onnx_->clearGraph(tr("Export (Ctrl+E) to see the ONNX graph."));
        inspector_->showNothing();
        status_->setText(!preset_failed
                             ? tr("Opened %1").arg(path)
                             : tr("Opened %1; the preset next to it could not be used (see Diagnostics)").arg(path));
        log(tr("Opened %1\n%2").arg(path, q(info_.schema)));
        saveSession();
        emit modelLoaded(true);
        preview_exact_ = false;
        showSavedGraph();
        refreshPreview();
      });
}

bool MainWindow::openPreset(const QString& file_in) {
  const QString file = QFileInfo(file_in).absoluteFilePath();
  auto r = loadPreset(file.toStdString());
  if (!r.ok()) {
    showError(tr("Could not read the preset %1").arg(QFileInfo(file).fileName()), r.error());
    return false;
  }
  Preset p = withAbsolutePaths(r.value(), QFileInfo(file).absolutePath().toStdString());
  preset_file_ = file;
  addRecent(file);
  log(tr("Preset %1").arg(file));
  const QString model = p.model ? q(*p.model) : QString();
  if (!model.isEmpty() && (!preset_.model || q(*preset_.model) != model || !model_)) {
    openModel(model, p);  // the form follows once the model is open
    return true;
  }
  if (model.isEmpty()) p.model = preset_.model;
  Preset before = preset_;
  form_from_guesses_ = false;  // the shapes are the preset's now
  applyFormState(p);
  undo_->push(new FormEditCommand(this, std::move(before), QString(), tr("Load preset %1").arg(QFileInfo(file).fileName()), true));
  if (model_ && !runner_->busy()) refreshPreview();  // the example inputs may have changed
  return true;
}

bool MainWindow::savePresetAs(const QString& file_in) {
  const QString file = QFileInfo(file_in).absoluteFilePath();
  Preset p = withRelativePaths(preset_, QFileInfo(file).absolutePath().toStdString());
  auto s = savePreset(p, file.toStdString());
  if (!s.ok()) {
    showError(tr("Could not save the preset"), s.error());
    return false;
  }
  preset_file_ = file;
  undo_->setClean();
  addRecent(file);
  status_->setText(tr("Saved preset %1").arg(file));
  return true;
}

void MainWindow::saveSession() const {
  settings_->write({{QStringLiteral("session/preset"), q(presetToJson(preset_))},
                    {QStringLiteral("session/presetFile"), preset_file_}});
}

bool MainWindow::restoreSession() {
  const QString json = settings_->value(QStringLiteral("session/preset")).toString();
  preset_file_ = settings_->value(QStringLiteral("session/presetFile")).toString();
  if (json.isEmpty()) return false;
  auto r = parsePreset(json.toStdString());
  if (!r.ok()) {
    log(tr("The last session could not be restored: %1").arg(q(r.error().message())));
    return false;
  }
  const Preset& p = r.value();
  if (!p.model || !QFileInfo::exists(q(*p.model))) return false;
  openModel(q(*p.model), p);
  return true;
}

QString MainWindow::bundledSample() {
  const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/oxport/samples/sample_cnn.pt");
  if (QFileInfo::exists(installed)) return QFileInfo(installed).canonicalFilePath();
  const QString source = QStringLiteral(OXPORT_SOURCE_DIR "/resources/samples/sample_cnn.pt");
  if (QFileInfo::exists(source)) return source;
  return {};
}

void MainWindow::openAtStartup() {
  if (restoreSession()) return;
  if (settings_->value(QStringLiteral("studio/firstStartDone")).toBool()) return;
  settings_->set(QStringLiteral("studio/firstStartDone"), true);
  const QString sample = bundledSample();
  if (sample.isEmpty()) return;
  log(tr("First start: opening the bundled sample model %1").arg(sample));
  openPath(sample);
}

void MainWindow::addRecent(const QString& path) {
  QStringList recent = settings_->value(QStringLiteral("recentFiles")).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings_->set(QStringLiteral("recentFiles"), recent);
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = settings_->value(QStringLiteral("recentFiles")).toStringList();
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    QAction* a = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                                         [this, path] { openPath(path); });
    a->setToolTip(path);
    a->setEnabled(QFileInfo::exists(path));
  }
  if (recent.isEmpty()) recent_menu_->addAction(tr("(none)"))->setEnabled(false);
  recent_menu_->addSeparator();
  recent_menu_->addAction(tr("Clear List"), this, [this] { settings_->remove(QStringLiteral("recentFiles")); });
}

// ---- jobs

void MainWindow::showSavedGraph() {
  // The graph as saved takes a fraction of a second even for a vit_b_16, whose example run takes
  // as long as its forward pass: draw it at once, and let the full preview replace it.
  auto model = model_;
  runner_->run<Result<GraphView>>(
      tr("Saved graph"),
      [model](const ProgressFn&, const CancelToken&) { return model->savedGraph(); },
      [this, model](Result<GraphView>& r) {
        // Only while it is still this model's first preview.
        if (model != model_ || !r.ok() || preview_exact_) return;
        torch_->setGraph(std::move(r.value()));
        status_->setText(tr("The graph as saved; running the example inputs for shapes and the exported form…"));
      });
}

void MainWindow::refreshPreview() {
  if (!model_) return;
  if (std::any_of(problems_.begin(), problems_.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; })) {
    torch_->clearGraph(tr("Fix the problems listed under Options to preview the graph."));
    return;
  }
  if (!torch_->graph()) torch_->setMessage(tr("Running the example inputs through the model…"));
  auto model = model_;
  const ExportOptions opts = preset_.options;
  preview_job_ = runner_->run<Result<GraphView>>(
      tr("Preview"),
      [model, opts](const ProgressFn& progress, const CancelToken& cancel) { return model->inspect(opts, progress, cancel); },
      [this](Result<GraphView>& r) {
        preview_job_ = -1;
        updateActions();
        if (!r.ok()) {
          if (r.error().code() != "cancelled") {
            torch_->clearGraph(tr("Preview unavailable:\n%1").arg(q(r.error().message())));
            diagnostics_->setDiagnostics(r.error().diagnostics(), tr("Preview"));
            log(tr("Preview failed:\n%1").arg(q(r.error().message())));
          }
          emit previewUpdated(false);
          return;
        }
        torch_->setGraph(std::move(r.value()));
        preview_exact_ = true;
        status_->setText(tr("Preview ready"));
        emit previewUpdated(true);
      });
}

void MainWindow::startExport() {
  // Queued behind a running preview if need be; never two exports, nor during a load or verify.
  if (!model_ || export_job_ >= 0 || load_job_ >= 0 || verify_job_ >= 0) return;
  if (!export_action_->isEnabled()) {
    status_->setText(tr("Cannot export yet: %1").arg(problems_.empty() ? tr("no model") : q(problems_.front().message)));
    return;
  }
  const QString file = q(*preset_.output);
  auto model = model_;
  const ExportOptions opts = preset_.options;
  const std::filesystem::path out = file.toStdString();
  export_->startPhases(kExportPhases);
  export_->clearVerify();
  log(tr("Exporting to %1").arg(file));
  export_job_ = runner_->run<Result<ExportResult>>(
      tr("Export"),
      [model, opts, out](const ProgressFn& progress, const CancelToken& cancel) {
        return model->exportOnnx(opts, OutputTarget::toFile(out), progress, cancel);
      },
      [this, opts, file](Result<ExportResult>& r) {
        export_job_ = -1;
        updateActions();
        if (!r.ok()) {
          const bool cancelled = r.error().code() == "cancelled";
          export_->finishPhases(false, cancelled ? tr("Export cancelled; nothing was written.") : tr("Export failed."));
          diagnostics_->setDiagnostics(r.error().diagnostics(), tr("Export"));
          if (cancelled) status_->setText(tr("Export cancelled"));
          else showError(tr("Export failed"), r.error());
          emit exportFinished(false);
          return;
        }
        ExportResult& res = r.value();
        export_->showResult(res);
        export_->finishPhases(true, tr("Exported %1 ONNX nodes to %2.").arg(res.stats.onnx_nodes).arg(file));
        diagnostics_->setDiagnostics(res.diagnostics, tr("Export"));
        if (!res.verbose_log.empty()) log(q(res.verbose_log));
        last_export_file_ = file;
        last_export_options_ = opts;
        // The TorchScript graph of this export, so ONNX origins point into it.
        torch_->setGraph(std::move(res.torch_graph));
        preview_exact_ = true;
        onnx_->setGraph(std::move(res.onnx_graph));
        localize_->setTarget(model_, opts, file);
        status_->setText(res.diagnostics.empty()
                             ? tr("Exported %1").arg(file)
                             : tr("Exported %1 (%2: see Diagnostics)")
                                   .arg(file, countText(static_cast<int>(res.diagnostics.size()), "diagnostic")));
        updateActions();
        saveSession();
        emit exportFinished(true);
      });
}

void MainWindow::startVerify() {
  if (!model_ || runner_->busy() || last_export_file_.isEmpty() || !last_export_options_) return;
  auto model = model_;
  const ExportOptions opts = *last_export_options_;
  const std::filesystem::path file = last_export_file_.toStdString();
  export_->startPhases({Phase::Verify});
  export_->clearVerify();
  verify_job_ = runner_->run<Result<VerifyReport>>(
      tr("Verify"),
      [model, opts, file](const ProgressFn& progress, const CancelToken& cancel) -> Result<VerifyReport> {
        progress(Phase::Verify, 0.0, "starting ONNX Runtime");
        auto rt = makeDefaultRuntime();
        if (!rt.ok()) return rt.error();
        progress(Phase::Verify, 0.1, rt.value()->describe());
        auto scaled = [&progress](Phase p, double f, const std::string& m) { progress(p, 0.1 + 0.9 * f, m); };
        return verifyExport(*model, opts, file, *rt.value(), VerifyOptions{}, cancel, scaled);
      },
      [this](Result<VerifyReport>& r) {
        verify_job_ = -1;
        updateActions();
        if (!r.ok()) {
          if (r.error().code() == "cancelled") {
            export_->finishPhases(false, tr("Verification cancelled."));
            status_->setText(tr("Verification cancelled"));
            emit verifyFinished(false);
            return;
          }
          export_->finishPhases(false, tr("Verification did not run."));
          export_->showVerifyError(q(r.error().message()));
          log(tr("Verify failed:\n%1").arg(q(r.error().message())));
          emit verifyFinished(false);
          return;
        }
        export_->showVerify(r.value());
        if (r.value().skipped) {
          // Custom-domain nodes (ONNX_FALLTHROUGH): ONNX Runtime cannot run the file at all.
          export_->finishPhases(true, tr("Not verified: ONNX Runtime cannot run this file's custom ops."));
          log(q(r.value().toText()));
          emit verifyFinished(true);
          return;
        }
        export_->finishPhases(true, r.value().passed ? tr("Verified: outputs match.") : tr("Verification found differences."));
        if (!r.value().passed) localize_->offer(tr("Verification found differences."));
        log(q(r.value().toText()));
        emit verifyFinished(r.value().passed);
      });
}

void MainWindow::cancelJobs() {
  if (!runner_->busy()) return;
  runner_->cancel();
  status_->setText(tr("Cancelling…"));
}

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
  last_error_ = q(e.message());
  log(title + QStringLiteral(":\n") + last_error_);
  status_->setText(title);
  auto* box = new QMessageBox(QMessageBox::Warning, title, q(e.first().message), QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorBox"));
  if (!e.first().hint.empty()) box->setInformativeText(q(e.first().hint));
  box->setDetailedText(last_error_);
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
  settings_->write({{QStringLiteral("window/geometry"), saveGeometry()},
                    {QStringLiteral("window/state"), saveState()}});
  saveSession();
  settings_->flush();  // the window is going away: the next start reads what this one wrote
  runner_->cancel();
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
