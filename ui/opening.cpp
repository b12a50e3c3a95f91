#include "opening.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include "formstate.h"
#include "settingswriter.h"

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

const QString kRecent = QStringLiteral("recentFiles");

}  // namespace

QString presetBesideModel(const QString& model_path) {
  const QFileInfo fi(model_path);
  return fi.absolutePath() + QLatin1Char('/') + fi.completeBaseName() + QStringLiteral(".preset.json");
}

std::vector<std::string> librariesFor(const QString& path, const std::optional<Preset>& form, const Preset& current) {
  if (form) return form->load_libraries;
  std::vector<std::string> libraries;
  const QString sibling = presetBesideModel(path);
  if (QFileInfo::exists(sibling))
    if (auto sp = loadPreset(sibling.toStdString()); sp.ok())
      libraries = withAbsolutePaths(sp.value(), QFileInfo(path).absolutePath().toStdString()).load_libraries;
  if (current.model && q(*current.model) == path)
    libraries.insert(libraries.end(), current.load_libraries.begin(), current.load_libraries.end());
  return libraries;
}

OpenedForm formForModel(const QString& path, const ModelInfo& info, const std::optional<Preset>& form) {
  OpenedForm out;
  out.state = form ? *form : defaultPresetFor(info);
  out.from_guesses = !form;  // until a preset beside the model gives the form
  if (!form) {
    // A preset saved next to the model (model.preset.json) describes how to export it.
    const QString sibling = presetBesideModel(path);
    if (QFileInfo::exists(sibling)) {
      auto sp = loadPreset(sibling.toStdString());
      if (sp.ok()) {
        Preset p = withAbsolutePaths(sp.value(), QFileInfo(path).absolutePath().toStdString());
        if (!p.model || QFileInfo(q(*p.model)).absoluteFilePath() == path) {
          out.state = p;
          out.from_guesses = false;
          out.log << QCoreApplication::translate("Opening", "Using the preset next to the model: %1").arg(sibling);
        }
      } else {
        // Said where it is seen (Diagnostics, status bar), not only in the log: the form then
        // holds guesses, not what the user saved.
        out.log << QCoreApplication::translate("Opening", "Ignoring %1: %2").arg(sibling, q(sp.error().message()));
        for (Diagnostic d : sp.error().diagnostics()) {
          d.severity = Severity::Warning;
          d.message = "the preset next to the model was not used: " + d.message;
          d.hint = (d.hint.empty() ? std::string() : d.hint + "; ") +
                   "the form starts from the model's own guesses; fix the file, or fill the form and "
                   "save the preset again";
          out.preset_problems.push_back(std::move(d));
        }
      }
    }
  }
  Preset& state = out.state;
  state.model = path.toStdString();
  if (!state.output || state.output->empty()) state.output = defaultPresetFor(info).output;
  if (state.output && !QFileInfo(QFileInfo(q(*state.output)).absolutePath()).isWritable()) {
    // A model in a read-only place (the installed sample, a shared folder): write to home.
    const QString home = QDir::homePath() + QLatin1Char('/') + QFileInfo(q(*state.output)).fileName();
    out.log << QCoreApplication::translate("Opening", "%1 is in a folder this user cannot write; the output goes to %2 instead")
                   .arg(q(*state.output), home);
    state.output = home.toStdString();
  }
  return out;
}

bool presetOpensModel(const Preset& preset, const Preset& current, bool has_model) {
  if (!preset.model || preset.model->empty()) return false;
  return !current.model || *current.model != *preset.model || !has_model;
}

QStringList recentFiles(const SettingsWriter& settings) { return settings.value(kRecent).toStringList(); }

void addRecentFile(SettingsWriter& settings, const QString& path) {
  QStringList recent = recentFiles(settings);
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.set(kRecent, recent);
}

void clearRecentFiles(SettingsWriter& settings) { settings.remove(kRecent); }

void saveSession(SettingsWriter& settings, const Preset& form, const QString& preset_file) {
  settings.write({{QStringLiteral("session/preset"), q(presetToJson(form))},
                  {QStringLiteral("session/presetFile"), preset_file}});
}

Session lastSession(const SettingsWriter& settings) {
  Session s;
  s.preset_file = settings.value(QStringLiteral("session/presetFile")).toString();
  const QString json = settings.value(QStringLiteral("session/preset")).toString();
  if (json.isEmpty()) return s;
  auto r = parsePreset(json.toStdString());
  if (!r.ok()) s.error = q(r.error().message());
  else s.form = r.value();
  return s;
}

QString bundledSample() {
  const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/oxport/samples/sample_cnn.pt");
  if (QFileInfo::exists(installed)) return QFileInfo(installed).canonicalFilePath();
  const QString source = QStringLiteral(OXPORT_SOURCE_DIR "/resources/samples/sample_cnn.pt");
  if (QFileInfo::exists(source)) return source;
  return {};
}

bool takeFirstStart(SettingsWriter& settings) {
  if (settings.value(QStringLiteral("studio/firstStartDone")).toBool()) return false;
  settings.set(QStringLiteral("studio/firstStartDone"), true);
  return true;
}

}  // namespace oxport::studio
