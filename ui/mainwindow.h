// The studio's main window: opens a model (menu, toolbar, drag and drop, recent files, command
// line), shows the forms, the two graph previews, the inspector, and runs export and verification
// on the worker thread. The form state is one Preset; panels report edits, the undo stack swaps
// states, and the last session is restored through QSettings.
#pragma once

#include <QMainWindow>
#include <QPointer>

#include <memory>
#include <optional>
#include <vector>

#include "formcommand.h"
#include "oxport/model.h"
#include "oxport/preset.h"

class QAction;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QToolButton;
class QUndoStack;

namespace oxport::studio {

class DiagnosticsView;
class ExportPanel;
class GraphPreview;
class InputsPanel;
class Inspector;
class LocalizeController;
class OptionsForm;
class SettingsWriter;
class TaskRunner;

class MainWindow : public QMainWindow, public FormHost {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // FormHost: the whole form as a preset (paths absolute).
  const Preset& formState() const override { return preset_; }
  void applyFormState(const Preset& p) override;

  // A .json file opens as a preset, anything else as a model.
  void openPath(const QString& path);
  // Loads a model in the background. With `form`, the form keeps that state (session, preset).
  void openModel(const QString& path, std::optional<Preset> form = std::nullopt);
  bool openPreset(const QString& file);
  bool savePresetAs(const QString& file);
  // Restores the form (and reopens its model) from the last session; false when there is none
  // (or its model is gone).
  bool restoreSession();
  // The bundled sample model: installed under share/oxport/samples beside bin/, or in the source
  // tree when run from a build directory. Empty when neither exists.
  static QString bundledSample();
  // What the studio opens when started without a file: the last session, or on the very first
  // start the bundled sample (so a new user sees a model at once).
  void openAtStartup();
  void saveSession() const;

  void refreshPreview();
  void showSavedGraph();
  void startExport();
  void startVerify();
  void cancelJobs();

  bool hasModel() const { return model_ != nullptr; }
  const ModelInfo* modelInfo() const { return model_ ? &info_ : nullptr; }
  const std::vector<Diagnostic>& problems() const { return problems_; }
  QString lastError() const { return last_error_; }
  QString lastExportFile() const { return last_export_file_; }
  QString presetFile() const { return preset_file_; }

  InputsPanel* inputsPanel() const { return inputs_; }
  OptionsForm* optionsForm() const { return options_; }
  GraphPreview* torchPreview() const { return torch_; }
  GraphPreview* onnxPreview() const { return onnx_; }
  ExportPanel* exportPanel() const { return export_; }
  DiagnosticsView* diagnosticsView() const { return diagnostics_; }
  Inspector* inspector() const { return inspector_; }
  LocalizeController* localizeController() const { return localize_; }
  QUndoStack* undoStack() const { return undo_; }
  TaskRunner* runner() const { return runner_; }
  QAction* exportAction() const { return export_action_; }

 signals:
  void modelLoaded(bool ok);
  void previewUpdated(bool ok);
  void exportFinished(bool ok);
  void verifyFinished(bool ok);

 protected:
  void closeEvent(QCloseEvent* e) override;
  void showEvent(QShowEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  void buildActions();
  void buildDocks();
  void sizeDocks();
  void onPanelEdited(const Preset& p, const QString& field, const QString& what, bool from_inputs);
  void stateChanged();
  void updateActions();
  void updateTitle();
  void showLoadedPath();
  void showError(const QString& title, const Error& e);
  void log(const QString& text);
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void jumpToDiagnostic(const Diagnostic& d);
  void focusOption(const QString& option);
  void crossHighlight(bool from_torch, int node_id);
  GraphPreview* activePreview() const;
  void about();

  SettingsWriter* settings_ = nullptr;  // QSettings written off the GUI thread
  std::shared_ptr<Model> model_;
  bool preview_exact_ = false;  // the TorchScript preview is past the example run (not the saved graph)
  ModelInfo info_;
  Preset preset_;
  bool form_from_guesses_ = false;  // the form's shapes are the model's guesses (no preset gave them)
  std::vector<Diagnostic> problems_;
  QString last_error_;
  QString preset_file_;
  QString last_export_file_;
  std::optional<ExportOptions> last_export_options_;
  int export_job_ = -1;
  int verify_job_ = -1;
  int load_job_ = -1;
  int preview_job_ = -1;

  TaskRunner* runner_ = nullptr;
  QUndoStack* undo_ = nullptr;
  InputsPanel* inputs_ = nullptr;
  OptionsForm* options_ = nullptr;
  GraphPreview* torch_ = nullptr;
  GraphPreview* onnx_ = nullptr;
  Inspector* inspector_ = nullptr;
  LocalizeController* localize_ = nullptr;  // localizepanel.h: the Localize dock and action
  ExportPanel* export_ = nullptr;
  DiagnosticsView* diagnostics_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* model_path_ = nullptr;  // which file the loaded model came from (permanent, with a warning)
  QString loaded_path_;           // absolute path of the model in model_, empty when none
  QProgressBar* progress_ = nullptr;
  QToolButton* status_cancel_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QPointer<GraphPreview> last_preview_;
  bool docks_sized_ = false;  // initial dock sizes applied (or restored from the settings)

  QAction* open_action_ = nullptr;
  QAction* open_preset_action_ = nullptr;
  QAction* save_preset_action_ = nullptr;
  QAction* save_preset_as_action_ = nullptr;
  QAction* export_action_ = nullptr;
  QAction* verify_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QAction* refresh_action_ = nullptr;
};

}  // namespace oxport::studio
