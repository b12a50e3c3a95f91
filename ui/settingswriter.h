// Writes the studio's QSettings on a thread of its own. Every QSettings write ends in a sync that
// takes a lock file and calls fdatasync twice; on a busy disk that is tens to hundreds of
// milliseconds, which the GUI thread must not spend (it was the longest stall of an open or an
// export). Writes keep their order; values written but not yet on disk are read back from memory,
// so the window sees its own writes at once.
#pragma once

#include <QHash>
#include <QObject>
#include <QThread>
#include <QVariant>

#include <utility>
#include <vector>

namespace oxport::studio {

class SettingsWriter : public QObject {
  Q_OBJECT

 public:
  explicit SettingsWriter(QObject* parent = nullptr);
  ~SettingsWriter() override;  // flushes: every write made is on disk when it returns

  // One batch, written with one sync. An invalid QVariant removes its key.
  void write(std::vector<std::pair<QString, QVariant>> batch);
  void set(const QString& key, const QVariant& value) { write({{key, value}}); }
  void remove(const QString& key) { write({{key, QVariant()}}); }
  // The value as last written through this object, else as stored.
  QVariant value(const QString& key) const;
  // Blocks until every write so far is on disk.
  void flush();

 private:
  QThread thread_;
  QObject* worker_ = nullptr;
  QHash<QString, QVariant> written_;  // GUI-thread view of what was written
};

}  // namespace oxport::studio
