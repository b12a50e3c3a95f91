// NumPy .npy reader and writer (format versions 1.0, 2.0 and 3.0; C or Fortran order on read).
//
// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }
// padded with spaces and a newline so that the data starts on a 64-byte boundary.
// bfloat16 has no NumPy type code; it is written with descr 'bfloat16' (the name that
// ml_dtypes registers with NumPy) and read back from that name.
#include "oxport/npy.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "oxport/atomic_file.h"

namespace oxport {
namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr const char* kNpyHint = "save the array with numpy.save(path, array)";

struct DescrInfo {
  DType dtype;
  const char* descr;  // what we write
};

// The little-endian form we write for each dtype.
constexpr DescrInfo kDescrs[] = {
    {DType::Float32, "<f4"}, {DType::Float64, "<f8"}, {DType::Float16, "<f2"},
    {DType::BFloat16, "bfloat16"}, {DType::Int8, "|i1"}, {DType::UInt8, "|u1"},
    {DType::Int16, "<i2"}, {DType::Int32, "<i4"}, {DType::Int64, "<i8"}, {DType::Bool, "|b1"},
};

const char* descrOf(DType t) {
  for (const auto& d : kDescrs)
    if (d.dtype == t) return d.descr;
  return nullptr;
}

struct ParsedDescr {
  DType dtype;
  bool big_endian = false;
};

// Accepts '<f4', '=f4', '|i1', 'i1', '>i8' (swapped on read) and 'bfloat16'.
std::optional<ParsedDescr> parseDescr(const std::string& s) {
  if (s == "bfloat16") return ParsedDescr{DType::BFloat16, false};
  std::string code = s;
  bool big = false;
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
    big = code[0] == '>';
    code = code.substr(1);
  }
  static const std::pair<const char*, DType> kCodes[] = {
      {"f4", DType::Float32}, {"f8", DType::Float64}, {"f2", DType::Float16},
      {"i1", DType::Int8},    {"u1", DType::UInt8},   {"i2", DType::Int16},
      {"i4", DType::Int32},   {"i8", DType::Int64},   {"b1", DType::Bool},
  };
  for (const auto& [c, t] : kCodes)
    if (code == c) return ParsedDescr{t, big && dtypeSize(t) > 1};
  return std::nullopt;
}

// A tiny parser for the header's Python literal: a dict of str keys to str, bool or int tuples.
class HeaderParser {
 public:
  explicit HeaderParser(std::string text) : s_(std::move(text)) {}

  struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<int64_t>> shape;
  };

  // Returns an empty string on success, otherwise what is wrong.
  std::string parse(Header& h) {
    skipSpace();
    if (!eat('{')) return "expected '{' at the start of the header";
    while (true) {
      skipSpace();
      if (eat('}')) break;
      std::string key;
      if (!parseString(key)) return "expected a quoted key at offset " + std::to_string(i_);
      skipSpace();
      if (!eat(':')) return "expected ':' after '" + key + "'";
      skipSpace();
      if (key == "descr") {
        std::string v;
        if (!parseString(v))
          return "'descr' is not a simple type string (structured arrays are not supported)";
        h.descr = v;
      } else if (key == "fortran_order") {
        if (s_.compare(i_, 4, "True") == 0) {
          h.fortran_order = true;
          i_ += 4;
        } else if (s_.compare(i_, 5, "False") == 0) {
          h.fortran_order = false;
          i_ += 5;
        } else {
          return "'fortran_order' is not True or False";
        }
      } else if (key == "shape") {
        std::vector<int64_t> dims;
        std::string why = parseShape(dims);
        if (!why.empty()) return why;
        h.shape = std::move(dims);
      } else {
        return "unexpected key '" + key + "'";
      }
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat('}')) break;
      return "expected ',' or '}' after '" + key + "'";
    }
    skipSpace();
    if (i_ != s_.size()) return "unexpected text after the closing '}'";
    return {};
  }

 private:
  void skipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool parseString(std::string& out) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char q = s_[i_++];
    const size_t end = s_.find(q, i_);
    if (end == std::string::npos) return false;
    out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return true;
  }
  std::string parseShape(std::vector<int64_t>& dims) {
    if (!eat('(')) return "'shape' is not a tuple";
    while (true) {
      skipSpace();
      if (eat(')')) return {};
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
        return "'shape' holds something other than non-negative integers";
      int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        const int digit = s_[i_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) return "'shape' entry too large";
        v = v * 10 + digit;
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      dims.push_back(v);
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat(')')) return {};
      return "'shape' tuple is not closed";
    }
  }

  std::string s_;
  size_t i_ = 0;
};

