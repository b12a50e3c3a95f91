// The studio's opening policy, apart from any window: which form a model opens with (the preset
// given, else the preset saved beside the model, else the model's own guesses), which op libraries
// are loaded before it, where its output goes when its folder cannot be written, the recent files,
// the last session and the first start (the bundled sample).
//
// Unsaved changes: the form is never lost without a trace, but nothing asks either. Opening a model
// replaces the form (and clears the undo stack); the form is saved as the session after each open
// and export and when the window closes, and the next start restores it. A preset is a file the
// user saves explicitly (Save Preset); Document::isDirty() says whether the form differs from the
// last one opened or saved, which the window shows as the modified mark in its title.
#pragma once

#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"
#include "oxport/model.h"
#include "oxport/preset.h"

namespace oxport::studio {

class SettingsWriter;

// `model.pt` -> `model.preset.json` in the same folder.
QString presetBesideModel(const QString& model_path);

// Op libraries to load before `path`: the form's (a preset opened with the model), else those of
// the preset beside the model, plus those already in `current` when it is the same model.
std::vector<std::string> librariesFor(const QString& path, const std::optional<Preset>& form, const Preset& current);

// The form a model opens with.
struct OpenedForm {
  Preset state;
  bool from_guesses = true;                 // the shapes are the model's guesses (no preset gave them)
  std::vector<Diagnostic> preset_problems;  // a preset beside the model that could not be used
  QStringList log;                          // what was decided, for the log
};
OpenedForm formForModel(const QString& path, const ModelInfo& info, const std::optional<Preset>& form);

// Opening a preset opens its model too unless that model is already the one open.
bool presetOpensModel(const Preset& preset, const Preset& current, bool has_model);

// Recent files (models and presets), newest first, at most kMaxRecent.
constexpr int kMaxRecent = 8;
QStringList recentFiles(const SettingsWriter& settings);
void addRecentFile(SettingsWriter& settings, const QString& path);
void clearRecentFiles(SettingsWriter& settings);

// The last session: the whole form and the preset file it was saved to.
void saveSession(SettingsWriter& settings, const Preset& form, const QString& preset_file);
struct Session {
  std::optional<Preset> form;  // none when there is no session or it cannot be read
  QString preset_file;
  QString error;  // why a stored session could not be read
};
Session lastSession(const SettingsWriter& settings);

// The bundled sample model: installed under share/oxport/samples beside bin/, or in the source
// tree when run from a build directory. Empty when neither exists.
QString bundledSample();
// True once: on the very first start (and records that it happened).
bool takeFirstStart(SettingsWriter& settings);

}  // namespace oxport::studio
