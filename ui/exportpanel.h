// The Export panel (phase progress, result statistics, Verify and its per-output errors) and the
// Diagnostics list (click a row to jump to its node).
#pragma once

#include <QMap>
#include <QTreeWidget>
#include <QWidget>

#include <vector>

#include "oxport/model.h"
#include "oxport/runtime.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTextBrowser;

namespace oxport::studio {

// Display name of a phase ("Load", "Convert", ...).
QString phaseLabel(Phase p);

class ExportPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ExportPanel(QWidget* parent = nullptr);

  // Progress: one bar per phase of the running job.
  void startPhases(const QList<Phase>& phases);
  void setPhaseProgress(Phase phase, double fraction, const QString& message);
  void finishPhases(bool ok, const QString& summary);

  // `onnx`: the file's graph (the result's own may have moved to the previews).
  void showResult(const ExportResult& r, const GraphView& onnx);
  void clearResult(const QString& note = {});
  void showVerify(const VerifyReport& report);
  void showVerifyError(const QString& message);
  void clearVerify();

  QPushButton* exportButton() const { return export_; }
  QPushButton* verifyButton() const { return verify_; }
  QPushButton* cancelButton() const { return cancel_; }
  QTreeWidget* verifyTable() const { return verify_table_; }
  QString statsText() const;

 private:
  QPushButton* export_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* verify_ = nullptr;
  QWidget* phases_box_ = nullptr;
  QMap<int, QProgressBar*> bars_;
  QMap<int, QLabel*> labels_;
  QLabel* summary_ = nullptr;
  QTextBrowser* stats_ = nullptr;
  QLabel* verify_summary_ = nullptr;
  QTreeWidget* verify_table_ = nullptr;
};

class DiagnosticsView : public QTreeWidget {
  Q_OBJECT

 public:
  explicit DiagnosticsView(QWidget* parent = nullptr);
  // Replaces the rows; `origin` says where they come from ("Export", "Preview", ...).
  void setDiagnostics(const std::vector<Diagnostic>& diagnostics, const QString& origin);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 signals:
  void diagnosticActivated(const oxport::Diagnostic& d);

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace oxport::studio
