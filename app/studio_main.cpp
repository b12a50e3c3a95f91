// oxport-studio: parses the command line and opens the main window.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>

#include <csignal>
#include <cstdio>

#include "mainwindow.h"
#include "oxport/model.h"

int main(int argc, char** argv) {
  // A write past the file-size limit (ulimit -f) fails with EFBIG and the export reports it
  // ("File too large"), instead of SIGXFSZ closing the studio and losing the session.
  std::signal(SIGXFSZ, SIG_IGN);
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("oxport"));
  QApplication::setApplicationName(QStringLiteral("oxport-studio"));
  QApplication::setApplicationDisplayName(QStringLiteral("oxport Studio"));
  QApplication::setApplicationVersion(QString::fromStdString(oxport::versions().oxport));

  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("Export TorchScript models to ONNX."));
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption preset({QStringLiteral("p"), QStringLiteral("preset")},
                            QStringLiteral("Open this preset (its model is opened too)."), QStringLiteral("file"));
  QCommandLineOption fresh(QStringLiteral("no-session"),
                           QStringLiteral("Do not restore the last session (nor open the sample on a first start)."));
  cli.addOption(preset);
  cli.addOption(fresh);
  cli.addPositionalArgument(QStringLiteral("model"), QStringLiteral("TorchScript model (.pt) or preset (.json) to open."));
  cli.process(app);

  oxport::studio::MainWindow window;
  window.show();
  const QStringList args = cli.positionalArguments();
  QTimer::singleShot(0, &window, [&] {
    if (cli.isSet(preset)) {
      window.openPreset(cli.value(preset));
    } else if (!args.isEmpty()) {
      if (!QFileInfo::exists(args.front()))
        std::fprintf(stderr, "oxport-studio: %s: no such file\n", qPrintable(args.front()));
      window.openPath(args.front());
    } else if (!cli.isSet(fresh)) {
      window.openAtStartup();  // the last session, or the bundled sample on the first start
    }
  });
  return app.exec();
}
