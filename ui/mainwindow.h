// The studio's main window: shows a Document (document.h: the model, the form, its undo stack,
// the jobs and their results) in the forms, the two graph previews, the inspector, the export
// panel and the diagnostics, and offers its commands (menu, toolbar, drag and drop, recent files).
// What opening a model or preset decides is in opening.h.
#pragma once

#include <QMainWindow>
#include <QPointer>

#include <memory>
#include <optional>
#include <vector>

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
class Document;
class ExportPanel;
class GraphPreview;
class InputsPanel;
class Inspector;
class LocalizeController;
class OptionsForm;
class TaskRunner;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  Document* document() const { return doc_; }

  // The document's commands and state, as the window's (the command line and the tests use them).
  const Preset& formState() const;
  void applyFormState(const Preset& p);
  void openPath(const QString& path);
  void openModel(const QString& path, std::optional<Preset> form = std::nullopt);
  bool openPreset(const QString& file);
  bool savePresetAs(const QString& file);
  bool restoreSession();
  static QString bundledSample();
  void openAtStartup();
  void saveSession() const;

  void refreshPreview();
  void startExport();
  void startVerify();
  void cancelJobs();

  bool hasModel() const;
  const ModelInfo* modelInfo() const;
  const std::vector<Diagnostic>& problems() const;
  QString lastError() const;
  QString lastExportFile() const;
  QString presetFile() const;

  InputsPanel* inputsPanel() const { return inputs_; }
  OptionsForm* optionsForm() const { return options_; }
  GraphPreview* torchPreview() const { return torch_; }
  GraphPreview* onnxPreview() const { return onnx_; }
  ExportPanel* exportPanel() const { return export_; }
  DiagnosticsView* diagnosticsView() const { return diagnostics_; }
  Inspector* inspector() const { return inspector_; }
  LocalizeController* localizeController() const { return localize_; }
  QUndoStack* undoStack() const;
  TaskRunner* runner() const;
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
  void connectDocument();
  void sizeDocks();
  void updateActions();
  void updateTitle();
  void showLoadedPath();
  void showError(const QString& title, const Error& e);
  void log(const QString& text);
  void rebuildRecentMenu();
  void jumpToDiagnostic(const Diagnostic& d);
  void focusOption(const QString& option);
  void crossHighlight(bool from_torch, int node_id);
  GraphPreview* activePreview() const;
  void about();
  // The document's results, shown.
  void showOpened(const std::vector<Diagnostic>& diagnostics, bool preset_failed);
  void showExported();
  void showVerified();

  Document* doc_ = nullptr;
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
