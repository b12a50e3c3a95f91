#include "onnx/onnx_ir.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <unordered_map>

namespace oxport::onnx_ir {

const Attribute* Node::attr(const std::string& n) const {
  for (const auto& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

std::string Attribute::toString() const {
  std::ostringstream os;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, float>) {
          os << v;
        } else if constexpr (std::is_same_v<T, std::string>) {
          os << '"' << v << '"';
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<float>>) {
          os << '[';
          for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
          os << ']';
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          os << '[';
          for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << '"' << v[i] << '"';
          os << ']';
        } else if constexpr (std::is_same_v<T, HostTensor>) {
          os << "tensor " << dtypeName(v.dtype) << v.shapeString();
        } else {
          os << "graph (" << (v ? v->nodes.size() : 0) << " nodes)";
        }
      },
      value);
  return os.str();
}

namespace {

// dst[(j - r0) * rows + i] = src[i * cols + j] for rows [r0, r1) of dst, the elements moved as
// T (the dtype's width: float16/bfloat16 as 16 bits). 8x8 blocks are read as 8 short row pieces
// of src and written as 8 short row pieces of dst, in bands of 8 src rows, so only 16 cache lines
// are live at a time: a power-of-two row length (GPT-2 medium's 1024, 4096) would otherwise map a
// larger tile's column onto one cache set. Columns of 256 outputs at a time keep the dst lines of a
// band in L1/L2. 2.5-6x the element-by-element 64x64 tiles (docs/BENCHMARKS.md).
template <typename T>
void transposeRows(const T* src, T* dst, int64_t rows, int64_t cols, int64_t r0, int64_t r1) {
  constexpr int64_t kB = 8, kChunk = 256;
  const int64_t rows8 = rows / kB * kB, r8 = r0 + (r1 - r0) / kB * kB;
  for (int64_t jc = r0; jc < r8; jc += kChunk) {
    const int64_t jce = std::min(jc + kChunk, r8);
    for (int64_t ib = 0; ib < rows8; ib += kB)
      for (int64_t jb = jc; jb < jce; jb += kB) {
        T blk[kB][kB];
        for (int64_t a = 0; a < kB; ++a) std::memcpy(blk[a], src + (ib + a) * cols + jb, sizeof blk[a]);
        for (int64_t b = 0; b < kB; ++b) {
          T out[kB];
          for (int64_t a = 0; a < kB; ++a) out[a] = blk[a][b];
          std::memcpy(dst + (jb + b - r0) * rows + ib, out, sizeof out);
        }
      }
  }
  // The edges: the last rows % 8 columns of dst's full rows, and its last (r1 - r0) % 8 rows.
  for (int64_t j = r0; j < r1; ++j)
    for (int64_t i = j < r8 ? rows8 : 0; i < rows; ++i) dst[(j - r0) * rows + i] = src[i * cols + j];
}

template <typename T>
void transposeRowsAs(const void* src, void* dst, int64_t rows, int64_t cols, int64_t r0, int64_t r1) {
  transposeRows(static_cast<const T*>(src), static_cast<T*>(dst), rows, cols, r0, r1);
}

}  // namespace

bool writeInitializerBytes(std::ostream& os, const Initializer& init,
                           const std::function<bool(size_t)>& block_written) {
  constexpr size_t kBlock = size_t(4) << 20;
  if (!init.transposed_of) {
    // Straight from where the bytes lie: the stream writes blocks this large without a copy.
    const auto* p = static_cast<const char*>(init.tensor.data);
    for (size_t off = 0; off < init.tensor.nbytes; off += kBlock) {
      const size_t n = std::min(kBlock, init.tensor.nbytes - off);
      os.write(p + off, static_cast<std::streamsize>(n));
      if (block_written && !block_written(n)) return false;
    }
    return true;
  }
  const HostTensor& src = *init.transposed_of;
  const int64_t rows = src.shape.at(0), cols = src.shape.at(1);  // the output is [cols, rows]
  const size_t es = dtypeSize(src.dtype);
  if (rows == 0 || cols == 0) return true;
  // Output rows in blocks of about 4 MiB, made in one buffer reused across blocks and across
  // initializers (its pages are faulted in once, not once per weight; it is kept for the next
  // export: 4 MiB, or one output row if that is larger).
  const int64_t per = std::max<int64_t>(1, static_cast<int64_t>(kBlock / (static_cast<size_t>(rows) * es)));
  thread_local std::vector<unsigned char> buf;
  const size_t need = static_cast<size_t>(std::min(per, cols) * rows) * es;
  if (buf.size() < need) buf.resize(need);
  const auto transpose = es == 1   ? transposeRowsAs<uint8_t>
                         : es == 2 ? transposeRowsAs<uint16_t>
                         : es == 4 ? transposeRowsAs<uint32_t>
                                   : transposeRowsAs<uint64_t>;
  for (int64_t r0 = 0; r0 < cols; r0 += per) {
    const int64_t r1 = std::min(r0 + per, cols);
    transpose(src.data, buf.data(), rows, cols, r0, r1);
    const size_t n = static_cast<size_t>((r1 - r0) * rows) * es;
    os.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(n));
    if (block_written && !block_written(n)) return false;
  }
  return true;
}

