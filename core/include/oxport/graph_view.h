// A read-only view of a graph (TorchScript after the passes, or the written ONNX graph), for the
// CLI's `inspect`, the studio's preview and the layout engine. No libtorch or protobuf types.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "oxport/diagnostic.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

struct GraphViewEdge {
  int id = -1;
  std::string name;        // value name (TorchScript debug name or ONNX tensor name)
  std::string type;        // "Float(1, 3, 224, 224)", "int", "int[]" ...
  int producer = -1;       // node id; -1 for graph inputs and initializers
  std::vector<int> consumers;
  bool is_graph_input = false;
  bool is_graph_output = false;
  bool is_initializer = false;  // constant tensor (weights)
  std::string summary;          // for constants: "float32[64, 3, 7, 7] min -0.2 max 0.3"
};

struct GraphViewNode {
  int id = -1;
  std::string name;         // ONNX node name ("/layer1/layer1.0/conv1/Conv") or TorchScript "%5"
  std::string op;           // "aten::conv2d" or "Conv"
  std::string domain;       // ONNX domain ("" for the default one)
  std::string module_path;  // "layer1.0.conv1"
  SourceLocation location;
  std::vector<int> inputs;   // edge ids (-1 for an absent optional input)
  std::vector<int> outputs;  // edge ids
  std::vector<std::pair<std::string, std::string>> attributes;  // name -> printed value
  std::vector<int> origins;  // ONNX view: ids of the TorchScript nodes this node came from
};

struct GraphView {
  std::string title;
  std::vector<GraphViewNode> nodes;
  std::vector<GraphViewEdge> edges;
  std::vector<int> inputs;   // edge ids
  std::vector<int> outputs;  // edge ids

  // Text form, one node per line with its module path and source line.
  std::string toText() const;
};

}  // namespace oxport
OXPORT_API_END
