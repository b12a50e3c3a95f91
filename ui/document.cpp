#include "document.h"

#include <QFileInfo>
#include <QUndoStack>

#include <algorithm>
#include <filesystem>

#include "formstate.h"
#include "opening.h"
#include "oxport/op_libraries.h"
#include "settingswriter.h"
#include "taskrunner.h"

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

bool cancelled(const Error& e) { return e.code() == "cancelled"; }

}  // namespace

Document::Document(QObject* parent) : QObject(parent) {
  settings_ = new SettingsWriter(this);
  runner_ = new TaskRunner(this);
  undo_ = new QUndoStack(this);
  connect(undo_, &QUndoStack::cleanChanged, this, [this](bool clean) { emit dirtyChanged(!clean); });
  connect(runner_, &TaskRunner::progress, this, [this](int id, int phase, double fraction, const QString& message) {
    if (isPhasedJob(id)) emit phaseProgress(phase, fraction, message);
  });
  connect(runner_, &TaskRunner::busyChanged, this, &Document::actionsChanged);
  applyFormState(Preset{});
}

Document::~Document() {
  // Stop the worker before the state its callbacks refer to goes away.
  delete runner_;
  runner_ = nullptr;
  // The undo stack emits cleanChanged as it goes; not to a half-destroyed document.
  undo_->disconnect(this);
  delete undo_;
  undo_ = nullptr;
}

// ---- the form

void Document::applyFormState(const Preset& p) {
  preset_ = p;
  emit formChanged();
  validate();
}