int64_t irVersionForOpset(int opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  return 8;
}

static std::string typeText(const ValueInfo& vi) {
  std::ostringstream os;
  os << dtypeName(vi.dtype);
  if (vi.has_shape) {
    os << '[';
    for (size_t i = 0; i < vi.shape.size(); ++i) {
      os << (i ? ", " : "");
      if (vi.shape[i].value >= 0) os << vi.shape[i].value;
      else if (!vi.shape[i].param.empty()) os << vi.shape[i].param;
      else os << '?';
    }
    os << ']';
  }
  return os.str();
}

GraphView toGraphView(const Graph& g) {
  GraphView v;
  v.title = g.name;
  std::unordered_map<std::string, int> edge_of;
  auto edge = [&](const std::string& name) -> int {
    auto it = edge_of.find(name);
    if (it != edge_of.end()) return it->second;
    GraphViewEdge e;
    e.id = static_cast<int>(v.edges.size());
    e.name = name;
    v.edges.push_back(e);
    edge_of[name] = e.id;
    return e.id;
  };
  for (const auto& in : g.inputs) {
    int id = edge(in.name);
    v.edges[id].is_graph_input = true;
    v.edges[id].type = typeText(in);
    v.inputs.push_back(id);
  }
  for (const auto& init : g.initializers) {
    int id = edge(init.name);
    auto& e = v.edges[id];
    e.is_initializer = true;
    e.type = std::string(dtypeName(init.tensor.dtype)) + init.tensor.shapeString();
    std::ostringstream os;
    os << e.type;
    // A transposed weight has its source's elements.
    const HostTensor& data = init.transposed_of ? *init.transposed_of : init.tensor;
    int64_t n = data.numel();
    if (n > 0 && data.data && static_cast<size_t>(n) * dtypeSize(data.dtype) == data.nbytes) {
      double lo = 0, hi = 0;
      if (data.dtype == DType::Float32) {
        // Typed loop (vectorized): HostTensor::at per element took ~1 s per GiB of weights.
        const float* p = data.as<float>();
        float flo = p[0], fhi = p[0];
        for (int64_t i = 1; i < n; ++i) {
          flo = std::min(flo, p[i]);
          fhi = std::max(fhi, p[i]);
        }
        lo = flo;
        hi = fhi;
      } else {
        lo = hi = data.at(0);
        for (int64_t i = 1; i < n; ++i) {
          double x = data.at(i);
          lo = std::min(lo, x);
          hi = std::max(hi, x);
        }
      }
      os << " min " << lo << " max " << hi;
    }
    e.summary = os.str();
  }
  for (const auto& vi : g.value_info) v.edges[edge(vi.name)].type = typeText(vi);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    GraphViewNode gn;
    gn.id = static_cast<int>(i);
    gn.name = n.name;
    gn.op = n.op_type;
    gn.domain = n.domain;
    gn.module_path = n.module_path;
    gn.location = n.location;
    gn.origins = n.origins;
    for (const auto& a : n.attributes) gn.attributes.emplace_back(a.name, a.toString());
    for (const auto& in : n.inputs) {
      if (in.empty()) {
        gn.inputs.push_back(-1);
        continue;
      }
      int id = edge(in);
      v.edges[id].consumers.push_back(gn.id);
      gn.inputs.push_back(id);
    }
    for (const auto& out : n.outputs) {
      int id = edge(out);
      v.edges[id].producer = gn.id;
      gn.outputs.push_back(id);
    }
    v.nodes.push_back(std::move(gn));
  }
  for (const auto& out : g.outputs) {
    int id = edge(out.name);
    v.edges[id].is_graph_output = true;
    v.edges[id].type = typeText(out);
    v.outputs.push_back(id);
  }
  return v;
}

}  // namespace oxport::onnx_ir
