#include "formcommand.h"

namespace oxport::studio {

FormEditCommand::FormEditCommand(FormHost* host, Preset before, const QString& field, const QString& text,
                                 bool applied)
    : QUndoCommand(text), host_(host), other_(std::move(before)), field_(field), skip_redo_(applied) {
  age_.start();
}

void FormEditCommand::redo() {
  if (skip_redo_) {
    skip_redo_ = false;
    return;
  }
  swap();
}

void FormEditCommand::swap() {
  Preset current = host_->formState();
  host_->applyFormState(other_);
  other_ = std::move(current);
}

bool FormEditCommand::mergeWith(const QUndoCommand* other) {
  auto* o = static_cast<const FormEditCommand*>(other);
  // Field keys that are empty (whole-form changes: load preset, reset) never merge.
  if (field_.isEmpty() || o->field_ != field_ || age_.elapsed() > 2500) return false;
  // This command still holds the state before the first edit; the window already shows the newest.
  age_.start();
  return true;
}

}  // namespace oxport::studio
