#include "convert/number_list.h"

#include <vector>

#include "convert/util.h"

namespace oxport::convert {

Result<std::string> numberListTensor(Context& ctx, const Value* list, DType dt) {
  if (list->elem_type == ts::ValueType::Int && dt == DType::Int64) return ctx.intsTensor(list);
  OXPORT_ASSIGN(auto elems, ctx.listElements(list));
  std::vector<std::string> parts;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(e, dt));
    parts.push_back(ctx.reshape(t, {1}));
  }
  if (parts.empty()) return std::string();
  return parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
}

}  // namespace oxport::convert
