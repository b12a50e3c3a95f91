// readGraphSignature: graph input and output names read from an ONNX file without parsing its
// initializers; files that are not ONNX, truncated or missing give errors, not garbage names.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "onnx/signature.h"

namespace fs = std::filesystem;
using oxport::onnx_ir::readGraphSignature;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("oxport_signature_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

void addValueInfo(onnx::ValueInfoProto* vi, const std::string& name) {
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

// A model whose graph has fields before, between and after the inputs and outputs, and a big
// initializer, so the reader must skip them all.
std::string modelBytes() {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("test");
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* init = g->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(1 << 18);
  init->set_raw_data(std::string(size_t(4) << 18, '\x01'));
  auto* n = g->add_node();
  n->set_op_type("Add");
  n->add_input("image");
  n->add_input("w");
  n->add_output("sum");
  addValueInfo(g->add_input(), "image");
  addValueInfo(g->add_input(), "mask.0");
  addValueInfo(g->add_input(), "w");
  addValueInfo(g->add_output(), "sum");
  addValueInfo(g->add_output(), "count");
  addValueInfo(g->add_value_info(), "not_an_output");
  m.set_doc_string("after the graph");
  return m.SerializeAsString();
}

void writeFile(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace

TEST(GraphSignature, ReadsInputAndOutputNamesInOrder) {
  const fs::path p = scratch("model.onnx");
  writeFile(p, modelBytes());
  auto sig = readGraphSignature(p);
  ASSERT_TRUE(sig.ok()) << sig.error().message();
  EXPECT_EQ(sig->inputs, (std::vector<std::string>{"image", "mask.0", "w"}));
  EXPECT_EQ(sig->outputs, (std::vector<std::string>{"sum", "count"}));
}

TEST(GraphSignature, TruncatedFileIsAnError) {
  const std::string bytes = modelBytes();
  const fs::path p = scratch("truncated.onnx");
  writeFile(p, bytes.substr(0, bytes.size() / 2));
  auto sig = readGraphSignature(p);
  ASSERT_FALSE(sig.ok());
  EXPECT_EQ(sig.error().code(), "onnx-unreadable");
}

TEST(GraphSignature, EveryCutThroughTheNamesIsAnError) {
  // The names are serialized after the initializer: cut the file at every byte of its tail. A cut
  // at a field boundary after the graph leaves a valid (smaller) model, whose names are all there.
  const std::string bytes = modelBytes();
  const fs::path p = scratch("cut.onnx");
  for (size_t cut = bytes.size() - 120; cut < bytes.size(); ++cut) {
    writeFile(p, bytes.substr(0, cut));
    auto sig = readGraphSignature(p);
    if (sig.ok()) {
      EXPECT_EQ(sig->inputs.size(), 3u) << "cut at " << cut << " of " << bytes.size();
      EXPECT_EQ(sig->outputs.size(), 2u) << "cut at " << cut << " of " << bytes.size();
    }
  }
}

TEST(GraphSignature, TextFileIsAnError) {
  const fs::path p = scratch("text.onnx");
  writeFile(p, "this is not a model\n");
  auto sig = readGraphSignature(p);
  ASSERT_FALSE(sig.ok());
  EXPECT_EQ(sig.error().code(), "onnx-unreadable");
}

TEST(GraphSignature, MissingFileSaysSo) {
  auto sig = readGraphSignature(scratch("missing.onnx"));
  ASSERT_FALSE(sig.ok());
  EXPECT_EQ(sig.error().code(), "file-not-found");
  EXPECT_NE(sig.error().message().find("missing.onnx"), std::string::npos);
}
