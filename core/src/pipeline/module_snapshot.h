// Private: a module's state saved before a run of forward and restored after it (the export's
// example run, each reference run), so that every run is a call from the saved state, as the
// exported graph is (see frontend/pass_attribute_writes.h), and the user's model is left as it was.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <torch/script.h>

namespace oxport {

// One slot (attribute) of a module object.
struct ModuleSlot {
  c10::intrusive_ptr<c10::ivalue::Object> object;
  size_t index = 0;
};

// The slots holding tensors (or lists of tensors) that forward may write in place
// (self.avg.mul_(0.9), self.cache[:, :n] = k, a buffer passed to a function that writes it), found
// from the TorchScript of every method of every module type in `m`, with their aliases followed
// through views and containers. Conservative: a value passed to a call or an op the analysis does
// not know counts as written. `known` is false when a method's graph cannot be read (a method
// without a graph).
struct WrittenSlots {
  bool known = false;
  std::vector<ModuleSlot> slots;
};
WrittenSlots writtenTensorSlots(const torch::jit::Module& m);

// Every slot of the module and its submodules as it was, restored on destruction: attributes
// forward assigns (self.count += 1, self.cache = x) are set back; the tensors forward may write in
// place are swapped for copies for the duration (one copy per tensor: a buffer shared by two
// modules stays shared). When the written slots are not known, every buffer up to 64 MiB is copied.
class ModuleSnapshot {
 public:
  explicit ModuleSnapshot(torch::jit::Module& m);
  ~ModuleSnapshot();
  ModuleSnapshot(const ModuleSnapshot&) = delete;
  ModuleSnapshot& operator=(const ModuleSnapshot&) = delete;

  using Saved = std::vector<std::pair<c10::intrusive_ptr<c10::ivalue::Object>, std::vector<c10::IValue>>>;
  const Saved& saved() const { return saved_; }
  size_t copiedBytes() const { return copied_bytes_; }

 private:
  void save(const c10::intrusive_ptr<c10::ivalue::Object>& obj);
  Saved saved_;
  size_t copied_bytes_ = 0;
};

}  // namespace oxport
