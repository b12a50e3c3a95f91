// Reading an untrusted TorchScript archive in a child process first.
//
// libtorch can crash (segfault, stack overflow, abort) on archives whose zip directory and CRC-32s
// are fine but whose TorchScript code or pickled data is malformed, e.g. one bit flipped in a
// code file's text with the CRC fixed up (found by tests/robustness' mutation run:
// ScriptTypeParser::parseClassConstant on a misspelt `__buffers__`). A crash inside
// torch::jit::load would take the CLI or the studio down with it, so Model::load first runs
// torch::jit::load in a fork()ed child: a crash there becomes the error `load-crashed`, a
// libtorch error becomes `load-failed`, and only a file the child read cleanly is loaded in
// this process. The child also asks every node of every function for its source location,
// which unpickles the saved debug info (`*.debug_pkl`). libtorch indexes that debug info's text
// table without bounds checks, so a damaged index crashes the first lookup at random (heap
// dependent; the child may survive what the parent would not): before loading, the child
// therefore unpickles every debug_pkl itself and checks its indices and ranges
// (`corrupt-model`). The parent polls the CancelToken while it waits (cancel kills the child).
//
// Cost: the archive is parsed twice (the child's copy of the process is copy-on-write).
// With setLoadGuard(LoadGuard::CallerIsolated) (the `oxport` command, which runs its work in a
// supervised child of its own) the debug-info check runs in this process and nothing is forked.
// Set OXPORT_LOAD_PROBE=0 to skip the child and the checks (e.g. under a debugger).
#pragma once

#include <filesystem>

#include <torch/csrc/jit/api/module.h>

#include "oxport/diagnostic.h"
#include "oxport/model.h"
#include "oxport/progress.h"

namespace oxport {

// The source ranges of the saved debug info are unpickled lazily, when a node's file and line are
// first asked for: ask for every node's now (where a crash is still a crash while loading).
void readAllSourceRanges(const torch::jit::Module& m);

// The errors of a file libtorch cannot read (`load-failed`) or whose contents are damaged
// (`corrupt-model`), with their hints.
Error loadFailed(const std::filesystem::path& path, const std::string& why);
Error corruptModel(const std::filesystem::path& path, const std::string& why);

Status probeLoadInChild(const std::filesystem::path& path, const CancelToken& cancel);

}  // namespace oxport
