// oxport: the command-line main. All logic lives in oxport::runCli (cli/).
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "oxport/cli.h"

int main(int argc, char** argv) {
  // A write past the file-size limit (ulimit -f) must fail with EFBIG, which the atomic writer
  // reports ("File too large") before removing its temporary file, instead of SIGXFSZ ending
  // the process mid-write. The supervised child inherits this.
  std::signal(SIGXFSZ, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  return oxport::runCliIsolated(args);
}
