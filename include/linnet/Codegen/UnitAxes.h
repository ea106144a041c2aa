//===- UnitAxes.h - reshapes that only add or drop axes of size 1 ---------===//
//
// A reshape group of axes of size 1 beside at most one wider axis moves no
// element: a reader of the reshape may read its source instead, the group's
// index carried by that one axis and the units at 0 (a kept axis of a sum,
// a unit row dropped before a routed expert's product).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_UNITAXES_H
#define LINNET_CODEGEN_UNITAXES_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace linnet::codegen {

/// The axis of reassociation `group` of `shape` that carries the group's
/// index: its one axis not statically of size 1, or its first where all are
/// 1; none where two or more are wider (a reshape that moves elements).
inline std::optional<int64_t> indexCarryingAxis(llvm::ArrayRef<int64_t> shape,
                                                llvm::ArrayRef<int64_t> group) {
  std::optional<int64_t> wide;
  for (int64_t axis : group) {
    if (shape[axis] == 1)
      continue;
    if (wide)
      return std::nullopt;
    wide = axis;
  }
  return wide ? wide : std::optional<int64_t>(group.front());
}

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_UNITAXES_H
