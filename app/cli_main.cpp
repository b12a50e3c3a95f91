// oxport: the command-line main. All logic lives in oxport::runCli (core/src/cli).
#include <iostream>
#include <string>
#include <vector>

#include "oxport/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return oxport::runCliIsolated(args);
}
