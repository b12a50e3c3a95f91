// The floor of any exporter.
// usage: oxport-bench-floor MODEL.pt D0xD1x...    load the TorchScript file and run forward once on
//                                                 the example input (float32 randn, seed 0)
//        oxport-bench-floor --write OUT MODEL.pt  load it and write the bytes of its weights (each
//                                                 tensor once) to OUT as oxport writes a file:
//                                                 a temporary file, fsync, rename; with the
//                                                 write-behind oxport's writer uses (every 16 MiB
//                                                 handed to the disk, 32 MiB back waited for and
//                                                 dropped from the page cache), the disk's speed
//                                                 under memory pressure: plain write(2)s of GBs
//                                                 get throttled (docs/BENCHMARKS.md)
#include <fcntl.h>
#include <unistd.h>

#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

int writeWeights(const char* out, const char* model) {
  auto t0 = Clock::now();
  torch::jit::Module m = torch::jit::load(model);
  auto t1 = Clock::now();
  const std::string tmp = std::string(out) + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  std::set<const void*> seen;  // tied weights are one tensor
  int64_t bytes = 0;
  constexpr off_t kWindow = off_t(16) << 20;
  off_t kicked = 0, dropped = 0;
  auto behind = [&] {
    while (bytes - kicked >= kWindow) {
      ::sync_file_range(fd, kicked, kWindow, SYNC_FILE_RANGE_WRITE);
      kicked += kWindow;
      for (; kicked - dropped > 2 * kWindow; dropped += kWindow) {
        ::sync_file_range(fd, dropped, kWindow,
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        ::posix_fadvise(fd, dropped, kWindow, POSIX_FADV_DONTNEED);
      }
    }
  };
  auto put = [&](const at::Tensor& t0) {
    at::Tensor t = t0.contiguous();
    if (!seen.insert(t.data_ptr()).second) return true;
    const char* p = static_cast<const char*>(t.data_ptr());
    size_t left = static_cast<size_t>(t.numel()) * t.element_size();
    while (left > 0) {
      ssize_t w = ::write(fd, p, std::min<size_t>(left, size_t(kWindow)));
      if (w <= 0) return false;
      p += w;
      left -= static_cast<size_t>(w);
      bytes += w;
      behind();
    }
    return true;
  };
  bool ok = true;
  for (const auto& p : m.named_parameters(true)) ok = ok && put(p.value);
  for (const auto& b : m.named_buffers(true)) ok = ok && put(b.value);
  ok = ok && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), out) == 0;
  auto t2 = Clock::now();
  std::printf("{\"load_ms\": %.3f, \"write_ms\": %.3f, \"bytes\": %lld}\n", ms(t0, t1), ms(t1, t2),
              static_cast<long long>(bytes));
  std::fflush(stdout);
  std::_Exit(ok ? 0 : 1);  // as oxport's export child: no teardown of the heap
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--write") return writeWeights(argv[2], argv[3]);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.pt D0xD1x...\n       %s --write OUT MODEL.pt\n", argv[0], argv[0]);
    return 2;
  }
  std::vector<int64_t> shape;
  std::stringstream ss(argv[2]);
  for (std::string d; std::getline(ss, d, 'x');) shape.push_back(std::stoll(d));
  auto t0 = Clock::now();
  torch::jit::Module m = torch::jit::load(argv[1]);
  m.eval();
  auto t1 = Clock::now();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(0);
  torch::NoGradGuard no_grad;
  at::Tensor x = at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat));
  auto y = m.forward({x});
  auto t2 = Clock::now();
  std::printf("{\"load_ms\": %.3f, \"forward_ms\": %.3f}\n", ms(t0, t1), ms(t1, t2));
  return y.isNone() ? 1 : 0;
}
