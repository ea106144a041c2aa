//===- ElementType.h - The element types of tensors and scalars -*- C++ -*-===//

#ifndef LINNET_MODEL_ELEMENTTYPE_H
#define LINNET_MODEL_ELEMENTTYPE_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace linnet {

enum class ElementType { BF16, F16, F32, F64, I1, I8, I16, I32, I64 };
std::optional<ElementType> parseElementType(llvm::StringRef name);
llvm::StringRef elementTypeName(ElementType type);
bool isFloatType(ElementType type);
/// A Float generic's value from a config's dtype string (`bfloat16`,
/// `float32`, or a Linnet name such as `bf16`).
std::optional<ElementType> elementFromConfig(llvm::StringRef text);
/// Bytes per element (i1 counts as one byte).
unsigned elementTypeBytes(ElementType type);

} // namespace linnet

#endif // LINNET_MODEL_ELEMENTTYPE_H
