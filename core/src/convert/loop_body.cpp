#include "convert/loop_body.h"

namespace oxport::convert {

namespace {

std::string addInput(Context& ctx, onnx_ir::Graph& g, const std::string& base, DType dt, bool scalar) {
  g.inputs.push_back(onnx_ir::ValueInfo{ctx.uniqueName(base), dt, false, scalar, {}});  // scalar: shape []
  return g.inputs.back().name;
}

}  // namespace

LoopBody::LoopBody(Context& ctx, const std::string& name) : ctx_(ctx), graph_(std::make_shared<onnx_ir::Graph>()) {
  graph_->name = ctx.uniqueName(name);
  ctx.pushGraph(graph_.get());
  iteration_ = addInput(ctx, *graph_, name + "_i", DType::Int64, true);
  cond_ = addInput(ctx, *graph_, name + "_cond", DType::Bool, true);
}

LoopBody::~LoopBody() {
  if (open_) ctx_.popGraph();
}

std::string LoopBody::input(const std::string& base, DType dt) { return addInput(ctx_, *graph_, base, dt, false); }

std::vector<std::string> LoopBody::run(const std::string& trips, const std::vector<std::string>& initial,
                                       const std::vector<std::pair<std::string, DType>>& outputs) {
  std::string cond_out = ctx_.emit1("Identity", {cond_});
  ctx_.popGraph();
  open_ = false;
  auto output = [&](const std::string& name, DType dt) {
    onnx_ir::ValueInfo vi;
    vi.name = name;
    vi.dtype = dt;
    graph_->outputs.push_back(vi);
  };
  output(cond_out, DType::Bool);
  for (const auto& [name, dt] : outputs) output(name, dt);
  std::vector<std::string> ins{trips, ctx_.cast(ctx_.constInt64s({1}, true), DType::Bool)};
  ins.insert(ins.end(), initial.begin(), initial.end());
  return ctx_.emit("Loop", ins, static_cast<int>(outputs.size()), {Attribute{"body", graph_}});
}

}  // namespace oxport::convert