void Document::editForm(const Preset& p, FormPart part, const QString& field, const QString& what) {
  Preset before = preset_;
  // Each panel owns its part of the state; take only that part.
  if (part == FormPart::Inputs) {
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
  emit formEdited();
  const QString key = (part == FormPart::Inputs ? QStringLiteral("in:") : QStringLiteral("opt:")) + field;
  undo_->push(new FormEditCommand(this, std::move(before), key, what, true));
  validate();
}

void Document::validate() {
  problems_ = validateOptions(preset_.options);
  for (auto& d : checkForm(modelInfo(), preset_.options)) problems_.push_back(std::move(d));
  if (!preset_.output || preset_.output->empty()) {
    Diagnostic d = makeError("form.no-output", "Choose an output file.");
    d.option = "output";
    problems_.push_back(std::move(d));
  }
  emit problemsChanged();
}

bool Document::hasErrors() const {
  return std::any_of(problems_.begin(), problems_.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

bool Document::isDirty() const { return !undo_->isClean(); }

// ---- what can run

bool Document::busy() const { return runner_ && runner_->busy(); }
bool Document::canExport() const {
  return model_ && !hasErrors() && export_job_ < 0 && load_job_ < 0 && verify_job_ < 0;
}
bool Document::canRefresh() const { return model_ && !busy() && !hasErrors(); }
bool Document::canVerify() const { return model_ && !busy() && !last_export_file_.isEmpty(); }

void Document::endJob(int& job) {
  job = -1;
  emit actionsChanged();
}

void Document::setError(const QString& title, const Error& e) {
  last_error_ = q(e.message());
  emit failed(title, e);
}

// ---- opening

void Document::openPath(const QString& path) {
  if (path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) openPreset(path);
  else openModel(path);
}

void Document::openModel(const QString& path_in, std::optional<Preset> form) {
  const QString path = QFileInfo(path_in).absoluteFilePath();
  runner_->cancel();
  emit loadStarted(path);
  const std::filesystem::path p = path.toStdString();
  const std::vector<std::string> libraries = librariesFor(path, form, preset_);
  load_job_ = runner_->run<Result<Model>>(
      tr("Loading %1").arg(QFileInfo(path).fileName()),
      [p, libraries](const ProgressFn& progress, const CancelToken& cancel) -> Result<Model> {
        for (const auto& lib : libraries) OXPORT_TRY(loadOpLibrary(lib));
        return Model::load(p, progress, cancel);
      },
      [this, path, form](Result<Model>& r) {
        endJob(load_job_);
        if (!r.ok()) {
          const bool was_cancelled = cancelled(r.error());
          if (!was_cancelled) last_error_ = q(r.error().message());
          emit loadFailed(path, was_cancelled);  // lastError() says why
          if (!was_cancelled) setError(tr("Could not open %1").arg(QFileInfo(path).fileName()), r.error());
          emit modelLoaded(false);
          return;
        }
        model_ = std::make_shared<Model>(std::move(r).value());
        info_ = model_->info();
        loaded_path_ = path;
        OpenedForm opened = formForModel(path, info_, form);
        for (const QString& line : opened.log) emit logged(line);
        last_export_file_.clear();
        last_export_options_.reset();
        last_export_.reset();
        last_verify_.reset();
        last_verify_error_.clear();
        onnx_graph_.reset();
        undo_->clear();
        form_from_guesses_ = opened.from_guesses;
        applyFormState(opened.state);
        undo_->setClean();
        addRecent(path);
        const bool preset_failed = !opened.preset_problems.empty();
        for (const auto& d : info_.load_notes) {
          emit logged(q(d.toString()));
          opened.preset_problems.push_back(d);  // an op library loaded for the model, or one it does not use
        }
        emit modelOpened(opened.preset_problems, preset_failed);
        emit logged(tr("Opened %1\n%2").arg(path, q(info_.schema)));
        saveSession();
        emit modelLoaded(true);
        preview_exact_ = false;
        loadSavedGraph();
        refreshPreview();
      });
}

bool Document::openPreset(const QString& file_in) {
  const QString file = QFileInfo(file_in).absoluteFilePath();
  auto r = loadPreset(file.toStdString());
  if (!r.ok()) {
    setError(tr("Could not read the preset %1").arg(QFileInfo(file).fileName()), r.error());
    return false;
  }
  Preset p = withAbsolutePaths(r.value(), QFileInfo(file).absolutePath().toStdString());
  preset_file_ = file;
  addRecent(file);
  emit logged(tr("Preset %1").arg(file));
  if (presetOpensModel(p, preset_, hasModel())) {
    openModel(q(*p.model), p);  // the form follows once the model is open
    return true;
  }
  if (!p.model || p.model->empty()) p.model = preset_.model;
  Preset before = preset_;
  form_from_guesses_ = false;  // the shapes are the preset's now
  applyFormState(p);
  undo_->push(new FormEditCommand(this, std::move(before), QString(), tr("Load preset %1").arg(QFileInfo(file).fileName()), true));
  if (model_ && !busy()) refreshPreview();  // the example inputs may have changed
  return true;
}

bool Document::savePresetAs(const QString& file_in) {
  const QString file = QFileInfo(file_in).absoluteFilePath();
  Preset p = withRelativePaths(preset_, QFileInfo(file).absolutePath().toStdString());
  auto s = savePreset(p, file.toStdString());
  if (!s.ok()) {
    setError(tr("Could not save the preset"), s.error());
    return false;
  }
  preset_file_ = file;
  undo_->setClean();
  addRecent(file);
  emit statusMessage(tr("Saved preset %1").arg(file));
  return true;
}

void Document::saveSession() const { studio::saveSession(*settings_, preset_, preset_file_); }

bool Document::restoreSession() {
  const Session s = lastSession(*settings_);
  preset_file_ = s.preset_file;
  if (!s.error.isEmpty()) emit logged(tr("The last session could not be restored: %1").arg(s.error));
  if (!s.form || !s.form->model || !QFileInfo::exists(q(*s.form->model))) return false;
  openModel(q(*s.form->model), *s.form);
  return true;
}

void Document::openAtStartup() {
  if (restoreSession()) return;
  if (!takeFirstStart(*settings_)) return;
  const QString sample = bundledSample();
  if (sample.isEmpty()) return;
  emit logged(tr("First start: opening the bundled sample model %1").arg(sample));
  openPath(sample);
}

void Document::addRecent(const QString& path) { addRecentFile(*settings_, path); }
QStringList Document::recentFiles() const { return studio::recentFiles(*settings_); }
void Document::clearRecentFiles() { studio::clearRecentFiles(*settings_); }

// ---- jobs

void Document::loadSavedGraph() {
  // The graph as saved takes a fraction of a second even for a vit_b_16, whose example run takes
  // as long as its forward pass: shown at once, and replaced by the full preview.
  auto model = model_;
  runner_->run<Result<GraphView>>(
      tr("Saved graph"),
      [model](const ProgressFn&, const CancelToken&) { return model->savedGraph(); },
      [this, model](Result<GraphView>& r) {
        // Only while it is still this model's first preview.
        if (model != model_ || !r.ok() || preview_exact_) return;
        torch_graph_ = std::make_shared<const GraphView>(std::move(r.value()));
        emit savedGraphReady();
      });
}

void Document::refreshPreview() {
  if (!model_) return;
  if (hasErrors()) {
    emit previewBlocked();
    return;
  }
  emit previewStarted();
  auto model = model_;
  const ExportOptions opts = preset_.options;
  preview_job_ = runner_->run<Result<GraphView>>(
      tr("Preview"),
      [model, opts](const ProgressFn& progress, const CancelToken& cancel) { return model->inspect(opts, progress, cancel); },
      [this](Result<GraphView>& r) {
        endJob(preview_job_);
        if (!r.ok()) {
          if (!cancelled(r.error())) emit previewFailed(r.error());
          emit previewUpdated(false);
          return;
        }
        torch_graph_ = std::make_shared<const GraphView>(std::move(r.value()));
        preview_exact_ = true;
        emit previewUpdated(true);
      });
}

void Document::startExport() {
  // Queued behind a running preview if need be; never two exports, nor during a load or verify.
  if (!model_ || export_job_ >= 0 || load_job_ >= 0 || verify_job_ >= 0) return;
  if (!canExport()) {
    emit statusMessage(tr("Cannot export yet: %1").arg(problems_.empty() ? tr("no model") : q(problems_.front().message)));
    return;
  }
  const QString file = q(*preset_.output);
  auto model = model_;
  const ExportOptions opts = preset_.options;
  const std::filesystem::path out = file.toStdString();
  last_verify_.reset();
  last_verify_error_.clear();
  emit exportStarted(file);
  export_job_ = runner_->run<Result<ExportResult>>(
      tr("Export"),
      [model, opts, out](const ProgressFn& progress, const CancelToken& cancel) {
        return model->exportOnnx(opts, OutputTarget::toFile(out), progress, cancel);
      },
      [this, opts, file](Result<ExportResult>& r) {
        endJob(export_job_);
        if (!r.ok()) {
          const bool was_cancelled = cancelled(r.error());
          if (!was_cancelled) last_error_ = q(r.error().message());
          emit exportFailed(r.error(), was_cancelled);
          emit exportFinished(false);
          return;
        }
        ExportResult& res = r.value();
        // The TorchScript graph of this export, so ONNX origins point into it.
        torch_graph_ = std::make_shared<const GraphView>(std::move(res.torch_graph));
        onnx_graph_ = std::make_shared<const GraphView>(std::move(res.onnx_graph));
        res.torch_graph = {};
        res.onnx_graph = {};
        preview_exact_ = true;
        last_export_ = std::move(res);
        last_export_file_ = file;
        last_export_options_ = opts;
        emit exported();
        emit actionsChanged();
        saveSession();
        emit exportFinished(true);
      });
}

void Document::startVerify() {
  if (!model_ || busy() || last_export_file_.isEmpty() || !last_export_options_) return;
  auto model = model_;
  const ExportOptions opts = *last_export_options_;
  const std::filesystem::path file = last_export_file_.toStdString();
  last_verify_.reset();
  last_verify_error_.clear();
  emit verifyStarted();
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
        endJob(verify_job_);
        if (!r.ok()) {
          const bool was_cancelled = cancelled(r.error());
          if (!was_cancelled) last_verify_error_ = q(r.error().message());
          emit verifyFailed(was_cancelled);
          emit verifyFinished(false);
          return;
        }
        last_verify_ = std::move(r.value());
        emit verified();
        // Skipped (custom-domain nodes ONNX Runtime cannot run) is not a failure.
        emit verifyFinished(last_verify_->skipped || last_verify_->passed);
      });
}

void Document::cancelJobs() {
  if (!busy()) return;
  runner_->cancel();
  emit statusMessage(tr("Cancelling…"));
}

}  // namespace oxport::studio
