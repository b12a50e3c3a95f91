// The studio's document: the model that is open, the form (one Preset) with its undo stack and
// problems, the jobs that run on it (load, preview, export, verify) and their results. No widget:
// the main window shows a Document and turns its signals into panels, and the tests drive one
// without a window. What opening a model or a preset decides (the preset beside the model, op
// libraries, recent files, the session, unsaved changes) is in opening.h.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

#include "formcommand.h"
#include "oxport/graph_view.h"
#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

class QUndoStack;

namespace oxport::studio {

class SettingsWriter;
class TaskRunner;

class Document : public QObject, public FormHost {
  Q_OBJECT

 public:
  explicit Document(QObject* parent = nullptr);
  ~Document() override;

  // ---- the form
  // FormHost: the whole form as a preset (paths absolute). applyFormState replaces it (undo and
  // redo do) and revalidates it.
  const Preset& formState() const override { return preset_; }
  void applyFormState(const Preset& p) override;
  // Which part of the form a panel owns.
  enum class FormPart { Inputs, Options };
  // A panel edited the form: takes that panel's part of `p` and pushes one undo step (edits of
  // one `field` in a row merge). Nothing happens when the part is unchanged.
  void editForm(const Preset& p, FormPart part, const QString& field, const QString& what);
  // The form's problems (options, the model's inputs, no output): an error blocks export.
  const std::vector<Diagnostic>& problems() const { return problems_; }
  bool hasErrors() const;
  // The shapes in the form are the model's guesses (no preset gave them).
  bool formFromGuesses() const { return form_from_guesses_; }
  // The form differs from the one last opened or saved as a preset.
  bool isDirty() const;
  QUndoStack* undoStack() const { return undo_; }

  // ---- opening (opening.h decides what the form becomes)
  // A .json file opens as a preset, anything else as a model.
  void openPath(const QString& path);
  // Loads a model in the background. With `form`, the form keeps that state (session, preset).
  void openModel(const QString& path, std::optional<Preset> form = std::nullopt);
  bool openPreset(const QString& file);
  bool savePresetAs(const QString& file);
  // Restores the form (and reopens its model) from the last session; false when there is none
  // (or its model is gone).
  bool restoreSession();
  // The last session, or on the very first start the bundled sample.
  void openAtStartup();
  void saveSession() const;
  QStringList recentFiles() const;
  void clearRecentFiles();

  // ---- jobs, on the runner's worker thread
  void refreshPreview();
  void startExport();
  void startVerify();
  void cancelJobs();
  bool busy() const;
  bool loading() const { return load_job_ >= 0; }
  bool canExport() const;
  bool canRefresh() const;
  bool canVerify() const;
  // Whether a runner job is one of the document's load, export or verify jobs (their phases are
  // reported by phaseProgress).
  bool isPhasedJob(int id) const { return id >= 0 && (id == export_job_ || id == load_job_ || id == verify_job_); }

  // ---- what is open, and the results
  bool hasModel() const { return model_ != nullptr; }
  const std::shared_ptr<Model>& model() const { return model_; }
  const ModelInfo* modelInfo() const { return model_ ? &info_ : nullptr; }
  QString loadedPath() const { return loaded_path_; }  // absolute, empty when none
  QString presetFile() const { return preset_file_; }
  QString lastError() const { return last_error_; }
  // The TorchScript graph shown for the model (as saved, then after the example run, then the
  // export's) and the ONNX graph of the last export.
  std::shared_ptr<const GraphView> torchGraph() const { return torch_graph_; }
  std::shared_ptr<const GraphView> onnxGraph() const { return onnx_graph_; }
  bool torchGraphExact() const { return preview_exact_; }  // past the example run, not the graph as saved
  // The last export (its graphs are torchGraph() and onnxGraph()), its file and options.
  const ExportResult* lastExport() const { return last_export_ ? &*last_export_ : nullptr; }
  QString lastExportFile() const { return last_export_file_; }
  const std::optional<ExportOptions>& lastExportOptions() const { return last_export_options_; }
  // The last verification of that file, or why it did not run.
  const VerifyReport* lastVerify() const { return last_verify_ ? &*last_verify_ : nullptr; }
  QString lastVerifyError() const { return last_verify_error_; }

  TaskRunner* runner() const { return runner_; }
  SettingsWriter* settings() const { return settings_; }

 signals:
  void formChanged();                 // the form was replaced: panels show formState()
  void formEdited();                  // a panel's edit was taken (the other panel's summaries)
  void problemsChanged();             // after every change of the form
  void dirtyChanged(bool dirty);
  void actionsChanged();              // what can run changed (a job ended, a model opened)
  void logged(const QString& text);
  void statusMessage(const QString& text);
  void failed(const QString& title, const oxport::Error& error);  // lastError() is its message
  void phaseProgress(int phase, double fraction, const QString& message);

  void loadStarted(const QString& path);
  void loadFailed(const QString& path, bool cancelled);
  // A model is open, with its form; `diagnostics`: a preset beside it that could not be used, op
  // library notes.
  void modelOpened(const std::vector<oxport::Diagnostic>& diagnostics, bool preset_failed);
  void modelLoaded(bool ok);  // after loadFailed or modelOpened
  void savedGraphReady();     // torchGraph() is the graph as saved
  void previewBlocked();      // the form has errors: no preview
  void previewStarted();
  void previewFailed(const oxport::Error& error);
  void previewUpdated(bool ok);
  void exportStarted(const QString& file);
  void exportFailed(const oxport::Error& error, bool cancelled);
  void exported();            // lastExport(), torchGraph(), onnxGraph() are the new ones
  void exportFinished(bool ok);
  void verifyStarted();
  void verifyFailed(bool cancelled);  // lastVerifyError() says why (not when cancelled)
  void verified();            // lastVerify() is the report
  void verifyFinished(bool ok);

 private:
  void validate();
  void endJob(int& job);  // a job ended: its id is free, what can run changed
  void setError(const QString& title, const Error& e);
  void loadSavedGraph();
  void addRecent(const QString& path);

  SettingsWriter* settings_ = nullptr;
  TaskRunner* runner_ = nullptr;
  QUndoStack* undo_ = nullptr;

  std::shared_ptr<Model> model_;
  ModelInfo info_;
  QString loaded_path_;
  Preset preset_;
  bool form_from_guesses_ = false;
  std::vector<Diagnostic> problems_;
  QString preset_file_;
  QString last_error_;

  std::shared_ptr<const GraphView> torch_graph_;
  std::shared_ptr<const GraphView> onnx_graph_;
  bool preview_exact_ = false;
  std::optional<ExportResult> last_export_;
  QString last_export_file_;
  std::optional<ExportOptions> last_export_options_;
  std::optional<VerifyReport> last_verify_;
  QString last_verify_error_;

  int export_job_ = -1;
  int verify_job_ = -1;
  int load_job_ = -1;
  int preview_job_ = -1;
};

}  // namespace oxport::studio
