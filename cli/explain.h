// `oxport explain`: the catalogue of diagnostic codes on the command line.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace oxport {

// args are the words after `explain`:
//   CODE                 the entry of one code (exit 2 with near matches when there is none)
//   --all                every entry
//   --markdown           as Markdown; `explain --all --markdown` prints docs/ERRORS.md
int runExplain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace oxport
