// The studio's document, driven without a window: opening the sample (its preset beside it fills
// the form), edits of the form with undo, redo and the dirty state, the preset round trip, the
// session and the settings writer under it, recent files and op libraries, a bad file, a broken preset beside the model, export on the worker thread with its
// progress, cancel, and verification. No widget is ever created.
#include <QtTest>

#include <QApplication>
#include <QFile>
#include <QSemaphore>
#include <QSettings>
#include <QTemporaryDir>
#include <QUndoStack>

#include "document.h"
#include "opening.h"
#include "oxport/runtime.h"
#include "settingswriter.h"
#include "taskrunner.h"
#include "ui_support.h"

using namespace oxport;
using namespace oxport::studio;
using namespace oxport::studio::test;

namespace {

QString json(const Preset& p) { return QString::fromStdString(presetToJson(p)); }

// Opens `model` in `doc` and waits for it; false when it does not load.
bool openAndWait(Document& doc, const QString& model) {
  QSignalSpy loaded(&doc, &Document::modelLoaded);
  doc.openModel(model);
  return loaded.wait(kJobTimeout) && loaded.first().first().toBool();
}

// The sample open in `doc`, its output set to `out`.
bool openSampleWritingTo(Document& doc, const QString& out) {
  if (!openAndWait(doc, kSample)) return false;
  Preset p = doc.formState();
  p.output = out.toStdString();
  doc.editForm(p, Document::FormPart::Options, "output", "output");
  return doc.formState().output == out.toStdString();
}

// The form with one option changed, as the Options panel reports it.
Preset withOpset(const Document& doc, int opset) {
  Preset p = doc.formState();
  p.options.opset_version = opset;
  return p;
}

}  // namespace

class DocumentTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

 private slots:
  void cleanup() { QVERIFY(QApplication::topLevelWidgets().isEmpty()); }  // no window, ever

  void openingTheSampleTakesThePresetBesideIt() {
    Document doc;
    QSignalSpy opened(&doc, &Document::modelOpened);
    QSignalSpy preview(&doc, &Document::previewUpdated);
    QVERIFY(openAndWait(doc, kSample));
    QVERIFY(doc.hasModel());
    QCOMPARE(doc.loadedPath(), QFileInfo(kSample).absoluteFilePath());
    QCOMPARE(opened.count(), 1);
    QVERIFY(!doc.formFromGuesses());
    QCOMPARE(doc.formState().options.input_names, std::vector<std::string>{"image"});
    QCOMPARE(std::get<TensorSpec>(doc.formState().options.args.at(0).v).shape, (std::vector<int64_t>{1, 3, 32, 32}));
    QVERIFY(!doc.isDirty());
    QCOMPARE(doc.undoStack()->count(), 0);
    QVERIFY(doc.problems().empty());
    QVERIFY(doc.canExport());
    QVERIFY(!doc.canVerify());  // nothing exported yet
    QCOMPARE(doc.recentFiles().value(0), QFileInfo(kSample).absoluteFilePath());
    // The graph as saved, then the preview after the example run.
    QVERIFY(preview.count() || preview.wait(kJobTimeout));
    QVERIFY(preview.first().first().toBool());
    QVERIFY(doc.torchGraph() && !doc.torchGraph()->nodes.empty());
    QVERIFY(doc.torchGraphExact());
  }

  void editsUndoRedoAndTheDirtyState() {
    Document doc;
    QVERIFY(openAndWait(doc, kSample));
    const Preset base = doc.formState();
    QSignalSpy dirty(&doc, &Document::dirtyChanged);
    // Three edits of one field in a row are one undo step.
    for (int opset : {12, 13, 14}) doc.editForm(withOpset(doc, opset), Document::FormPart::Options, "opset_version", "opset");
    QCOMPARE(doc.undoStack()->count(), 1);
    QCOMPARE(doc.formState().options.opset_version, 14);
    QVERIFY(doc.isDirty());
    QCOMPARE(dirty.count(), 1);
    // A panel's edit takes only that panel's part: the inputs panel cannot change the opset.
    Preset from_inputs = withOpset(doc, 9);
    from_inputs.options.input_names = {"pixels"};
    doc.editForm(from_inputs, Document::FormPart::Inputs, "x.inputName", "rename");
    QCOMPARE(doc.formState().options.input_names, std::vector<std::string>{"pixels"});
    QCOMPARE(doc.formState().options.opset_version, 14);
    QCOMPARE(doc.undoStack()->count(), 2);
    // An edit that changes nothing is no step.
    doc.editForm(doc.formState(), Document::FormPart::Options, "verbose", "nothing");
    QCOMPARE(doc.undoStack()->count(), 2);
    const Preset edited = doc.formState();

    QSignalSpy formChanged(&doc, &Document::formChanged);
    while (doc.undoStack()->canUndo()) doc.undoStack()->undo();
    QCOMPARE(json(doc.formState()), json(base));
    QVERIFY(!doc.isDirty());
    QCOMPARE(formChanged.count(), 2);  // the panels are told each time
    while (doc.undoStack()->canRedo()) doc.undoStack()->redo();
    QCOMPARE(json(doc.formState()), json(edited));
    QVERIFY(doc.isDirty());

    // An invalid opset is a problem that blocks export, and says so when export is asked for.
    doc.editForm(withOpset(doc, 30), Document::FormPart::Options, "opset_version", "opset");
    QVERIFY(doc.hasErrors());
    QVERIFY(!doc.canExport());
    QVERIFY(!doc.canRefresh());
    QSignalSpy status(&doc, &Document::statusMessage);
    QSignalSpy started(&doc, &Document::exportStarted);
    doc.startExport();
    QCOMPARE(started.count(), 0);
    QVERIFY(status.count() == 1 && status.first().first().toString().startsWith("Cannot export yet"));
  }

  void aPresetSavedAndOpenedAgainGivesTheSameForm() {
    Preset edited;
    const QString file = tmp_.filePath("round/trip.json");
    QVERIFY(QDir().mkpath(tmp_.filePath("round")));
    {
      Document doc;
      QVERIFY(openAndWait(doc, kSample));
      doc.editForm(withOpset(doc, 13), Document::FormPart::Options, "opset_version", "opset");
      QVERIFY(doc.isDirty());
      QVERIFY(doc.savePresetAs(file));
      QVERIFY(!doc.isDirty());  // saved
      QCOMPARE(doc.presetFile(), file);
      QCOMPARE(doc.recentFiles().value(0), file);
      edited = doc.formState();
      auto saved = loadPreset(file.toStdString());
      QVERIFY(saved.ok());
      QCOMPARE(saved.value().options, edited.options);
    }
    // Opened in a document without a model: the model opens with the preset's form.
    Document doc;
    QSignalSpy loaded(&doc, &Document::modelLoaded);
    QVERIFY(doc.openPreset(file));
    QVERIFY(loaded.wait(kJobTimeout) && loaded.first().first().toBool());
    QCOMPARE(json(doc.formState()), json(edited));
    QVERIFY(!doc.isDirty());
    // Opened again over the same model: the form changes in one undoable step, no reload.
    doc.editForm(withOpset(doc, 15), Document::FormPart::Options, "opset_version", "opset");
    loaded.clear();
    QVERIFY(doc.openPreset(file));
    QCOMPARE(doc.formState().options.opset_version, 13);
    QVERIFY(!loaded.wait(200) && loaded.isEmpty());
    doc.undoStack()->undo();
    QCOMPARE(doc.formState().options.opset_version, 15);
  }

  void theSessionIsRestored() {
    {
      Document doc;
      QVERIFY(openAndWait(doc, kSample));
      doc.editForm(withOpset(doc, 16), Document::FormPart::Options, "opset_version", "opset");
      doc.saveSession();
    }
    Document doc;
    QSignalSpy loaded(&doc, &Document::modelLoaded);
    QVERIFY(doc.restoreSession());
    QVERIFY(loaded.wait(kJobTimeout) && loaded.first().first().toBool());
    QCOMPARE(doc.formState().options.opset_version, 16);
  }

  void settingsWritesReadBackAtOnceAndReachTheDisk() {
    // What the window writes is readable at once through the writer, and on disk after flush();
    // the sync itself (lock file, fdatasync) runs on the writer's thread.
    SettingsWriter writer;
    const QStringList recent{QStringLiteral("/a/b.pt"), QStringLiteral("/c/d.pt")};
    writer.write({{QStringLiteral("test/recent"), recent}, {QStringLiteral("test/gone"), 1}});
    writer.remove(QStringLiteral("test/gone"));
    QCOMPARE(writer.value(QStringLiteral("test/recent")).toStringList(), recent);
    QVERIFY(!writer.value(QStringLiteral("test/gone")).isValid());
    writer.flush();
    QSettings fresh;
    QCOMPARE(fresh.value(QStringLiteral("test/recent")).toStringList(), recent);
    QVERIFY(!fresh.contains(QStringLiteral("test/gone")));
    fresh.remove(QStringLiteral("test"));
  }

  void theOpeningPolicyWithoutAModel() {
    // Recent files: newest first, each once, at most kMaxRecent.
    SettingsWriter settings;
    clearRecentFiles(settings);
    for (int i = 0; i < kMaxRecent + 2; ++i) addRecentFile(settings, QStringLiteral("/m/%1.pt").arg(i));
    addRecentFile(settings, QStringLiteral("/m/5.pt"));
    const QStringList recent = recentFiles(settings);
    QCOMPARE(recent.size(), kMaxRecent);
    QCOMPARE(recent.front(), QStringLiteral("/m/5.pt"));
    QCOMPARE(recent.count(QStringLiteral("/m/5.pt")), 1);
    QVERIFY(!recent.contains(QStringLiteral("/m/0.pt")));
    clearRecentFiles(settings);
    QVERIFY(recentFiles(settings).isEmpty());

    // Op libraries: the preset beside the model names them relative to its folder; a preset
    // opened with the model wins; the form's own are kept when the same model opens again.
    const QString model = sampleWithPreset(tmp_.filePath("libs"), R"({"load_libraries": ["ops/libvendor.so"]})");
    const std::string beside = tmp_.filePath("libs/ops/libvendor.so").toStdString();
    QCOMPARE(librariesFor(model, std::nullopt, Preset{}), std::vector<std::string>{beside});
    Preset given;
    given.load_libraries = {"/given/lib.so"};
    QCOMPARE(librariesFor(model, given, Preset{}), std::vector<std::string>{"/given/lib.so"});
    Preset current;
    current.model = model.toStdString();
    current.load_libraries = {"/form/lib.so"};
    QCOMPARE(librariesFor(model, std::nullopt, current), (std::vector<std::string>{beside, "/form/lib.so"}));

    // A preset opens its model unless that model is the one open.
    Preset preset;
    QVERIFY(!presetOpensModel(preset, current, true));  // no model in the preset
    preset.model = model.toStdString();
    QVERIFY(!presetOpensModel(preset, current, true));
    QVERIFY(presetOpensModel(preset, current, false));
    preset.model = "/elsewhere/net.pt";
    QVERIFY(presetOpensModel(preset, current, true));
  }

  void aBadFileFailsAndKeepsNothing() {
    const QString bad = tmp_.filePath("bad.pt");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a TorchScript archive");
    f.close();
    Document doc;
    QSignalSpy failed(&doc, &Document::failed);
    QSignalSpy loadFailed(&doc, &Document::loadFailed);
    QVERIFY(!openAndWait(doc, bad));
    QVERIFY(!doc.hasModel());
    QCOMPARE(loadFailed.count(), 1);
    QCOMPARE(loadFailed.first().at(1).toBool(), false);  // not cancelled
    QCOMPARE(failed.count(), 1);
    QVERIFY(!doc.lastError().isEmpty());
  }

  void aBrokenPresetBesideTheModelIsReportedAndTheGuessesUsed() {
    const QString model = sampleWithPreset(tmp_.filePath("broken"), R"({"args": [{"shape": [1, 3, 32, 32]}]})");
    Document doc;
    QSignalSpy opened(&doc, &Document::modelOpened);
    QVERIFY(openAndWait(doc, model));
    QCOMPARE(opened.count(), 1);
    const auto diagnostics = opened.first().first().value<std::vector<Diagnostic>>();
    QCOMPARE(diagnostics.size(), size_t(1));
    QCOMPARE(QString::fromStdString(diagnostics[0].code), QStringLiteral("preset.unknown-key"));
    QVERIFY(opened.first().at(1).toBool());  // the preset failed
    QVERIFY(doc.formFromGuesses());
    QCOMPARE(std::get<TensorSpec>(doc.formState().options.args[0].v).shape, (std::vector<int64_t>{1, 3, 224, 224}));
  }

  void exportReportsProgressThenVerifies() {
    Document doc;
    const QString out = tmp_.filePath("doc.onnx");
    QVERIFY(openSampleWritingTo(doc, out));
    QSignalSpy progress(&doc, &Document::phaseProgress);
    QSignalSpy done(&doc, &Document::exportFinished);
    doc.startExport();
    QVERIFY(!doc.canExport());  // one export at a time
    QVERIFY(done.wait(kJobTimeout));
    QVERIFY2(done.first().first().toBool(), qPrintable(doc.lastError()));
    QVERIFY(QFile::exists(out));
    QCOMPARE(doc.lastExportFile(), out);
    QVERIFY(doc.lastExport() && doc.lastExport()->stats.onnx_nodes > 0);
    QVERIFY(doc.onnxGraph() && int(doc.onnxGraph()->nodes.size()) == doc.lastExport()->stats.onnx_nodes);
    QVERIFY(doc.torchGraph() && !doc.torchGraph()->nodes.empty());
    QVERIFY(doc.canVerify());
    QSet<int> phases;
    for (const auto& args : progress) phases.insert(args.at(0).toInt());
    QVERIFY2(phases.contains(int(Phase::Convert)) && phases.contains(int(Phase::Serialize)),
             qPrintable(QString::number(phases.size())));

    auto runtime = makeDefaultRuntime();
    if (!runtime.ok()) QSKIP("ONNX Runtime is not installed here");
    QSignalSpy verified(&doc, &Document::verifyFinished);
    doc.startVerify();
    QVERIFY(verified.wait(kJobTimeout));
    QVERIFY2(verified.first().first().toBool(), qPrintable(doc.lastVerifyError()));
    QVERIFY(doc.lastVerify() && doc.lastVerify()->passed && !doc.lastVerify()->runs.empty());
    // A new export forgets the verification of the previous file.
    done.clear();
    doc.startExport();
    QVERIFY(!doc.lastVerify());
    QVERIFY(done.wait(kJobTimeout));
  }

  void cancelledExportWritesNothing() {
    Document doc;
    const QString out = tmp_.filePath("cancelled.onnx");
    QVERIFY(openSampleWritingTo(doc, out));
    // The export waits behind another job on the worker thread; cancelling cancels both.
    QSemaphore release;
    doc.runner()->run<Status>(
        "blocker", [&release](const ProgressFn&, const CancelToken&) -> Status {
          release.acquire();
          return okStatus();
        },
        [](Status&) {});
    QSignalSpy failed(&doc, &Document::exportFailed);
    QSignalSpy done(&doc, &Document::exportFinished);
    doc.startExport();
    QVERIFY(doc.busy());
    doc.cancelJobs();
    release.release();
    QVERIFY(done.wait(kJobTimeout));
    QCOMPARE(done.first().first().toBool(), false);
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.first().at(1).toBool(), true);  // cancelled
    QVERIFY(!QFile::exists(out));
    QVERIFY(!doc.lastExport());
    QVERIFY(doc.lastError().isEmpty());  // a cancel is not an error
    QTRY_VERIFY(!doc.busy());
    QVERIFY(doc.canExport());
  }
};

int main(int argc, char** argv) { return runIsolated<DocumentTest>(argc, argv, "oxport-document-test"); }

#include "test_document.moc"
