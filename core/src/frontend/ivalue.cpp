// IValue <-> the core's types: dtypes, host tensors, constants (declared in frontend.h).
#include <cstring>

#include "frontend/frontend.h"

namespace oxport {

DType dtypeFromScalarType(c10::ScalarType s, bool* ok) {
  if (ok) *ok = true;
  switch (s) {
    case c10::kFloat: return DType::Float32;
    case c10::kDouble: return DType::Float64;
    case c10::kHalf: return DType::Float16;
    case c10::kBFloat16: return DType::BFloat16;
    case c10::kChar: return DType::Int8;
    case c10::kByte: return DType::UInt8;
    case c10::kShort: return DType::Int16;
    case c10::kInt: return DType::Int32;
    case c10::kLong: return DType::Int64;
    case c10::kBool: return DType::Bool;
    default:
      if (ok) *ok = false;
      return DType::Float32;
  }
}

c10::ScalarType scalarTypeFromDType(DType d) {
  switch (d) {
    case DType::Float32: return c10::kFloat;
    case DType::Float64: return c10::kDouble;
    case DType::Float16: return c10::kHalf;
    case DType::BFloat16: return c10::kBFloat16;
    case DType::Int8: return c10::kChar;
    case DType::UInt8: return c10::kByte;
    case DType::Int16: return c10::kShort;
    case DType::Int32: return c10::kInt;
    case DType::Int64: return c10::kLong;
    case DType::Bool: return c10::kBool;
  }
  return c10::kFloat;
}

c10::IValue mapTensors(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& fn) {
  if (v.isTensor()) return fn(v.toTensor());
  if (v.isList()) {  // tensor lists too: a GenericList whose element type is Tensor
    const auto& l = v.toList();
    c10::impl::GenericList out(l.elementType());
    out.reserve(l.size());
    for (const auto& e : v.toListRef()) out.push_back(mapTensors(e, fn));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& e : v.toTupleRef().elements()) items.push_back(mapTensors(e, fn));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (v.isGenericDict()) {
    const auto& d = v.toGenericDict();
    c10::impl::GenericDict out(d.keyType(), d.valueType());
    for (const auto& e : d) out.insert(e.key(), mapTensors(e.value(), fn));
    return out;
  }
  return v;
}

HostTensor hostTensorFromAt(const at::Tensor& t0) {
  // A meta tensor (the example run's shapes-only values) has no data: it must never become one.
  if (t0.is_meta()) throw std::logic_error("internal: a meta tensor of the example run was read as a value");
  at::Tensor t = t0.detach();
  if (t.is_quantized()) t = t.dequantize();
  if (!t.is_contiguous()) t = t.contiguous();
  HostTensor h;
  h.dtype = dtypeFromScalarType(t.scalar_type());
  h.shape = t.sizes().vec();
  auto owner = std::make_shared<at::Tensor>(t);
  h.data = owner->data_ptr();
  h.nbytes = static_cast<size_t>(owner->numel()) * owner->element_size();
  h.holder = std::shared_ptr<const void>(owner, owner.get());
  return h;
}

at::Tensor atFromHostTensor(const HostTensor& t) {
  auto opts = at::TensorOptions().dtype(scalarTypeFromDType(t.dtype));
  at::Tensor out = at::empty(t.shape, opts);
  if (t.nbytes) std::memcpy(out.data_ptr(), t.data, t.nbytes);
  return out;
}

ts::Constant constantFromIValue(const c10::IValue& v, bool* ok) {
  *ok = true;
  ts::Constant c;
  if (v.isNone()) return c;
  if (v.isBool()) { c.v = v.toBool(); return c; }
  if (v.isInt()) { c.v = v.toInt(); return c; }
  if (v.isDouble()) { c.v = v.toDouble(); return c; }
  if (v.isString()) { c.v = v.toStringRef(); return c; }
  if (v.isDevice()) { c.v = v.toDevice().str(); return c; }
  if (v.isTensor()) {
    bool dok = true;
    dtypeFromScalarType(v.toTensor().scalar_type(), &dok);
    if (!dok && !v.toTensor().is_quantized()) { *ok = false; return c; }
    c.v = hostTensorFromAt(v.toTensor());
    return c;
  }
  if (v.isList() || v.isTuple()) {
    ts::Constant::List l;
    auto elems = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    for (const auto& e : elems) {
      l.push_back(constantFromIValue(e, ok));
      if (!*ok) return c;
    }
    c.v = std::move(l);
    return c;
  }
  *ok = false;
  return c;
}

}  // namespace oxport
