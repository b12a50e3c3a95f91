// The Options form: every parameter of the export besides the arguments themselves, with the
// seed's defaults and tooltips, and the list of problems found before export.
#pragma once

#include <QWidget>

#include <vector>

#include "oxport/preset.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QToolButton;

namespace oxport::studio {

class OptionsForm : public QWidget {
  Q_OBJECT

 public:
  explicit OptionsForm(QWidget* parent = nullptr);

  // Shows a state (signals blocked; keeps focus and cursor).
  void setState(const Preset& p);
  // Lists the problems and marks the fields of the options at fault.
  void showProblems(const std::vector<Diagnostic>& problems);
  int problemCount() const;
  // Gives the field of an option (preset key such as "opset_version") the focus; false when the
  // option is not edited here (arguments, names and axes are in the Inputs panel).
  bool focusOption(const std::string& option);

 signals:
  void edited(const oxport::Preset& p, const QString& field, const QString& what);
  // A problem was activated (double-click): the option key it names.
  void problemActivated(const QString& option);

 private:
  void commit(const QString& field, const QString& what);
  QWidget* widgetForOption(const std::string& option) const;

  Preset state_;
  QLineEdit* output_ = nullptr;
  QToolButton* browse_ = nullptr;
  QCheckBox* export_params_ = nullptr;
  QCheckBox* verbose_ = nullptr;
  QComboBox* training_ = nullptr;
  QComboBox* operator_export_type_ = nullptr;
  QSpinBox* opset_ = nullptr;
  QCheckBox* constant_folding_ = nullptr;
  QComboBox* keep_initializers_ = nullptr;
  QLineEdit* custom_opsets_ = nullptr;
  QComboBox* graph_mode_ = nullptr;
  QLineEdit* load_libraries_ = nullptr;
  QLabel* input_names_ = nullptr;
  QLabel* output_names_ = nullptr;
  QLabel* dynamic_axes_ = nullptr;
  QListWidget* problems_ = nullptr;
};

}  // namespace oxport::studio
