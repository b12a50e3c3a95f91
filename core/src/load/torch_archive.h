// Checks a TorchScript archive (the zip file torch.jit.save writes) before libtorch reads it.
// No libtorch: part of oxport_base, so it can be unit-tested and fuzzed alone.
//
// libtorch reads the zip directory it is given with few checks: it does not verify the CRC-32
// of stored (uncompressed) entries, so a damaged weight file loads silently with wrong weights,
// and its messages for archives that are not TorchScript are internal ("[enforce fail at
// inline_container.cc:129] ."). checkTorchScriptArchive reads the zip directory itself and
// reports, in words a user can act on:
//   not-torchscript       not a zip file, or a zip without <folder>/data.pkl
//   saved-with-torch-save a zip from torch.save (tensors or a pickled object, no TorchScript code)
//   corrupt-model         truncated or damaged: no end-of-directory record, a directory or entry
//                         that runs past the end of the file, a bad header, a CRC-32 mismatch
// It streams the file once (CRC-32 of every stored entry; deflated entries are CRC-checked by
// libtorch's zip reader when it inflates them) and holds only the directory in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"

namespace oxport {

struct ArchiveEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint64_t data_offset = 0;  // where the entry's bytes start (after its local header)
};

// The entries of the zip directory, checked for consistency with the file's size (no CRCs).
Result<std::vector<ArchiveEntry>> readZipDirectory(const std::filesystem::path& path);

// The whole check described above.
Status checkTorchScriptArchive(const std::filesystem::path& path);

// CRC-32 (the zip/zlib polynomial), continuing from `crc` (0 to start).
uint32_t crc32Update(uint32_t crc, const void* data, size_t n);

}  // namespace oxport