Error npyError(const std::filesystem::path& file, std::string code, const std::string& what,
               std::string hint = kNpyHint) {
  return Error(std::move(code), file.string() + ": " + what, std::move(hint));
}

// numel of a shape, or nullopt on overflow / negative dims.
std::optional<uint64_t> checkedNumel(const std::vector<int64_t>& shape, size_t elem) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
      return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  if (elem != 0 && n > std::numeric_limits<uint64_t>::max() / elem) return std::nullopt;
  return n;
}

void byteswapInPlace(std::vector<unsigned char>& bytes, size_t elem) {
  for (size_t i = 0; i + elem <= bytes.size(); i += elem)
    for (size_t k = 0; k < elem / 2; ++k) std::swap(bytes[i + k], bytes[i + elem - 1 - k]);
}

// Reorders column-major bytes into row-major order.
std::vector<unsigned char> fortranToC(const std::vector<unsigned char>& in,
                                      const std::vector<int64_t>& shape, size_t elem) {
  std::vector<unsigned char> out(in.size());
  const size_t n = shape.size();
  std::vector<uint64_t> fstride(n);
  uint64_t s = 1;
  for (size_t k = 0; k < n; ++k) {
    fstride[k] = s;
    s *= static_cast<uint64_t>(shape[k]);
  }
  const uint64_t numel = elem ? in.size() / elem : 0;
  std::vector<int64_t> idx(n, 0);
  for (uint64_t c = 0; c < numel; ++c) {
    uint64_t f = 0;
    for (size_t k = 0; k < n; ++k) f += static_cast<uint64_t>(idx[k]) * fstride[k];
    std::memcpy(out.data() + c * elem, in.data() + f * elem, elem);
    for (size_t k = n; k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

std::string shapeTuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string readError(std::istream& in) {
  if (in.eof()) return "unexpected end of file";
  return std::strerror(errno);
}

}  // namespace

Result<HostTensor> readNpy(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    return npyError(file, "npy.io", "is a folder, not a .npy file", "give the path of a .npy file");
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int err = errno;
    return npyError(file, "npy.io", std::string("cannot open: ") + std::strerror(err),
                    err == ENOENT ? "check the path; the file does not exist"
                                  : "check the file's permissions");
  }

  unsigned char pre[8] = {};
  in.read(reinterpret_cast<char*>(pre), 8);
  const auto got = in.gcount();
  if (got >= 4 && pre[0] == 'P' && pre[1] == 'K' && pre[2] == 3 && pre[3] == 4)
    return npyError(file, "npy.bad-magic",
                    "is a .npz archive (zip), not a single .npy array",
                    "save one array with numpy.save, or pass one of the .npz's arrays");
  if (got < 8 || std::memcmp(pre, kMagic, sizeof kMagic) != 0)
    return npyError(file, "npy.bad-magic", "not a .npy file (it does not start with \\x93NUMPY)");

  const int major = pre[6], minor = pre[7];
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char l[2];
    if (!in.read(reinterpret_cast<char*>(l), 2))
      return npyError(file, "npy.truncated", "header is truncated");
    header_len = l[0] | (l[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (!in.read(reinterpret_cast<char*>(l), 4))
      return npyError(file, "npy.truncated", "header is truncated");
    header_len = uint32_t(l[0]) | (uint32_t(l[1]) << 8) | (uint32_t(l[2]) << 16) | (uint32_t(l[3]) << 24);
  } else {
    return npyError(file, "npy.version",
                    "unsupported .npy format version " + std::to_string(major) + "." +
                        std::to_string(minor) + " (versions 1.0, 2.0 and 3.0 are read)");
  }
  if (header_len > (1u << 24))
    return npyError(file, "npy.bad-header", "header length " + std::to_string(header_len) +
                                                " is implausibly large; the file is damaged");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len))
    return npyError(file, "npy.truncated", "header is truncated (" + readError(in) + ")");

  HeaderParser::Header h;
  if (std::string why = HeaderParser(header).parse(h); !why.empty())
    return npyError(file, "npy.bad-header", "malformed header: " + why);
  if (!h.descr || !h.fortran_order || !h.shape)
    return npyError(file, "npy.bad-header",
                    "header lacks 'descr', 'fortran_order' or 'shape'");

  const auto pd = parseDescr(*h.descr);
  if (!pd)
    return npyError(file, "npy.unsupported-dtype",
                    "unsupported dtype '" + *h.descr +
                        "'; supported: float32, float64, float16, bfloat16, int8, uint8, int16, "
                        "int32, int64, bool",
                    "convert the array first, e.g. numpy.save(path, array.astype('float32'))");
  const size_t elem = dtypeSize(pd->dtype);
  const auto numel = checkedNumel(*h.shape, elem);
  if (!numel) return npyError(file, "npy.bad-header", "shape " + shapeTuple(*h.shape) + " is too large");
  const uint64_t nbytes = *numel * elem;

  const auto data_start = static_cast<uint64_t>(in.tellg());
  const auto file_size = std::filesystem::file_size(file, ec);
  if (!ec && file_size - data_start != nbytes) {
    const uint64_t have = file_size - data_start;
    if (have < nbytes)
      return npyError(file, "npy.truncated",
                      "data is truncated: shape " + shapeTuple(*h.shape) + " of " + dtypeName(pd->dtype) +
                          " needs " + std::to_string(nbytes) + " bytes, the file has " +
                          std::to_string(have));
    return npyError(file, "npy.trailing-data",
                    std::to_string(have - nbytes) + " bytes follow the array's " +
                        std::to_string(nbytes) + " bytes of data; the file holds more than one array "
                        "or is damaged");
  }

  std::vector<unsigned char> bytes(static_cast<size_t>(nbytes));
  if (nbytes && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(nbytes)))
    return npyError(file, "npy.truncated", "data is truncated (" + readError(in) + ")");

  if (pd->big_endian) byteswapInPlace(bytes, elem);
  if (*h.fortran_order && h.shape->size() > 1) bytes = fortranToC(bytes, *h.shape, elem);
  if (pd->dtype == DType::Bool) {
    for (unsigned char& b : bytes) b = b ? 1 : 0;
  }
  return HostTensor::fromVector<unsigned char>(pd->dtype, *h.shape, std::move(bytes));
}

