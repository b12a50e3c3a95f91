// What the studio tests share: the sample model, a main() with throw-away settings, an event-loop
// stall meter, a builder of synthetic graphs, and opening a model in a window.
#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QString>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "oxport/graph_view.h"

namespace oxport::studio {
class MainWindow;
}

namespace oxport::studio::test {

inline const QString kSample = QStringLiteral(OXPORT_SOURCE_DIR "/resources/samples/sample_cnn.pt");
constexpr int kJobTimeout = 120000;

// The calling thread's CPU time, in microseconds.
qint64 threadCpuUs();

// Measures the longest gap between ticks of a 5 ms timer: how long the event loop was blocked.
// Two numbers: the wall-clock gap (what a user feels; on a loaded, niced machine it includes time
// the GUI thread waited for a CPU) and the GUI thread's own CPU time within a gap (the work done
// without returning to the event loop: what the studio controls).
class StallMeter : public QObject {
 public:
  StallMeter();
  // Both include the gap still open when read: the work that ended a wait (a layoutReady signal
  // ends QSignalSpy::wait) happened after the last tick.
  qint64 longest() const;     // wall ms
  qint64 longestCpu() const;  // GUI-thread CPU ms in one gap
  int gapsOver50() const;
  QString longestDetail() const { return longest_detail_; }

 private:
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 longest_ = 0, longest_cpu_ = 0, cpu_start_ = 0;
  rusage ru_start_{};
  QString longest_detail_;
  int over_50_ = 0;
};

// Builds a GraphView value by value: each node has one output.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string type) : type_(std::move(type)) {}
  // A value made by `producer` (-1: none).
  int edge(int producer);
  // A node reading `inputs`; returns its output value.
  int node(const std::string& op, const std::string& module, const std::vector<int>& inputs);
  int graphInput();
  void graphOutput(int value);
  GraphView& graph() { return g_; }

 private:
  std::string type_;
  GraphView g_;
};

// Opens `model` in `w` and waits until it is open; false (and a warning) when it does not load.
bool openAndWait(MainWindow& w, const QString& model);

// A window (1500x940, shown) with `model` open and its TorchScript preview laid out; null (and a
// warning) when it does not load or preview.
std::unique_ptr<MainWindow> openInWindow(const QString& model = kSample);

// `dir`/net.pt, a copy of the sample, with `preset_json` beside it as net.preset.json; returns
// the model's path.
QString sampleWithPreset(const QString& dir, const QByteArray& preset_json);

// main(): settings (session, recent files) in a throw-away folder, not the user's.
template <class Test>
int runIsolated(int argc, char** argv, const char* app_name) {
  QTemporaryDir config;
  qputenv("XDG_CONFIG_HOME", config.path().toUtf8());
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("oxport-test"));
  QApplication::setApplicationName(QString::fromLatin1(app_name));
  Test test;
  return QTest::qExec(&test, argc, argv);
}

}  // namespace oxport::studio::test
