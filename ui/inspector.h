// The node inspector: what a selected node, group or value is (op, module path, source line,
// inputs and outputs with their types, attributes, and for ONNX nodes the TorchScript nodes they
// came from, as links).
#pragma once

#include <QTextBrowser>

#include <functional>

#include "graphscene.h"

namespace oxport::studio {

class Inspector : public QTextBrowser {
  Q_OBJECT

 public:
  explicit Inspector(QWidget* parent = nullptr);

  void showNode(const GraphView& g, int node_id, GraphFlavor flavor, const GraphView* counterpart);
  void showGroup(const QString& path, int node_count, GraphFlavor flavor);
  void showValue(const GraphView& g, int edge_id, GraphFlavor flavor);
  void showNothing();
  // Extra HTML appended to a node's page (the localize errors of that node), or "".
  void setNodeNotes(std::function<QString(GraphFlavor, int node_id)> notes) { notes_ = std::move(notes); }

 signals:
  // A link to a node was clicked: in the TorchScript graph (torch == true) or the ONNX graph.
  void nodeLinkActivated(bool torch, int node_id);

 private:
  std::function<QString(GraphFlavor, int)> notes_;
};

}  // namespace oxport::studio