Status writeNpy(const std::filesystem::path& file, const HostTensor& t) {
  const char* descr = descrOf(t.dtype);
  const size_t elem = dtypeSize(t.dtype);
  if (!descr || elem == 0)
    return Error("npy.unsupported-dtype", "cannot write " + file.string() + ": unknown dtype");
  const auto numel = checkedNumel(t.shape, elem);
  if (!numel || *numel * elem != t.nbytes || (t.nbytes && !t.data))
    return Error("npy.bad-tensor",
                 "cannot write " + file.string() + ": the tensor's " + std::to_string(t.nbytes) +
                     " bytes do not match shape " + shapeTuple(t.shape) + " of " + dtypeName(t.dtype),
                 "this is a bug in the caller; please report it");

  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shapeTuple(t.shape) + ", }";
  // Version 1.0 stores the header length in 16 bits; 2.0 in 32 bits.
  const bool v2 = header.size() + 1 + 10 + 63 > 0xffff;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  std::string pre(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  pre.push_back(static_cast<char>(v2 ? 2 : 1));
  pre.push_back(0);
  const uint32_t len = static_cast<uint32_t>(header.size());
  pre.push_back(static_cast<char>(len & 0xff));
  pre.push_back(static_cast<char>((len >> 8) & 0xff));
  if (v2) {
    pre.push_back(static_cast<char>((len >> 16) & 0xff));
    pre.push_back(static_cast<char>((len >> 24) & 0xff));
  }

  return writeFileAtomically(file, [&](std::ostream& os) -> Status {
    os.write(pre.data(), static_cast<std::streamsize>(pre.size()));
    os.write(header.data(), static_cast<std::streamsize>(header.size()));
    if (t.dtype == DType::Bool) {
      // Normalize to 0/1, which is all NumPy's bool accepts.
      const auto* p = static_cast<const unsigned char*>(t.data);
      std::string b(t.nbytes, '\0');
      for (size_t i = 0; i < t.nbytes; ++i) b[i] = p[i] ? 1 : 0;
      os.write(b.data(), static_cast<std::streamsize>(b.size()));
    } else if (t.nbytes) {
      os.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.nbytes));
    }
    return okStatus();
  });
}

}  // namespace oxport
