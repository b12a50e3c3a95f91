// Atomic file writes: write to a temporary file beside the target, fsync, rename over it.
// A failure or cancellation leaves any earlier file of that name untouched.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

#include "oxport/diagnostic.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

Status writeFileAtomically(const std::filesystem::path& target,
                           const std::function<Status(std::ostream&)>& write);
Status writeFileAtomically(const std::filesystem::path& target, std::string_view contents);

}  // namespace oxport
OXPORT_API_END
