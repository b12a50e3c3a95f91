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
#include <functional>
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

class DeferredCrcs;

// The whole check described above. With `deferred`, the CRC-32s of the tensor records are left
// to it (below); everything else (the directory, the headers, the other entries' CRC-32s: the
// pickles and code libtorch parses) is checked now.
Status checkTorchScriptArchive(const std::filesystem::path& path, DeferredCrcs* deferred = nullptr);

// The CRC-32s of the tensor records (FOLDER/data/N), checked as libtorch reads them instead of in
// a pass of their own over the file beforehand. libtorch copies those bytes into tensors without
// interpreting them, so nothing needs them checked before it reads them; reading a 1.4 GB model
// twice cost about as much again as libtorch's own read (docs/BENCHMARKS.md).
class DeferredCrcs {
 public:
  // Reads `n` bytes at `offset` of the archive (open as `fd`) into `buf`, as libtorch asks for
  // them: pread(2) in 4 MiB pieces, `stop` asked between pieces (a cancel). A read of exactly one
  // tensor record's bytes checks its CRC-32 on the way, while its pieces are in the cache.
  // Returns the bytes read: fewer at the end of the file, on an error, or when stopped.
  size_t read(int fd, uint64_t offset, void* buf, size_t n, const std::function<bool()>& stop);
  // After the load: the tensor records not read whole through `read` are read from the file and
  // checked here. The first damaged record is the error (corrupt-model, as the whole check says).
  Status finish(const std::filesystem::path& path);

 private:
  friend Status checkTorchScriptArchive(const std::filesystem::path& path, DeferredCrcs* deferred);
  std::vector<ArchiveEntry> entries_;  // the tensor records, by data_offset
  std::vector<uint8_t> state_;         // per entry: 0 not read whole yet, 1 its CRC-32 matches, 2 it fails
};

// CRC-32 (the zip/zlib polynomial), continuing from `crc` (0 to start).
uint32_t crc32Update(uint32_t crc, const void* data, size_t n);

}  // namespace oxport
