#include "onnx/writer.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <ostream>

#include "oxport/atomic_file.h"

namespace oxport::onnx_ir {

namespace {

void fillTensor(::onnx::TensorProto* tp, const std::string& name, const HostTensor& t, bool raw = true) {
  tp->set_name(name);
  tp->set_data_type(onnxDataType(t.dtype));
  for (auto d : t.shape) tp->add_dims(d);
  if (raw) tp->set_raw_data(t.data, t.nbytes);
}

void fillType(::onnx::TypeProto* type, const ValueInfo& vi) {
  if (vi.sequence) {
    type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnxDataType(vi.dtype));
    return;
  }
  auto* tt = type->mutable_tensor_type();
  tt->set_elem_type(onnxDataType(vi.dtype));
  if (!vi.has_shape) return;
  auto* shape = tt->mutable_shape();
  for (const auto& d : vi.shape) {
    auto* dim = shape->add_dim();
    if (d.value >= 0) dim->set_dim_value(d.value);
    else if (!d.param.empty()) dim->set_dim_param(d.param);
  }
}

void fillValueInfo(::onnx::ValueInfoProto* p, const ValueInfo& vi) {
  p->set_name(vi.name);
  fillType(p->mutable_type(), vi);
}

void fillGraph(::onnx::GraphProto* gp, const Graph& g, bool stream_weights = false);

// Initializers of at least this size are not copied into the message by writeModel: their bytes
// go from the HostTensor straight to the file (inline, or to the external data file).
constexpr size_t kStreamedBytes = 1024;

void fillAttribute(::onnx::AttributeProto* ap, const Attribute& a) {
  ap->set_name(a.name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          ap->set_type(::onnx::AttributeProto::INT);
          ap->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          ap->set_type(::onnx::AttributeProto::FLOAT);
          ap->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          ap->set_type(::onnx::AttributeProto::STRING);
          ap->set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          ap->set_type(::onnx::AttributeProto::INTS);
          for (auto x : v) ap->add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          ap->set_type(::onnx::AttributeProto::FLOATS);
          for (auto x : v) ap->add_floats(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          ap->set_type(::onnx::AttributeProto::STRINGS);
          for (const auto& x : v) ap->add_strings(x);
        } else if constexpr (std::is_same_v<T, HostTensor>) {
          ap->set_type(::onnx::AttributeProto::TENSOR);
          fillTensor(ap->mutable_t(), "", v);
        } else if constexpr (std::is_same_v<T, std::shared_ptr<Graph>>) {
          ap->set_type(::onnx::AttributeProto::GRAPH);
          fillGraph(ap->mutable_g(), *v);
        }
      },
      a.value);
}

void fillGraph(::onnx::GraphProto* gp, const Graph& g, bool stream_weights) {
  gp->set_name(g.name);
  if (!g.doc_string.empty()) gp->set_doc_string(g.doc_string);
  for (const auto& n : g.nodes) {
    auto* np = gp->add_node();
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    if (!n.name.empty()) np->set_name(n.name);
    for (const auto& i : n.inputs) np->add_input(i);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& a : n.attributes) fillAttribute(np->add_attribute(), a);
    if (!n.doc_string.empty()) np->set_doc_string(n.doc_string);
  }
  for (const auto& vi : g.inputs) fillValueInfo(gp->add_input(), vi);
  for (const auto& vi : g.outputs) fillValueInfo(gp->add_output(), vi);
  for (const auto& vi : g.value_info) fillValueInfo(gp->add_value_info(), vi);
  for (const auto& init : g.initializers) {
    auto* tp = gp->add_initializer();
    const bool streamed = stream_weights && init.tensor.nbytes >= kStreamedBytes;
    fillTensor(tp, init.name, init.tensor, !streamed);
    // One placeholder byte: the checker wants a data field and does not compare its size.
    if (streamed) tp->set_raw_data(std::string(1, '\0'));
  }
}

