// The `oxport` command line, as a function so tests can drive it in-process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace oxport {

// args excludes the program name. Exit codes: 0 success, 1 the export (or check) failed,
// 2 usage error.
int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// What the `oxport` program runs: runCli on std::cout/std::cerr, but the commands that load a model
// (export, verify, inspect, info) run in a fork()ed child that this process waits for. If libtorch
// crashes on a malformed file (or anything else kills the child), the parent reports it as an
// error (`load-crashed`, `crashed`, `killed`, `interrupted`), removes the temporary files of the
// unfinished write and writes the --report; an earlier output file is never touched. Since the
// child is isolated, Model::load reads the model once (LoadGuard::CallerIsolated).
// OXPORT_ISOLATE=0 runs everything in this process (e.g. under a debugger). It does not return:
// the process ends with the command's exit status without libtorch's static destructors or the
// heap's teardown (its outputs are complete by then), which took half a second or more.
[[noreturn]] int runCliIsolated(const std::vector<std::string>& args);

}  // namespace oxport
