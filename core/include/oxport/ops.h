// What converts: generated from the converter registry itself.
#pragma once

#include <string>
#include <vector>

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

struct OpSupport {
  std::string kind;     // "aten::conv2d"
  int min_opset = 0;    // lowest opset with a converter
  int max_opset = 0;    // highest
  std::vector<int> opsets;  // every opset in [9, 17] at which it converts
  std::string family;   // converter file family: "conv", "activation" ...
};

std::vector<OpSupport> supportedOps();

}  // namespace oxport
OXPORT_API_END