void fillModel(::onnx::ModelProto* mp, const Model& m, bool stream_weights = false) {
  mp->set_ir_version(m.ir_version);
  mp->set_producer_name(m.producer_name);
  mp->set_producer_version(m.producer_version);
  if (!m.doc_string.empty()) mp->set_doc_string(m.doc_string);
  for (const auto& [domain, version] : m.opset_imports) {
    auto* op = mp->add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  for (const auto& [key, value] : m.metadata_props) {
    auto* prop = mp->add_metadata_props();
    prop->set_key(key);
    prop->set_value(value);
  }
  fillGraph(mp->mutable_graph(), m.graph, stream_weights);
}

void writeVarint(std::ostream& os, uint64_t v) {
  char buf[10];
  int n = 0;
  do {
    buf[n++] = static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  os.write(buf, n);
}

size_t varintSize(uint64_t v) {
  size_t n = 1;
  while (v > 0x7f) { v >>= 7; ++n; }
  return n;
}

Error cancelledError() { return Error("cancelled", "the export was cancelled"); }

// Counts the weights' bytes as they are written: reports the fraction done and says whether to go on.
class WeightWriteProgress {
 public:
  WeightWriteProgress(const WriteSettings& settings, int64_t total) : settings_(settings), total_(total) {}
  bool operator()(size_t n) {
    done_ += static_cast<int64_t>(n);
    if (settings_.progress && total_ > 0)
      settings_.progress(Phase::Serialize, std::min(1.0, double(done_) / double(total_)),
                         "writing weights (" + std::to_string(done_ >> 20) + " of " + std::to_string(total_ >> 20) +
                             " MiB)");
    return !settings_.cancel.cancelled();
  }

 private:
  const WriteSettings& settings_;
  int64_t total_;
  int64_t done_ = 0;
};

// Serializes `mp` (filled with stream_weights) to `os` with the raw_data of its streamed
// initializers taken from the model's HostTensors, so the weights are never copied into the
// message. Fields go out in field-number order, as protobuf writes them: the bytes equal
// SerializeToOstream's of the message with the data inside. `mp` is taken apart. `block_written`
// is given each block of weights written (see writeInitializerBytes); false stops the write.
Status serializeStreamed(::onnx::ModelProto& mp, const Model& m, std::ostream& os, int64_t* bytes,
                         const std::function<bool(size_t)>& block_written) {
  // ModelProto: fields 1-6, then graph (7), then opset_import (8) and later fields.
  ::onnx::GraphProto graph;
  graph.Swap(mp.mutable_graph());
  mp.clear_graph();
  ::onnx::ModelProto model_tail;
  model_tail.mutable_opset_import()->Swap(mp.mutable_opset_import());
  model_tail.mutable_metadata_props()->Swap(mp.mutable_metadata_props());
  model_tail.mutable_training_info()->Swap(mp.mutable_training_info());
  model_tail.mutable_functions()->Swap(mp.mutable_functions());
  // GraphProto: node (1), name (2), then initializer (5), then doc_string (10) and later fields.
  ::onnx::GraphProto graph_head;
  graph_head.mutable_node()->Swap(graph.mutable_node());
  if (graph.has_name()) graph_head.set_name(graph.name());
  graph.clear_name();
  google::protobuf::RepeatedPtrField<::onnx::TensorProto> inits;
  inits.Swap(graph.mutable_initializer());

  std::vector<std::string> heads(static_cast<size_t>(inits.size()));
  std::vector<size_t> lens(heads.size());
  uint64_t graph_len = graph_head.ByteSizeLong() + graph.ByteSizeLong();
  for (int i = 0; i < inits.size(); ++i) {
    auto& tp = *inits.Mutable(i);
    const HostTensor& t = m.graph.initializers[static_cast<size_t>(i)].tensor;
    const bool streamed = t.nbytes >= kStreamedBytes && tp.has_raw_data();
    if (streamed) tp.clear_raw_data();
    heads[static_cast<size_t>(i)] = tp.SerializeAsString();  // raw_data (9) follows name (8): order kept
    size_t len = heads[static_cast<size_t>(i)].size();
    if (streamed) len += 1 + varintSize(t.nbytes) + t.nbytes;
    lens[static_cast<size_t>(i)] = len;
    graph_len += 1 + varintSize(len) + len;
  }

  if (!mp.SerializeToOstream(&os)) return Error("write-failed", "serializing the ONNX model failed");
  os.put(static_cast<char>((7 << 3) | 2));  // ModelProto.graph
  writeVarint(os, graph_len);
  if (!graph_head.SerializeToOstream(&os)) return Error("write-failed", "serializing the ONNX graph failed");
  for (int i = 0; i < inits.size(); ++i) {
    const Initializer& init = m.graph.initializers[static_cast<size_t>(i)];
    const HostTensor& t = init.tensor;
    const std::string& head = heads[static_cast<size_t>(i)];
    os.put(static_cast<char>((5 << 3) | 2));  // GraphProto.initializer
    writeVarint(os, lens[static_cast<size_t>(i)]);
    os.write(head.data(), static_cast<std::streamsize>(head.size()));
    if (lens[static_cast<size_t>(i)] != head.size()) {
      os.put(static_cast<char>((9 << 3) | 2));  // TensorProto.raw_data
      writeVarint(os, t.nbytes);
      if (!writeInitializerBytes(os, init, block_written)) return cancelledError();
    }
  }
  if (!graph.SerializeToOstream(&os) || !model_tail.SerializeToOstream(&os))
    return Error("write-failed", "serializing the ONNX model failed");
  if (!os) return Error("write-failed", "writing the ONNX model failed");
  *bytes = static_cast<int64_t>(mp.ByteSizeLong() + 1 + varintSize(graph_len) + graph_len +
                                model_tail.ByteSizeLong());
  return okStatus();
}

// Structure-only copy for shape inference: initializers keep their dims but no data, so a large
// model is not copied. (Shape inference only reads initializer shapes, except for the shape
// inputs of Reshape and friends, which are small: those keep their data.)
void fillModelForInference(::onnx::ModelProto* mp, const Model& m) {
  Model shallow;
  shallow.ir_version = m.ir_version;
  shallow.opset_imports = m.opset_imports;
  shallow.graph.name = m.graph.name;
  shallow.graph.nodes = m.graph.nodes;
  shallow.graph.inputs = m.graph.inputs;
  shallow.graph.outputs = m.graph.outputs;
  fillModel(mp, shallow);
  auto* gp = mp->mutable_graph();
  for (const auto& init : m.graph.initializers) {
    auto* tp = gp->add_initializer();
    fillTensor(tp, init.name, init.tensor, init.tensor.nbytes <= 4096);
    if (init.tensor.nbytes > 4096) {
      // Shape inference needs only dims for big tensors; mark them as external so no data is needed.
      tp->set_data_location(::onnx::TensorProto::EXTERNAL);
      auto* e = tp->add_external_data();
      e->set_key("location");
      e->set_value("__oxport_shape_only__");
    }
  }
}

std::optional<DType> dtypeOf(const ::onnx::TypeProto& t) {
  if (!t.has_tensor_type()) return std::nullopt;
  return fromOnnxDataType(t.tensor_type().elem_type());
}

// Types of a graph's values as inference left them, then of its subgraphs' (body inputs included).
void collectValueTypes(const ::onnx::GraphProto& g, std::map<std::string, DType>& types) {
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (auto dt = dtypeOf(vi.type())) types[vi.name()] = *dt;
  for (const auto& init : g.initializer()) {
    auto dt = fromOnnxDataType(init.data_type());
    if (dt) types[init.name()] = *dt;
  }
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collectValueTypes(a.g(), types);
      for (const auto& sub : a.graphs()) collectValueTypes(sub, types);
    }
}

// The model without its big tensors' bytes, after lenient shape inference (types not checked
// against the schemas, no strict mode).
Status inferLeniently(::onnx::ModelProto& mp, const Model& model, bool data_prop) {
  fillModelForInference(&mp, model);
  try {
    ::onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*strict=*/0, data_prop);
    ::onnx::shape_inference::InferShapes(mp, ::onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    return Error("shape-inference", std::string("ONNX shape inference failed: ") + e.what());
  }
  return okStatus();
}

}  // namespace

