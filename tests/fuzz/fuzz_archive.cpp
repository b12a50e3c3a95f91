// libFuzzer target: oxport's own check of TorchScript zip archives (torch_archive.h), which runs
// before libtorch sees a file. Any bytes must give ok or an Error with a message.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "load/torch_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = ::memfd_create("oxport-fuzz-archive", 0);
  if (fd < 0) std::abort();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  oxport::Status s = oxport::checkTorchScriptArchive(path);
  if (!s.ok() && s.error().first().message.empty()) {
    std::fprintf(stderr, "checkTorchScriptArchive failed without a message\n");
    std::abort();
  }
  return 0;
}
