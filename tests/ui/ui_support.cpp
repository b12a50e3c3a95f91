#include "ui_support.h"

#include <QDir>
#include <QFile>
#include <QPlainTextEdit>

#include <ctime>

#include "graphpreview.h"
#include "mainwindow.h"

namespace oxport::studio::test {

qint64 threadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return qint64(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

StallMeter::StallMeter() {
  timer_.setInterval(5);
  QObject::connect(&timer_, &QTimer::timeout, this, [this] {
    const qint64 cpu = threadCpuUs();
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    if (clock_.isValid()) {
      const qint64 wall = clock_.elapsed();
      if (wall > longest_) {
        // What the thread did in the longest gap: ran, blocked (voluntary switches: waiting on a
        // lock or I/O) or was preempted (involuntary: waiting for a CPU).
        longest_detail_ = QString::asprintf("%lld ms CPU, %ld voluntary / %ld involuntary context switches",
                                            (cpu - cpu_start_) / 1000, ru.ru_nvcsw - ru_start_.ru_nvcsw,
                                            ru.ru_nivcsw - ru_start_.ru_nivcsw);
      }
      longest_ = std::max(longest_, wall);
      longest_cpu_ = std::max(longest_cpu_, (cpu - cpu_start_) / 1000);
      if (wall > 50) ++over_50_;
    }
    clock_.start();
    cpu_start_ = cpu;
    ru_start_ = ru;
  });
  timer_.start();
}

qint64 StallMeter::longest() const { return std::max(longest_, clock_.isValid() ? clock_.elapsed() : 0); }

qint64 StallMeter::longestCpu() const {
  return std::max(longest_cpu_, clock_.isValid() ? (threadCpuUs() - cpu_start_) / 1000 : 0);
}

int StallMeter::gapsOver50() const { return over_50_ + (clock_.isValid() && clock_.elapsed() > 50 ? 1 : 0); }

int GraphBuilder::edge(int producer) {
  GraphViewEdge e;
  e.id = static_cast<int>(g_.edges.size());
  e.name = "v" + std::to_string(e.id);
  e.type = type_;
  e.producer = producer;
  g_.edges.push_back(e);
  return e.id;
}

int GraphBuilder::node(const std::string& op, const std::string& module, const std::vector<int>& inputs) {
  GraphViewNode n;
  n.id = static_cast<int>(g_.nodes.size());
  n.name = "%" + std::to_string(n.id);
  n.op = op;
  n.module_path = module;
  n.inputs = inputs;
  const int out = edge(n.id);
  n.outputs = {out};
  for (int i : inputs) g_.edges[static_cast<size_t>(i)].consumers.push_back(n.id);
  g_.nodes.push_back(std::move(n));
  return out;
}

int GraphBuilder::graphInput() {
  const int x = edge(-1);
  g_.edges[static_cast<size_t>(x)].is_graph_input = true;
  g_.inputs.push_back(x);
  return x;
}

void GraphBuilder::graphOutput(int value) {
  g_.edges[static_cast<size_t>(value)].is_graph_output = true;
  g_.outputs.push_back(value);
}

bool openAndWait(MainWindow& w, const QString& model) {
  QSignalSpy loaded(&w, &MainWindow::modelLoaded);
  w.openModel(model);
  if (loaded.wait(kJobTimeout) && loaded.first().first().toBool()) return true;
  qWarning("%s did not load: %s", qPrintable(model), qPrintable(w.lastError()));
  return false;
}

std::unique_ptr<MainWindow> openInWindow(const QString& model) {
  auto w = std::make_unique<MainWindow>();
  w->resize(1500, 940);  // the offscreen screen is small; lay the docks out for a desktop size
  w->show();
  QSignalSpy preview(w.get(), &MainWindow::previewUpdated);
  QSignalSpy laid(w->torchPreview(), &GraphPreview::layoutReady);
  if (!openAndWait(*w, model)) return nullptr;
  if (!preview.count() && !preview.wait(kJobTimeout)) return nullptr;
  if (!preview.first().first().toBool()) {
    auto* log = w->findChild<QPlainTextEdit*>("log");
    qWarning("preview failed: %s", log ? qPrintable(log->toPlainText()) : "");
    return nullptr;
  }
  if (!laid.count() && !laid.wait(kJobTimeout)) return nullptr;
  return w;
}

QString sampleWithPreset(const QString& dir, const QByteArray& preset_json) {
  QDir().mkpath(dir);
  const QString model = dir + "/net.pt";
  QFile::remove(model);
  if (!QFile::copy(kSample, model)) qWarning("cannot copy the sample to %s", qPrintable(model));
  QFile preset(dir + "/net.preset.json");
  if (preset.open(QIODevice::WriteOnly | QIODevice::Truncate)) preset.write(preset_json);
  return model;
}

}  // namespace oxport::studio::test