Status inferOutputShapes(Model& model) {
  ::onnx::ModelProto mp;
  OXPORT_TRY(inferLeniently(mp, model, /*data_prop=*/true));
  std::map<std::string, const ::onnx::TypeProto*> types;
  for (const auto& vi : mp.graph().value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : mp.graph().output()) types[vi.name()] = &vi.type();
  for (auto& out : model.graph.outputs) {
    auto it = types.find(out.name);
    if (it == types.end()) continue;
    const auto& t = *it->second;
    if (auto dt = dtypeOf(t); dt && !out.has_shape) out.dtype = *dt;
    if (!t.tensor_type().has_shape()) continue;
    const auto& shp = t.tensor_type().shape();
    if (!out.has_shape) {
      out.has_shape = true;
      out.shape.assign(shp.dim_size(), Dim::unknown());
    }
    if (static_cast<int>(out.shape.size()) != shp.dim_size()) continue;
    for (int i = 0; i < shp.dim_size(); ++i) {
      auto& d = out.shape[i];
      if (d.value >= 0 || !d.param.empty()) continue;
      if (shp.dim(i).has_dim_value()) d.value = shp.dim(i).dim_value();
      else if (shp.dim(i).has_dim_param()) d.param = shp.dim(i).dim_param();
    }
  }
  return okStatus();
}

