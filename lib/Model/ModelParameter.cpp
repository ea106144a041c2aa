//===- ModelParameter.cpp - A parameter or state of a bound model ---------===//

#include "linnet/Model/ModelParameter.h"

using namespace linnet;

llvm::StringRef ModelParameter::name() const {
  llvm::StringRef whole(path);
  size_t dot = whole.rfind('.');
  return dot == llvm::StringRef::npos ? whole : whole.drop_front(dot + 1);
}

uint64_t ModelParameter::elementCount() const {
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= uint64_t(dim);
  return count;
}

std::string ModelParameter::typeText() const {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "] " + elementTypeName(element).str();
}
