#include "inspector.h"

#include <QUrl>

namespace oxport::studio {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

const GraphViewEdge* edgeById(const GraphView& g, int id) {
  if (id >= 0 && id < static_cast<int>(g.edges.size()) && g.edges[id].id == id) return &g.edges[id];
  for (const auto& e : g.edges)
    if (e.id == id) return &e;
  return nullptr;
}

const GraphViewNode* nodeById(const GraphView& g, int id) {
  if (id >= 0 && id < static_cast<int>(g.nodes.size()) && g.nodes[id].id == id) return &g.nodes[id];
  for (const auto& n : g.nodes)
    if (n.id == id) return &n;
  return nullptr;
}

QString row(const QString& k, const QString& v) {
  return QStringLiteral("<tr><td style='padding-right:10px; color:palette(placeholder-text)'>%1</td><td>%2</td></tr>").arg(k, v);
}

QString nodeLink(bool torch, const GraphViewNode& n) {
  return QStringLiteral("<a href='node:%1:%2'>%3</a> <span>%4</span>")
      .arg(torch ? QStringLiteral("ts") : QStringLiteral("onnx"))
      .arg(n.id)
      .arg(q(n.name), q(n.op));
}

}  // namespace

Inspector::Inspector(QWidget* parent) : QTextBrowser(parent) {
  setObjectName(QStringLiteral("inspector"));
  setOpenLinks(false);
  connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    const QStringList parts = url.toString().split(QLatin1Char(':'));
    if (parts.size() == 3 && parts[0] == QLatin1String("node"))
      emit nodeLinkActivated(parts[1] == QLatin1String("ts"), parts[2].toInt());
  });
  showNothing();
}

void Inspector::showNothing() {
  setHtml(tr("<p>Select a node in a graph to see its details.</p>"
             "<p>Selecting an ONNX node highlights the TorchScript nodes it came from, and the other way round.</p>"));
}

void Inspector::showNode(const GraphView& g, int node_id, GraphFlavor flavor, const GraphView* counterpart) {
  const GraphViewNode* n = nodeById(g, node_id);
  if (!n) {
    showNothing();
    return;
  }
  const bool torch = flavor == GraphFlavor::TorchScript;
  QString html = QStringLiteral("<h3>%1</h3><table>").arg(q(n->op));
  html += row(tr("graph"), torch ? tr("TorchScript") : tr("ONNX"));
  html += row(tr("name"), q(n->name));
  if (!n->domain.empty()) html += row(tr("domain"), q(n->domain));
  html += row(tr("module"), n->module_path.empty() ? tr("(top level)") : q(n->module_path));
  if (n->location.known())
    html += row(tr("source"), QStringLiteral("%1:%2").arg(q(n->location.file)).arg(n->location.line));
  html += QStringLiteral("</table>");

  auto values = [&](const QString& title, const std::vector<int>& ids) {
    if (ids.empty()) return;
    html += QStringLiteral("<h4>%1</h4><table>").arg(title);
    for (int id : ids) {
      const GraphViewEdge* e = edgeById(g, id);
      if (!e) {
        html += row(QStringLiteral("—"), tr("(absent)"));
        continue;
      }
      QString what = q(e->type);
      if (e->is_initializer) what += tr(" · constant");
      if (e->is_graph_input) what += tr(" · graph input");
      if (e->is_graph_output) what += tr(" · graph output");
      if (!e->summary.empty()) what += QStringLiteral("<br><small>%1</small>").arg(q(e->summary));
      html += row(q(e->name), what);
    }
    html += QStringLiteral("</table>");
  };
  values(tr("Inputs"), n->inputs);
  values(tr("Outputs"), n->outputs);
  if (!n->attributes.empty()) {
    html += QStringLiteral("<h4>%1</h4><table>").arg(tr("Attributes"));
    for (const auto& [k, v] : n->attributes) html += row(q(k), q(v));
    html += QStringLiteral("</table>");
  }
  if (counterpart) {
    if (!torch) {
      html += QStringLiteral("<h4>%1</h4>").arg(tr("Made from (TorchScript)"));
      if (n->origins.empty()) html += tr("<p>No recorded origin.</p>");
      for (int o : n->origins)
        if (const GraphViewNode* t = nodeById(*counterpart, o)) html += nodeLink(true, *t) + QStringLiteral("<br>");
    } else {
      QString made;
      for (const auto& on : counterpart->nodes)
        if (std::find(on.origins.begin(), on.origins.end(), node_id) != on.origins.end())
          made += nodeLink(false, on) + QStringLiteral("<br>");
      html += QStringLiteral("<h4>%1</h4>").arg(tr("Became (ONNX)"));
      html += made.isEmpty() ? tr("<p>No ONNX node (folded away, or not exported yet).</p>") : made;
    }
  }
  if (notes_) html += notes_(flavor, node_id);
  setHtml(html);
}

void Inspector::showGroup(const QString& path, int node_count, GraphFlavor flavor) {
  setHtml(tr("<h3>%1</h3><table>%2%3</table><p>Module scope. Click the triangle of its frame, or double-click a "
             "collapsed box, to collapse or expand it.</p>")
              .arg(path.toHtmlEscaped(),
                   row(tr("graph"), flavor == GraphFlavor::TorchScript ? tr("TorchScript") : tr("ONNX")),
                   row(tr("nodes"), QString::number(node_count))));
}

void Inspector::showValue(const GraphView& g, int edge_id, GraphFlavor flavor) {
  const GraphViewEdge* e = edgeById(g, edge_id);
  if (!e) {
    showNothing();
    return;
  }
  const bool torch = flavor == GraphFlavor::TorchScript;
  QString html = QStringLiteral("<h3>%1</h3><table>").arg(q(e->name));
  html += row(tr("type"), q(e->type));
  if (e->is_graph_input) html += row(tr("role"), tr("graph input"));
  if (e->is_graph_output) html += row(tr("role"), tr("graph output"));
  if (e->is_initializer) html += row(tr("role"), tr("constant (initializer)"));
  if (!e->summary.empty()) html += row(tr("values"), q(e->summary));
  if (const GraphViewNode* p = nodeById(g, e->producer)) html += row(tr("made by"), nodeLink(torch, *p));
  QString readers;
  int shown = 0;
  for (int c : e->consumers) {
    if (const GraphViewNode* n = nodeById(g, c)) {
      if (shown++ < 50) readers += nodeLink(torch, *n) + QStringLiteral("<br>");
    }
  }
  if (shown > 50) readers += tr("… and %1 more").arg(shown - 50);
  if (!readers.isEmpty()) html += row(tr("read by"), readers);
  html += QStringLiteral("</table>");
  setHtml(html);
}

}  // namespace oxport::studio
