// Private: which outputs of an ONNX file depend on nodes whose results ONNX Runtime and libtorch
// cannot agree on element for element:
//   - random nodes (RandomNormal/Uniform(Like), Multinomial, Bernoulli, Dropout in training mode):
//     the two draw different numbers, so such outputs are checked for shape and dtype only;
//   - tie-ordered index nodes (TopK's indices, ArgMax, ArgMin; sort and max(dim) export as these):
//     with equal candidates the two may pick different (equally good) positions.
// And the copies of the file that verification runs to judge the second kind (see tie_order.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"

namespace oxport::verify_detail {

// A main-graph TopK/ArgMax/ArgMin.
struct TieNode {
  std::string name, op_type;
  std::string data;     // its data input
  std::string indices;  // its index output
  std::string k;        // TopK's k input ("" for ArgMax/ArgMin)
  std::string torch_kind;  // the TorchScript op it was made from (aten::sort, aten::max ...), if the file says
  int64_t axis = -1;
  bool largest = true;  // TopK largest / ArgMax (ArgMin: false)
  bool keepdims = true; // ArgMax/ArgMin
  bool select_last = false;
};

struct RandomNode {
  std::string name, op_type;
  std::string where;  // "aten::dropout in encoder.drop (model.py:12)" from the file's torch map, or ""
};

struct OutputDeps {
  std::vector<size_t> ties;     // indices into GraphDeps::ties
  std::vector<size_t> randoms;  // indices into GraphDeps::randoms
};

struct GraphDeps {
  std::vector<TieNode> ties;
  std::vector<RandomNode> randoms;
  std::vector<OutputDeps> outputs;  // per graph output, in order
  bool nested_ties = false;         // a TopK/ArgMax/ArgMin inside an If/Loop body (not judged)
};

Result<GraphDeps> readGraphDeps(const std::filesystem::path& file);

// A copy of `file` with each of the tie nodes' data input and index output appended to the
// graph outputs (named TieNode::data / ::indices).
Status writeTieExposed(const std::filesystem::path& file, const std::vector<TieNode>& ties,
                       const std::filesystem::path& out);
// A copy of `file` in which the tie nodes' index outputs are graph inputs instead (int64, named
// TieNode::indices): the rest of the graph computes from indices the caller gives.
Status writeTieSubstituted(const std::filesystem::path& file, const std::vector<TieNode>& ties,
                           const std::filesystem::path& out);

}  // namespace oxport::verify_detail
