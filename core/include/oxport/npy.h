// NumPy .npy files: example inputs from the user and tensors exchanged with the runtime.
#pragma once

#include <filesystem>

#include "oxport/diagnostic.h"
#include "oxport/tensor.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

Result<HostTensor> readNpy(const std::filesystem::path& file);
Status writeNpy(const std::filesystem::path& file, const HostTensor& t);

}  // namespace oxport
OXPORT_API_END
