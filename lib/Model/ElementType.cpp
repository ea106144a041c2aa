//===- ElementType.cpp - The element types of tensors and scalars ---------===//

#include "linnet/Model/ElementType.h"

#include "llvm/ADT/StringSwitch.h"

using namespace linnet;

std::optional<ElementType> linnet::parseElementType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElementType>>(name)
      .Case("bf16", ElementType::BF16)
      .Case("f16", ElementType::F16)
      .Case("f32", ElementType::F32)
      .Case("f64", ElementType::F64)
      .Case("i1", ElementType::I1)
      .Case("i8", ElementType::I8)
      .Case("i16", ElementType::I16)
      .Case("i32", ElementType::I32)
      .Case("i64", ElementType::I64)
      .Default(std::nullopt);
}

llvm::StringRef linnet::elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::BF16:
    return "bf16";
  case ElementType::F16:
    return "f16";
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::I1:
    return "i1";
  case ElementType::I8:
    return "i8";
  case ElementType::I16:
    return "i16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  }
  return "";
}

bool linnet::isFloatType(ElementType type) {
  return type == ElementType::BF16 || type == ElementType::F16 ||
         type == ElementType::F32;
}

unsigned linnet::elementTypeBytes(ElementType type) {
  switch (type) {
  case ElementType::I1:
  case ElementType::I8:
    return 1;
  case ElementType::BF16:
  case ElementType::F16:
  case ElementType::I16:
    return 2;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F64:
  case ElementType::I64:
    return 8;
  }
  return 0;
}

std::optional<ElementType> linnet::elementFromConfig(llvm::StringRef text) {
  if (text == "bfloat16")
    return ElementType::BF16;
  if (text == "float16" || text == "half")
    return ElementType::F16;
  if (text == "float32" || text == "float")
    return ElementType::F32;
  auto type = parseElementType(text);
  if (type && isFloatType(*type))
    return type;
  return std::nullopt;
}
