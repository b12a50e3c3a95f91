// The Inputs panel: one card per argument of forward() (how it is passed, its value; for tensors
// the graph-input name, a shape editor whose dimensions can be made dynamic with a label, dtype and
// fill), and the outputs (names and dynamic axes). Edits are reported as whole new form states.
#pragma once

#include <QPointer>
#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

#include "formstate.h"

class QVBoxLayout;
class QLabel;
class QGridLayout;
class QLineEdit;

namespace oxport::studio {

class InputsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit InputsPanel(QWidget* parent = nullptr);

  // Shows a state; rebuilds the widgets. `info` may be null (no model loaded). With
  // `from_guesses` the state's tensor shapes came from the model's guesses (no preset gave them):
  // a shape still equal to its guess is labelled as guessed. A preset's shapes never are, even
  // when they equal the guess.
  void setState(const Preset& p, const ModelInfo* info, bool from_guesses = false);

 signals:
  // A new form state after an edit made in this panel; `field` identifies the edited box for
  // merging undo steps, `what` describes the edit.
  void edited(const oxport::Preset& p, const QString& field, const QString& what);

 private:
  void rebuild();
  void rebuildLater();
  QWidget* buildRow(int row);
  QWidget* buildTensorEditor(int row, int element, const QString& key);
  void buildOutputs();

  // Editing helpers: change rows_/state_, then publish.
  void commit(const QString& field, const QString& what, bool structural = false);
  TensorSpec* tensorAt(int row, int element);
  int leafIndex(int row, int element) const;
  std::string inputName(int leaf) const;
  void setInputName(int leaf, const std::string& name);
  std::map<int64_t, std::string> axesOf(const std::string& name) const;
  void setAxes(const std::string& name, const std::map<int64_t, std::string>& axes);
  void setPassing(int row, Passing p);
  void renameDynamicKey(const std::string& from, const std::string& to);
  void relinkNames(const std::vector<ArgRow>& before);
  void setOutputName(int index, const std::string& name);

  Preset state_;
  std::optional<ModelInfo> info_;
  bool from_guesses_ = false;
  std::vector<ArgRow> rows_;
  bool rebuild_pending_ = false;

  QLabel* schema_ = nullptr;
  QWidget* body_ = nullptr;
  QVBoxLayout* rows_layout_ = nullptr;
  QWidget* outputs_box_ = nullptr;
  QGridLayout* outputs_grid_ = nullptr;
  QLabel* extra_axes_ = nullptr;
};

}  // namespace oxport::studio
