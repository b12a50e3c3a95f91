#include "settingswriter.h"

#include <QSettings>

namespace oxport::studio {

SettingsWriter::SettingsWriter(QObject* parent) : QObject(parent) {
  thread_.setObjectName(QStringLiteral("oxport-settings"));
  worker_ = new QObject;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.start(QThread::LowPriority);
}

SettingsWriter::~SettingsWriter() {
  flush();
  thread_.quit();
  thread_.wait();
}

void SettingsWriter::write(std::vector<std::pair<QString, QVariant>> batch) {
  for (const auto& [key, v] : batch) written_.insert(key, v);
  QMetaObject::invokeMethod(
      worker_,
      [batch = std::move(batch)] {
        QSettings s;  // organization and application names are process-wide
        for (const auto& [key, v] : batch) {
          if (v.isValid()) s.setValue(key, v);
          else s.remove(key);
        }
        s.sync();
      },
      Qt::QueuedConnection);
}

QVariant SettingsWriter::value(const QString& key) const {
  if (auto it = written_.find(key); it != written_.end()) return *it;
  return QSettings().value(key);
}

void SettingsWriter::flush() {
  if (!thread_.isRunning()) return;
  QMetaObject::invokeMethod(worker_, [] {}, Qt::BlockingQueuedConnection);
}

}  // namespace oxport::studio
