// Shared by the recurrent-layer converters (ops_rnn.cpp, ops_rnn_projection.cpp).
#pragma once

#include <string>
#include <vector>

#include "convert/context.h"

namespace oxport::convert {

// Binds a recurrent op's outputs from the time-major output y [T, B, D*H] and the final states
// per layer and direction ([1, B, H] each; cs empty for GRU/RNN): batch_first transposes y, an
// unbatched call drops the batch axis, states are concatenated to [L*D, B, H].
Status bindRecurrentOutputs(Context& ctx, const Node& n, const std::string& y, const std::vector<std::string>& hs,
                            const std::vector<std::string>& cs, bool unbatched, bool batch_first);

// aten::lstm (.input overload) with proj_size > 0: params hold a projection weight w_hr per layer
// and direction; ONNX LSTM has no projection, so the recurrence runs as an ONNX Loop over time
// (ops_rnn_projection.cpp).
Status convertLstmProjected(Context& ctx, const Node& n);

}  // namespace oxport::convert
