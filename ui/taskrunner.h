// Runs core calls (load, inspect, export, verify) one after another on a worker thread.
//
// The core takes a ProgressFn and a CancelToken; the runner turns progress into queued signals
// (throttled) and hands each result back on the GUI thread. Destroying the runner cancels every
// job, stops the thread and waits for it, so no callback outlives its window.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "oxport/diagnostic.h"
#include "oxport/progress.h"

namespace oxport::studio {

class TaskRunner : public QObject {
  Q_OBJECT

 public:
  explicit TaskRunner(QObject* parent = nullptr);
  ~TaskRunner() override;

  // Queues `work` on the worker thread; `done` runs on this object's thread with the result.
  // R must be constructible from oxport::Error (a Result<T>): a job cancelled before it starts
  // gets Error("cancelled", ...) without running.
  template <class R>
  int run(const QString& title, std::function<R(const ProgressFn&, const CancelToken&)> work,
          std::function<void(R&)> done);

  // Cancels one job, or every queued and running job when id < 0.
  void cancel(int id = -1);
  bool busy() const { return !tokens_.isEmpty(); }
  int runningJob() const { return running_; }
  QString title(int id) const { return titles_.value(id); }

 signals:
  void jobStarted(int id, const QString& title);
  void progress(int id, int phase, double fraction, const QString& message);
  void jobFinished(int id);
  void busyChanged(bool busy);

 private:
  ProgressFn progressFor(int id);
  void started(int id);
  void finished(int id);

  QThread thread_;
  QObject* worker_ = nullptr;  // lives in thread_; receives the queued jobs
  QHash<int, CancelToken> tokens_;
  QHash<int, QString> titles_;
  int next_ = 0;
  int running_ = -1;
};

template <class R>
int TaskRunner::run(const QString& title, std::function<R(const ProgressFn&, const CancelToken&)> work,
                    std::function<void(R&)> done) {
  const int id = ++next_;
  CancelToken token;
  const bool was_busy = busy();
  tokens_.insert(id, token);
  titles_.insert(id, title);
  if (!was_busy) emit busyChanged(true);
  ProgressFn progress = progressFor(id);
  QPointer<TaskRunner> self(this);
  QMetaObject::invokeMethod(
      worker_,
      [self, id, token, progress, work = std::move(work), done = std::move(done)]() {
        if (!self) return;
        QMetaObject::invokeMethod(self.data(), [self, id]() { if (self) self->started(id); }, Qt::QueuedConnection);
        auto result = std::make_shared<std::optional<R>>();
        if (token.cancelled())
          result->emplace(Error("cancelled", "Cancelled before it started."));
        else
          result->emplace(work(progress, token));
        QMetaObject::invokeMethod(
            self.data(),
            [self, id, result, done]() {
              if (!self) return;
              self->finished(id);
              done(**result);
            },
            Qt::QueuedConnection);
      },
      Qt::QueuedConnection);
  return id;
}

}  // namespace oxport::studio
