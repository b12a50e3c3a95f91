// Building an ONNX Loop whose body is emitted through the Context: the iteration number, the
// condition (passed through: the Loop runs its trip count), the carried values and scan outputs.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "convert/context.h"

namespace oxport::convert {

class LoopBody {
 public:
  // Starts the body: until run(), nodes emitted through ctx go into it (so emit the trip count and
  // the initial values first).
  LoopBody(Context& ctx, const std::string& name);
  LoopBody(const LoopBody&) = delete;
  LoopBody& operator=(const LoopBody&) = delete;
  ~LoopBody();

  // The iteration number (0-d int64).
  const std::string& iteration() const { return iteration_; }
  // The next carried value's name inside the body (its shape left open).
  std::string input(const std::string& base, DType dt);
  // Ends the body with `outputs` (the carried values' next values in input order, then scan
  // outputs) and emits Loop(trips, true, initial...) in the enclosing graph: the carried values'
  // final values, then the scan outputs stacked over iterations.
  std::vector<std::string> run(const std::string& trips, const std::vector<std::string>& initial,
                               const std::vector<std::pair<std::string, DType>>& outputs);

 private:
  Context& ctx_;
  std::shared_ptr<onnx_ir::Graph> graph_;
  std::string iteration_, cond_;
  bool open_ = true;
};

}  // namespace oxport::convert
