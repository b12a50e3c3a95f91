// The `oxport` command line, as a function so tests can drive it in-process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace oxport {

// args excludes the program name. Exit codes: 0 success, 1 the export (or check) failed,
// 2 usage error.
int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace oxport
