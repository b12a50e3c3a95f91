#include "taskrunner.h"

#include <QDeadlineTimer>
#include <mutex>

namespace oxport::studio {

TaskRunner::TaskRunner(QObject* parent) : QObject(parent) {
  thread_.setObjectName(QStringLiteral("oxport-core"));
  worker_ = new QObject;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.start();
}

TaskRunner::~TaskRunner() {
  cancel();
  thread_.quit();
  thread_.wait();
}

void TaskRunner::cancel(int id) {
  if (id < 0) {
    for (const auto& t : std::as_const(tokens_)) t.cancel();
  } else if (auto it = tokens_.find(id); it != tokens_.end()) {
    it->cancel();
  }
}

ProgressFn TaskRunner::progressFor(int id) {
  // Called on the worker thread. Posts at most every 30 ms, plus every phase change and end.
  struct State {
    std::mutex m;
    QElapsedTimer clock;
    int phase = -1;
  };
  auto state = std::make_shared<State>();
  QPointer<TaskRunner> self(this);
  return [self, id, state](Phase phase, double fraction, const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(state->m);
      const int p = static_cast<int>(phase);
      const bool due = !state->clock.isValid() || state->clock.elapsed() >= 30 || p != state->phase ||
                       fraction >= 1.0;
      if (!due) return;
      state->clock.start();
      state->phase = p;
    }
    QString text = QString::fromStdString(message);
    QMetaObject::invokeMethod(
        self.data(),
        [self, id, phase, fraction, text]() {
          if (self) emit self->progress(id, static_cast<int>(phase), fraction, text);
        },
        Qt::QueuedConnection);
  };
}

void TaskRunner::started(int id) {
  running_ = id;
  emit jobStarted(id, titles_.value(id));
}

void TaskRunner::finished(int id) {
  if (running_ == id) running_ = -1;
  tokens_.remove(id);
  emit jobFinished(id);
  titles_.remove(id);
  if (tokens_.isEmpty()) emit busyChanged(false);
}

}  // namespace oxport::studio
