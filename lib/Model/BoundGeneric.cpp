//===- BoundGeneric.cpp - A root generic with its bound value -------------===//

#include "linnet/Model/BoundGeneric.h"

using namespace linnet;

llvm::StringRef linnet::kindName(GenericKind kind) {
  switch (kind) {
  case GenericKind::Dim:
    return "Dim";
  case GenericKind::Shape:
    return "Shape";
  case GenericKind::Float:
    return "Float";
  }
  return "";
}

std::string BoundGeneric::valueText() const {
  if (kind == GenericKind::Float)
    return elementTypeName(element).str();
  return std::to_string(size);
}
