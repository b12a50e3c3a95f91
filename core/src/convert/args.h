// How a converter reads the arguments of the node it converts: by the name the operator's schema
// gives them (`args.in("dim", 1)`), not by their place in the input list.
//
// An op's overloads put the same argument at different places or leave it out (add.Tensor has an
// `alpha`, add.int has `a` and `b`; max.dim has `dim`, max.other has `other`; the .vec upsamples
// take `scale_factors` where the others take `scales_h`/`scales_w`), so a name is the robust key.
// The position given with each name is used only when the node carries no schema names (a node
// without a schema: prim:: ops, some nodes built by the frontend's rewrites). An argument whose
// place differs between the overloads a converter takes (reductions' `dim`, std's `correction`) is
// read by name alone: without schema names it is missing.
//
// Variadic nodes stay positional and do not go through Args: the elements of a
// prim::ListConstruct/TupleConstruct, the carried values of prim::Loop and the inputs of
// prim::If have no argument names.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "convert/context.h"

namespace oxport::convert {

// One schema argument name, or the names one argument has in the overloads a converter takes
// (`{"self", "a"}`: add.Tensor calls it self, add.int calls it a). The first name found wins.
class ArgName {
 public:
  ArgName(const char* name) : names_{name} {}  // NOLINT(google-explicit-constructor): a name reads as a name
  ArgName(std::initializer_list<const char*> names) : names_(names) {}
  const std::vector<const char*>& names() const { return names_; }
  std::string label() const;  // "dim", or "self/a"

 private:
  std::vector<const char*> names_;
};

// Thrown by Args::in when the node's overload has no such argument; the driver turns it into the
// diagnostic it carries (converters need not check every read).
struct MissingArgument : std::runtime_error {
  explicit MissingArgument(Diagnostic d) : std::runtime_error(d.message), diagnostic(std::move(d)) {}
  Diagnostic diagnostic;
};

class Args {
 public:
  // "No fallback position": the argument is found by name only.
  static constexpr size_t kByName = static_cast<size_t>(-1);

  Args(Context& ctx, const Node& n) : ctx_(ctx), n_(n) {}

  const Node& node() const { return n_; }
  // True when the node carries schema argument names (an aten node with a schema).
  bool named() const;

  // The input bound to argument `name` (`pos` when the node has no names). Throws MissingArgument,
  // which the driver reports as `unsupported-form` naming the argument and the node.
  Value* in(const ArgName& name, size_t pos) const;
  // Like in(), but nullptr when the node's overload lacks the argument.
  Value* optIn(const ArgName& name, size_t pos = kByName) const;
  // The argument is there and is not None.
  bool has(const ArgName& name, size_t pos = kByName) const;
  // optIn on another node than the one converted: the producer or a user of a value it reads.
  static Value* inputOf(const Node& n, const ArgName& name, size_t pos = kByName);

  // Static values of an argument (errors name the argument, as Context's do).
  Result<int64_t> constInt(const ArgName& name, size_t pos) const { return ctx_.constInt(in(name, pos)); }
  Result<double> constDouble(const ArgName& name, size_t pos) const { return ctx_.constDouble(in(name, pos)); }
  Result<bool> constBool(const ArgName& name, size_t pos) const { return ctx_.constBool(in(name, pos)); }
  Result<std::string> constString(const ArgName& name, size_t pos) const { return ctx_.constString(in(name, pos)); }
  Result<std::vector<int64_t>> constInts(const ArgName& name, size_t pos) const {
    return ctx_.constInts(in(name, pos));
  }
  // The ONNX tensor of an argument (Context::tensor / tensorOfType).
  Result<std::string> tensor(const ArgName& name, size_t pos) const { return ctx_.tensor(in(name, pos)); }
  Result<std::string> tensorOfType(const ArgName& name, size_t pos, DType dt) const {
    return ctx_.tensorOfType(in(name, pos), dt);
  }

 private:
  // Index of the argument in n.inputs, or -1.
  static int index(const Node& n, const ArgName& name, size_t pos);

  Context& ctx_;
  const Node& n_;
};

}  // namespace oxport::convert
