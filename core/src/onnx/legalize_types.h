// Legalizing element types: ONNX ops accept only some types per opset (Conv takes no bfloat16
// before opset 22; many ops take no float16 or bfloat16 at low opsets), while a float16/bfloat16
// model computes every op in its own type. The pass runs such an op in float32 between Casts; ops on
// int8/uint8/int16 tensors that the opset takes only for wider integers run in int32.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_ir.h"
#include "oxport/diagnostic.h"

namespace oxport::onnx_ir {

struct LegalizedOp {
  std::string op_type;
  std::string from;  // "bfloat16"
  std::string to;    // "float32", or "int32" for int8/uint8/int16
  int count = 0;
};

// For each node of the model (ai.onnx domain; If/Loop/Scan bodies included) whose input type is
// not allowed by the op's schema at the model's opset while its wider type is (float32 for
// float16/bfloat16, int32 for int8/uint8/int16), casts the inputs bound to that type parameter to
// the wider type and the outputs bound to it back. Only models where such a value can appear are
// looked at (a cheap check first). Returns what was rewritten, per op type and type.
Result<std::vector<LegalizedOp>> legalizeTypes(Model& model);

}  // namespace oxport::onnx_ir