Result<std::map<std::string, DType>> inferValueTypes(const Model& model) {
  ::onnx::ModelProto mp;
  OXPORT_TRY(inferLeniently(mp, model, /*data_prop=*/false));
  std::map<std::string, DType> types;
  for (const auto& in : model.graph.inputs) types[in.name] = in.dtype;
  for (const auto& init : model.graph.initializers) types[init.name] = init.tensor.dtype;
  collectValueTypes(mp.graph(), types);
  return types;
}

Result<WriteReport> writeModel(const Model& model, const OutputTarget& target, const WriteSettings& settings) {
  WriteReport report;
  for (const auto& init : model.graph.initializers)
    if (init.tensor.nbytes >= kStreamedBytes &&
        (!(init.transposed_of ? init.transposed_of->data : init.tensor.data) ||
         static_cast<size_t>(init.tensor.numel()) * dtypeSize(init.tensor.dtype) != init.tensor.nbytes ||
         (init.transposed_of && (init.transposed_of->shape.size() != 2 || init.transposed_of->nbytes != init.tensor.nbytes))))
      return Error("internal", "initializer " + init.name + " has " + std::to_string(init.tensor.nbytes) +
                                   " bytes of data for its shape " + init.tensor.shapeString(),
                   "this is a bug in oxport; please report it with the model. Nothing was written.");
  // Large weights are not copied into the message (see serializeStreamed).
  ::onnx::ModelProto mp;
  fillModel(&mp, model, /*stream_weights=*/true);
  if (settings.cancel.cancelled()) return cancelledError();
  if (settings.check) {
    if (settings.progress) settings.progress(Phase::Serialize, 0.0, "checking the model");
    try {
      ::onnx::checker::check_model(mp);
      report.checker_passed = true;
    } catch (const std::exception& e) {
      return Error("checker-failed", std::string("the ONNX checker rejects the exported model: ") + e.what(),
                   "this is a bug in oxport; please report it with the model. Nothing was written.");
    }
    try {
      ::onnx::ModelProto copy;
      fillModelForInference(&copy, model);
      ::onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*strict=*/1, /*data_prop=*/false);
      ::onnx::shape_inference::InferShapes(copy, ::onnx::OpSchemaRegistry::Instance(), opts);
      report.shape_inference_passed = true;
      if (settings.record_value_info) {
        std::set<std::string> known;
        for (const auto& vi : mp.graph().value_info()) known.insert(vi.name());
        for (const auto& vi : copy.graph().value_info())
          if (vi.type().has_tensor_type() && known.insert(vi.name()).second)
            *mp.mutable_graph()->add_value_info() = vi;
      }
      for (const auto& vi : copy.graph().value_info()) {
        auto dt = dtypeOf(vi.type());
        if (!dt) continue;
        ValueInfo v;
        v.name = vi.name();
        v.dtype = *dt;
        if (vi.type().tensor_type().has_shape()) {
          v.has_shape = true;
          for (const auto& d : vi.type().tensor_type().shape().dim())
            v.shape.push_back(d.has_dim_value()   ? Dim::fixed(d.dim_value())
                              : d.has_dim_param() ? Dim::symbol(d.dim_param())
                                                  : Dim::unknown());
        }
        report.inferred_value_info.push_back(std::move(v));
      }
    } catch (const std::exception& e) {
      return Error("shape-inference-failed",
                   std::string("ONNX shape inference rejects the exported model: ") + e.what(),
                   "this is a bug in oxport; please report it with the model. Nothing was written.");
    }
  }

  int64_t total = 0;
  bool movable = false;  // tensors under 1 KiB stay inside the model file
  for (const auto& init : model.graph.initializers) {
    total += static_cast<int64_t>(init.tensor.nbytes);
    movable = movable || init.tensor.nbytes >= 1024;
  }
  const bool external = total > settings.external_data_threshold && movable;
  int64_t streamed_total = 0;
  for (const auto& init : model.graph.initializers)
    if (init.tensor.nbytes >= kStreamedBytes) streamed_total += static_cast<int64_t>(init.tensor.nbytes);
  WeightWriteProgress progress(settings, streamed_total);
  const std::function<bool(size_t)> block_written = std::ref(progress);
  if (settings.cancel.cancelled()) return cancelledError();
  if (external && target.stream)
    return Error("too-large-for-stream",
                 "the model's weights (" + std::to_string(total >> 20) +
                     " MiB) exceed protobuf's 2 GiB limit and must go to external data, which needs a file path",
                 "export to a file instead of a stream");

  if (target.stream) {
    OXPORT_TRY(serializeStreamed(mp, model, *target.stream, &report.bytes, block_written));
    return report;
  }

  if (external) {
    // Large tensors go to "<model file name>.data" beside the model, at 4 KiB-aligned offsets.
    std::filesystem::path data_path = target.file;
    data_path += ".data";
    const std::string location = data_path.filename().string();
    auto* gp = mp.mutable_graph();
    std::vector<std::pair<int, int64_t>> moved;  // initializer index, offset
    int64_t offset = 0;
    for (int i = 0; i < gp->initializer_size(); ++i) {
      const auto& t = model.graph.initializers[static_cast<size_t>(i)].tensor;
      if (t.nbytes < kStreamedBytes) continue;
      offset = (offset + 4095) / 4096 * 4096;
      moved.emplace_back(i, offset);
      offset += static_cast<int64_t>(t.nbytes);
    }
    Status ds = writeFileAtomically(data_path, [&](std::ostream& os) -> Status {
      int64_t pos = 0;
      for (auto [idx, off] : moved) {
        const auto& init = model.graph.initializers[static_cast<size_t>(idx)];
        const auto& t = init.tensor;
        std::string pad(static_cast<size_t>(off - pos), '\0');
        os.write(pad.data(), static_cast<std::streamsize>(pad.size()));
        if (!writeInitializerBytes(os, init, block_written)) return cancelledError();
        pos = off + static_cast<int64_t>(t.nbytes);
      }
      return os ? okStatus() : Status(Error("write-failed", "writing " + data_path.string() + " failed"));
    });
    if (!ds.ok()) return ds.error();
    // No cancel from here on: the data file is in place, and the model file (its weights are all
    // in the data file) is written at once, so the two stay a pair.
    for (auto [idx, off] : moved) {
      auto* tp = gp->mutable_initializer(idx);
      tp->clear_raw_data();
      tp->set_data_location(::onnx::TensorProto::EXTERNAL);
      auto add = [&](const std::string& k, const std::string& v) {
        auto* e = tp->add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", location);
      add("offset", std::to_string(off));
      add("length", std::to_string(model.graph.initializers[static_cast<size_t>(idx)].tensor.nbytes));
    }
    report.external_data = true;
    report.warnings.push_back(makeWarning(
        "external-data", "the weights exceed protobuf's 2 GiB limit; they were written to " + data_path.string(),
        "keep " + location + " next to the model file"));
  }

  Status s = writeFileAtomically(target.file, [&](std::ostream& os) -> Status {
    int64_t written = 0;
    return serializeStreamed(mp, model, os, &written, block_written);
  });
  if (!s.ok()) return s.error();
  std::error_code ec;
  report.bytes = static_cast<int64_t>(std::filesystem::file_size(target.file, ec));
  return report;
}

}  // namespace oxport::onnx_ir
