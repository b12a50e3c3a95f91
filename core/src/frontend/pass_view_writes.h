// Private: rewriting in-place writes into views (`y[:, i] = v`, `m[a:b, c:d] = k`,
// `x[idx] += 1`, fill_/copy_/zero_/add_/masked_fill_/clamp_ on a slice, select, narrow, view)
// into functional form, on the TorchScript graph before the example run.
#pragma once

#include <memory>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "oxport/diagnostic.h"

namespace oxport {

// For each in-place op whose target is a chain of views of a base tensor defined in the same
// block: the op runs out of place on the view, the result is scattered back through the chain
// (slice_scatter, select_scatter, the inverse of view/transpose/permute/(un)squeeze), and every
// later read of the base or of any view of it reads the new value. A write inside a scripted If
// or Loop into a tensor made outside it is carried out (a new If output, a new loop-carried value
// that every iteration reads), and an in-place op on a whole tensor inside such a block, or with a
// view of it read afterwards, is rewritten the same way. Writes the pass cannot express (through
// expand, as_strided, diagonal, unfold; in other kinds of blocks; an op without a functional
// form) are left as they are; the converters then refuse them with inplace-view-write. Returns
// the number of writes rewritten. A write into a view of a module's tensor (self.cache[:, :n] = k)
// is rewritten the same way, every later read of the attribute reading the new value; the new value
// is not kept for the next call (warning attribute-write-dropped, added to `warnings`).
int functionalizeViewWrites(torch::jit::Graph& g, std::vector<Diagnostic>* warnings = nullptr);

}  // namespace oxport
