// The floor of any exporter: load the TorchScript file and run forward once on the example input.
// usage: oxport-bench-floor MODEL.pt D0xD1x...   (float32 randn input, seed 0)
#include <torch/script.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.pt D0xD1x...\n", argv[0]);
    return 2;
  }
  using Clock = std::chrono::steady_clock;
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
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("{\"load_ms\": %.3f, \"forward_ms\": %.3f}\n", ms(t0, t1), ms(t1, t2));
  return y.isNone() ? 1 : 0;
}
