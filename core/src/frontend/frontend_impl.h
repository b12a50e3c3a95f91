// Private to the frontend: the Frontend object behind runFrontend and the state of its example
// run. Its member functions are defined by job:
//   frontend.cpp      run(): inline, bake the arguments, the TorchScript rewrites, then the rest
//   example_run.cpp   the example run: meta first, then real; If, Loop, what is static
//   execute_node.cpp  one node on the example values (prim ops, list ops, libtorch kernels)
//   unroll.cpp        graph_mode "trace": If and Loop replaced by the path the example takes
//   lower.cpp         lowering the run graph and its example values to the core's ts IR
// Sees libtorch; included only by those files.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "frontend/frontend.h"
#include "frontend/jit_util.h"
#include "pipeline/model_impl.h"

namespace oxport {

namespace jit = torch::jit;

// Everything the example run knows about the graph it runs: its inputs, how it runs, and what it
// learned of each value. A fallback from the meta run to the real one restarts it from its inputs.
struct ExampleRun {
  // Inputs: the example tensors of the graph's inputs after self, in order (bakeArguments).
  std::vector<at::Tensor> inputs;

  // How it runs.
  bool meta_mode = false;   // dynamic values are meta tensors (see exampleRunMetaFirst)
  std::string description;  // "meta", or "real (...)" and why (FrontendResult::example_run)
  int shadow_depth = 0;     // > 0 while running a branch not taken, for its metadata

  // What it learned of each value.
  std::unordered_map<jit::Value*, c10::IValue> env;  // example values (activations freed when dead)
  std::unordered_set<jit::Value*> statics;           // values that do not depend on the inputs
  // Static values written in place by an op with an input-dependent operand (isolateFoldedWrite):
  // folded as they were before the write; their later readers depend on the inputs.
  std::unordered_set<jit::Value*> overwritten;
  // Such writes into a module's tensor (a buffer), by the tensor written: a later read of the
  // attribute (self.avg again) reads the write's result.
  std::vector<std::pair<at::Tensor, jit::Value*>> attribute_writes;
  std::unordered_map<jit::Value*, std::string> paths;  // attribute paths from self (parameters)
  std::unordered_map<jit::Value*, ts::TensorMeta> meta;
  std::unordered_map<jit::Value*, std::vector<ts::TensorMeta>> elem_meta;  // lists and tuples of tensors
  std::unordered_map<jit::Value*, ts::Constant> scalar_example;            // dynamic numbers

  std::unordered_set<jit::Node*> executed;            // trace mode: nodes run (never destroyed)
  std::unordered_set<std::string> warned_unrolled;    // trace mode: constructs already reported
  std::unordered_set<jit::Node*> dropped_asserts;     // asserts on shapes the example inputs pass
  // Checks on the inputs' values that the example inputs pass (isCheck): the branch kept; the
  // raising one is left out of the file, as torch.onnx leaves it out.
  std::unordered_map<jit::Node*, size_t> dropped_checks;
  std::unordered_set<std::string> warned_checks;  // data-check-dropped: one warning per check's line
  // script mode: loops replaced by copies and appends replaced by new lists (unroll.cpp), destroyed after the run
  std::vector<jit::Node*> unrolled_loops;
  // Values that later nodes read in place of an element (forwardsElement): their last use moved.
  std::unordered_set<jit::Value*> kept_alive;
  // runIf: whether a branch of the If writes a list or dict made outside it (writesOuterList),
  // found once per If rather than at each run of it (an if inside a loop runs every iteration).
  std::unordered_map<const jit::Node*, bool> writes_outer_list;
  std::vector<Diagnostic> warnings;

  // Back to the state before the run; the inputs stay.
  void restart() {
    std::vector<at::Tensor> kept = std::move(inputs);
    *this = ExampleRun();
    inputs = std::move(kept);
  }
};

class Frontend {
 public:
  Frontend(const jit::Module& module, const ExampleArgs& args, const ExportOptions& options,
           const ProgressFn& progress, const CancelToken& cancel, const ValueObserver* observer = nullptr)
      : module_(module), args_(args), options_(options), progress_(progress), cancel_(cancel),
        observer_(observer) {}

