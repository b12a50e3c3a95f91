// An enum's members and their names in one table, read both ways: the name of a member, the
// member a name stands for. Internal to the core (the public headers declare the functions).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace oxport {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `e` in `table`; `unknown` for a value the table does not list.
template <typename E, size_t N>
const char* enumName(const EnumName<E> (&table)[N], E e, const char* unknown = "?") {
  for (const auto& entry : table)
    if (entry.value == e) return entry.name;
  return unknown;
}

// The member named exactly `name` (a caller that accepts other spellings folds them first).
template <typename E, size_t N>
std::optional<E> enumNamed(const EnumName<E> (&table)[N], const std::string& name) {
  for (const auto& entry : table)
    if (name == entry.name) return entry.value;
  return std::nullopt;
}

}  // namespace oxport
