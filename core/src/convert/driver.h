// The per-node conversion loop: registry lookup, opset checks, and the fallback forms of
// ONNX_FALLTHROUGH / ONNX_ATEN / ONNX_ATEN_FALLBACK. Used by the exporter for the top-level graph
// and by the prim::If / prim::Loop converters for the bodies of their blocks.
#pragma once

#include <string>
#include <vector>

#include "convert/context.h"
#include "oxport/progress.h"

namespace oxport::convert {

// Converts `nodes` in order into the context's current target graph. Every node is tried (a
// node whose input came from a failed node is skipped); all errors are returned together.
// Fallback warnings (an op kept as a custom or ATen node) go to `warnings`. `progress` and
// `cancel` may be null (nested blocks).
Status convertNodes(Context& ctx, const std::vector<const ts::Node*>& nodes, std::vector<Diagnostic>& warnings,
                    const ProgressFn* progress = nullptr, const CancelToken* cancel = nullptr);

// The fallback node for `n` (a custom-domain node org.pytorch.<ns>::<op>, or ATen when
// `aten_form`): dynamic inputs stay inputs, static arguments become attributes.
Status emitFallback(Context& ctx, const ts::Node& n, bool aten_form);

}  // namespace oxport::convert