  Result<FrontendResult> run();

 private:
  // frontend.cpp
  void report(Phase p, double f, const std::string& m);
  Status bakeArguments();
  jit::Value* materialize(jit::Graph& g, const c10::IValue& v, const std::string& name);
  Status checkArgType(const c10::TypePtr& declared, const c10::IValue& v, const std::string& name);

  // example_run.cpp
  Status exampleRunMetaFirst();
  void runOp(jit::Node* n, jit::Operation& op, jit::Stack& stack);
  Status exampleRun();
  Status step(jit::Node* n);
  std::string nestedMessage(const jit::Node* n, const jit::Value* v) const;
  Status stepNode(jit::Node* n);
  Status runBlock(jit::Block* b);
  void runForMetas(jit::Block* b);
  Status runIf(jit::Node* n);
  Status runLoop(jit::Node* n);
  void recordMeta(jit::Value* v);
  bool hasStaticLength(const jit::Value* v) const;
  void warnBranchOnSizes(const jit::Node* n, bool cond);

  // execute_node.cpp
  c10::IValue trainingFlag(const c10::IValue& obj) const;
  Status execute(jit::Node* n);
  void isolateFoldedWrite(jit::Node* n, jit::Stack& stack);
  bool readWrittenAttribute(jit::Node* n);
  Status executeListOp(jit::Node* n);
  Error nodeError(const jit::Node* n, std::string code, std::string msg, std::string hint = {}) const;

  // unroll.cpp
  Status runUnrolling(jit::Node* n, jit::Node* end);
  void freeIfDead(jit::Value* v);
  Result<jit::Node*> unrollIf(jit::Node* n);
  Result<jit::Node*> unrollLoop(jit::Node* n);
  bool inlinedBlock(const jit::Block* b) const;
  bool unrollsStaticLoop(jit::Node* n) const;
  Status unrollStaticLoop(jit::Node* n);
  bool unrollsRankLoop(jit::Node* n) const;
  Status unrollRankLoop(jit::Node* n);
  Result<bool> appendAsNewList(jit::Node* n);
  Result<bool> forwardsElement(jit::Node* n);
  void warnUnrolled(const jit::Node* n, const std::string& what);

  // lower.cpp
  ts::Value* tsValue(jit::Value* v);
  bool fromWeights(jit::Value* v);
  bool recordedLiteral(jit::Value* v);
  void fillValue(ts::Value* tv, jit::Value* v);
  ts::Value* lookup(jit::Value* v);
  Status lowerNodes(jit::Block* b, std::vector<ts::Node*>& out);
  Result<FrontendResult> lower();
  void warnDroppedAssert(const jit::Node* n);
  void warnDroppedCheck(const jit::Node* n);

  const jit::Module& module_;
  const ExampleArgs& args_;
  const ExportOptions& options_;
  const ProgressFn& progress_;
  const CancelToken& cancel_;
  const ValueObserver* observer_ = nullptr;

  std::shared_ptr<jit::Graph> graph_;
  std::string nested_refusal_;  // why lowerNestedFastPath left a nested op as it was
  ExampleRun run_;
  // Tensors that do not depend on the inputs (buffers among them) as they were before the run
  // first wrote into them in place: put back before a rerun (the meta run's fallback), so a
  // buffer updated in forward is not updated twice.
  std::vector<std::pair<at::Tensor, at::Tensor>> written_statics_;

  // Lowering.
  std::unique_ptr<ts::Graph> out_;
  std::unordered_map<jit::Value*, ts::Value*> map_;
  std::vector<ts::Value*> param_inputs_;
  std::unordered_set<jit::Node*> weight_views_;  // folded views lowered as nodes (weight_views.h)
  std::unordered_map<jit::Value*, bool> from_weights_;  // memo of fromWeights
  RecordedLiterals recorded_literals_;                  // FrontendResult::recorded_literals
  std::unordered_map<jit::Value*, bool> recorded_literal_memo_;  // memo of recordedLiteral
  bool warned_assert_ = false;
};

}  // namespace oxport
