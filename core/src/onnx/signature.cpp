// readGraphSignature: walks the protobuf wire format of ModelProto -> graph (field 7) ->
// input (11) / output (12) -> name (1) and skips every other field, initializers included.
#include "onnx/signature.h"

#include <fcntl.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>

namespace oxport::onnx_ir {

namespace {

using google::protobuf::io::CodedInputStream;
using WFL = google::protobuf::internal::WireFormatLite;

// Field numbers (onnx.proto) of what the reader walks, by message.
enum ModelField : int { kModelGraph = 7, kModelOpsetImport = 8 };
enum GraphField : int { kGraphInput = 11, kGraphOutput = 12 };
enum OperatorSetIdField : int { kOpsetDomain = 1 };
enum ValueInfoField : int { kValueInfoName = 1 };

bool isLengthDelimited(uint32_t tag) { return WFL::GetTagWireType(tag) == WFL::WIRETYPE_LENGTH_DELIMITED; }

// Reads one ValueInfoProto (the stream is limited to it) and returns its name.
bool readValueInfoName(CodedInputStream& in, std::string& name) {
  while (uint32_t tag = in.ReadTag()) {
    if (WFL::GetTagFieldNumber(tag) == kValueInfoName && isLengthDelimited(tag)) {
      if (!WFL::ReadString(&in, &name)) return false;
    } else if (!WFL::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

bool readGraph(CodedInputStream& in, GraphSignature& sig) {
  while (uint32_t tag = in.ReadTag()) {
    const int field = WFL::GetTagFieldNumber(tag);
    if ((field == kGraphInput || field == kGraphOutput) && isLengthDelimited(tag)) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      auto limit = in.PushLimit(static_cast<int>(length));
      std::string name;
      if (!readValueInfoName(in, name)) return false;
      if (in.BytesUntilLimit() != 0) return false;
      in.PopLimit(limit);
      (field == kGraphInput ? sig.inputs : sig.outputs).push_back(name);
    } else if (!WFL::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

}  // namespace

Result<GraphSignature> readGraphSignature(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Error("file-not-found", "cannot open the ONNX file '" + file.string() + "'",
                 "check the path; export the model first");
  GraphSignature sig;
  bool ok = false, saw_graph = false;
  {
    google::protobuf::io::FileInputStream raw(fd);
    CodedInputStream in(&raw);
    in.SetTotalBytesLimit(INT32_MAX);
    ok = true;
    while (uint32_t tag = in.ReadTag()) {
      if (WFL::GetTagFieldNumber(tag) == kModelGraph && isLengthDelimited(tag)) {
        uint32_t length = 0;
        if (!in.ReadVarint32(&length)) { ok = false; break; }
        auto limit = in.PushLimit(static_cast<int>(length));
        if (!readGraph(in, sig) || in.BytesUntilLimit() != 0) { ok = false; break; }
        in.PopLimit(limit);
        saw_graph = true;
      } else if (WFL::GetTagFieldNumber(tag) == kModelOpsetImport && isLengthDelimited(tag)) {
        uint32_t length = 0;
        if (!in.ReadVarint32(&length)) { ok = false; break; }
        auto limit = in.PushLimit(static_cast<int>(length));
        std::string domain;
        while (uint32_t t = in.ReadTag()) {
          if (WFL::GetTagFieldNumber(t) == kOpsetDomain && isLengthDelimited(t)) {
            if (!WFL::ReadString(&in, &domain)) { ok = false; break; }
          } else if (!WFL::SkipField(&in, t)) {
            ok = false;
            break;
          }
        }
        if (!ok || !in.ConsumedEntireMessage()) { ok = false; break; }
        in.PopLimit(limit);
        sig.domains.push_back(domain);
      } else if (!WFL::SkipField(&in, tag)) {
        ok = false;
        break;
      }
    }
    // Skipping uses lseek, which goes past the end of a truncated file without failing: the
    // position reached must be the file's size.
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    ok = ok && in.ConsumedEntireMessage() && !ec && static_cast<uintmax_t>(in.CurrentPosition()) == size;
  }
  ::close(fd);
  if (!ok || !saw_graph)
    return Error("onnx-unreadable", "'" + file.string() + "' is not a readable ONNX model (truncated or not ONNX)",
                 "export the model again");
  return sig;
}

}  // namespace oxport::onnx_ir
