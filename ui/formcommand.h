// Undo/redo of form edits. Every edit of the inputs or options replaces the whole form state (a
// Preset), so one command family covers them all: the command keeps the other state and swap()
// exchanges it with the window's, which makes undo and redo the same operation.
#pragma once

#include <QElapsedTimer>
#include <QString>
#include <QUndoCommand>

#include "oxport/preset.h"

namespace oxport::studio {

// What the command edits: the window's form state.
class FormHost {
 public:
  virtual ~FormHost() = default;
  virtual const Preset& formState() const = 0;
  // Shows `p` in every panel (rebuilding their widgets).
  virtual void applyFormState(const Preset& p) = 0;
};

class FormEditCommand : public QUndoCommand {
 public:
  // `before` is the state replaced by an edit that is already on screen (the widgets changed it),
  // so the first redo() does nothing. Consecutive edits of the same `field` within a moment merge
  // into one step (typing in one box, spinning one value).
  FormEditCommand(FormHost* host, Preset before, const QString& field, const QString& text, bool applied);

  void undo() override { swap(); }
  void redo() override;
  int id() const override { return 0x0F0E; }
  bool mergeWith(const QUndoCommand* other) override;
  const QString& field() const { return field_; }

 private:
  void swap();

  FormHost* host_;
  Preset other_;
  QString field_;
  bool skip_redo_;
  QElapsedTimer age_;
};

}  // namespace oxport::studio
