#include "onnx/expose.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <unordered_map>

namespace oxport::onnx_ir {

namespace fs = std::filesystem;

OnnxFile::OnnxFile(OnnxFile&&) noexcept = default;
OnnxFile& OnnxFile::operator=(OnnxFile&&) noexcept = default;
OnnxFile::~OnnxFile() = default;

Result<OnnxFile> OnnxFile::read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return Error("localize-failed", "cannot open " + file.string(), "check the path of the ONNX file");
  OnnxFile f;
  f.proto_ = std::make_unique<::onnx::ModelProto>();
  if (!f.proto_->ParseFromIstream(&in))
    return Error("localize-failed", file.string() + " is not a readable ONNX model (protobuf parse failed)",
                 "check that the file is an .onnx model and not truncated");
  for (const auto& p : f.proto_->metadata_props()) f.metadata_[p.key()] = p.value();
  const auto& g = f.proto_->graph();
  for (const auto& n : g.node()) {
    FileNode fn{n.name(), n.op_type(), n.domain(), {}};
    for (const auto& o : n.output())
      if (!o.empty()) {
        fn.outputs.push_back(o);
        f.produced_.insert(o);
      }
    f.nodes_.push_back(std::move(fn));
  }
  for (const auto& i : g.input()) f.inputs_.push_back(i.name());
  for (const auto& o : g.output()) f.outputs_.push_back(o.name());
  f.producer_ = f.proto_->producer_name() +
                (f.proto_->producer_version().empty() ? "" : " " + f.proto_->producer_version());
  for (const auto& t : g.initializer())
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) f.external_ = true;
  return f;
}

std::set<std::string> OnnxFile::domains() const {
  std::set<std::string> out;
  for (const auto& n : nodes_) out.insert(n.domain);
  return out;
}

Status OnnxFile::writeExposed(const std::vector<std::string>& values, const fs::path& out) const {
  ::onnx::ModelProto copy(*proto_);
  auto* g = copy.mutable_graph();
  std::unordered_map<std::string, const ::onnx::ValueInfoProto*> info;
  for (const auto& vi : proto_->graph().value_info()) info[vi.name()] = &vi;
  std::set<std::string> already;
  for (const auto& o : g->output()) already.insert(o.name());
  for (const auto& v : values) {
    if (already.count(v) || !produced_.count(v)) continue;
    already.insert(v);
    auto* o = g->add_output();
    auto it = info.find(v);
    if (it != info.end()) {
      *o = *it->second;
    } else {
      o->set_name(v);  // untyped: ONNX Runtime takes the type its inference gives
    }
  }
  std::ofstream os(out, std::ios::binary | std::ios::trunc);
  if (!os || !copy.SerializeToOstream(&os) || !os.flush())
    return Error("localize-failed", "cannot write the exposed copy of the model to " + out.string(),
                 "set TMPDIR to a writable folder with free space");
  return okStatus();
}

}  // namespace oxport::onnx_ir
