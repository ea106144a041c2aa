//===- BoundGeneric.h - A root generic with its bound value -----*- C++ -*-===//

#ifndef LINNET_MODEL_BOUNDGENERIC_H
#define LINNET_MODEL_BOUNDGENERIC_H

#include "linnet/Model/ElementType.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace linnet {

/// What a generic stands for: a size, a list of sizes, an element type.
enum class GenericKind { Dim, Shape, Float };
llvm::StringRef kindName(GenericKind kind);

/// A root generic of a bound model: its value and where that came from.
struct BoundGeneric {
  std::string name;
  GenericKind kind = GenericKind::Dim;
  int64_t size = 0;                       ///< Dim
  ElementType element = ElementType::F32; ///< Float
  std::string origin;                     ///< `config.json: vocab_size`, ...

  std::string valueText() const;
};

} // namespace linnet

#endif // LINNET_MODEL_BOUNDGENERIC_H
