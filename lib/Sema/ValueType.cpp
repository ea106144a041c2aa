//===- ValueType.cpp - Printing, comparing and instantiating types --------===//
//
// Equality of value types is equality of shape polynomials: `KvHeads *
// HeadDim` never equals `Heads * HeadDim`, whatever a checkpoint binds.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/ValueType.h"

#include "llvm/ADT/StringExtras.h"

using namespace linnet;

bool ValueType::hasSpread() const {
  for (const ValueDim &dim : dims)
    if (dim.isSpread())
      return true;
  return false;
}

std::string linnet::withoutUnknownMarks(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '#' && i + 1 < text.size() && llvm::isDigit(text[i + 1])) {
      while (i + 1 < text.size() && llvm::isDigit(text[i + 1]))
        ++i;
      continue;
    }
    out += text[i];
  }
  return out;
}

std::string linnet::quoteValueType(const ValueType &type) {
  switch (type.kind) {
  case ValueType::Tensor:
  case ValueType::Tuple:
  case ValueType::Invalid:
    return "`" + formatValueType(type) + "`";
  case ValueType::Element:
  case ValueType::Builtin:
  case ValueType::BlockArray:
    return "an " + formatValueType(type);
  default:
    return "a " + formatValueType(type);
  }
}

std::string linnet::describeDifference(const ValueType &actual,
                                       const ValueType &expected) {
  auto count = [](size_t n, const char *noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  if (actual.kind != expected.kind)
    return "";
  if (actual.kind == ValueType::Tuple) {
    if (actual.elements.size() != expected.elements.size())
      return "; it has " + count(actual.elements.size(), "element") +
             ", expected " + std::to_string(expected.elements.size());
    for (size_t i = 0; i < actual.elements.size(); ++i)
      if (!sameType(actual.elements[i], expected.elements[i]))
        return "; element " + std::to_string(i) + " is " +
               quoteValueType(actual.elements[i]) + ", expected " +
               quoteValueType(expected.elements[i]);
    return "";
  }
  if (actual.kind != ValueType::Tensor)
    return "";
  if (!actual.hasSpread() && !expected.hasSpread() &&
      actual.rank() != expected.rank())
    return "; it has " + count(actual.rank(), "dimension") + ", expected " +
           std::to_string(expected.rank());
  for (size_t i = 0; i < actual.rank() && i < expected.rank(); ++i)
    if (actual.dims[i] != expected.dims[i])
      return withoutUnknownMarks("; dimension " + std::to_string(i) + " is `" +
                                 actual.dims[i].str() + "`, expected `" +
                                 expected.dims[i].str() + "`");
  if (!actual.weak && !expected.weak &&
      actual.element.name != expected.element.name)
    return withoutUnknownMarks("; the element type is `" + actual.element.name +
                               "`, expected `" + expected.element.name + "`");
  return "";
}

static std::string formatWithMarks(const ValueType &type);

std::string linnet::formatValueType(const ValueType &type) {
  return withoutUnknownMarks(formatWithMarks(type));
}

static std::string formatWithMarks(const ValueType &type) {
  auto dimsText = [](const DimList &dims) {
    std::string text;
    for (const ValueDim &dim : dims)
      text += (text.empty() ? "" : ", ") + dim.str();
    return text;
  };
  switch (type.kind) {
  case ValueType::Invalid:
    return "<error>";
  case ValueType::Tensor:
    if (type.dims.empty())
      return type.element.name;
    return "Tensor[" + dimsText(type.dims) + "; " + type.element.name + "]";
  case ValueType::Tuple: {
    std::string text = "(";
    for (const ValueType &element : type.elements)
      text += (text.size() > 1 ? ", " : "") + formatWithMarks(element);
    return text + ")";
  }
  case ValueType::Size:
    return "size `" + type.value->str() + "`";
  case ValueType::Element:
    return "element type `" + type.element.name + "`";
  case ValueType::SizeList:
    return "size list `[" + dimsText(type.dims) + "]`";
  case ValueType::Block:
    return "block `" + type.instance->block->name + "`";
  case ValueType::BlockArray:
    return "array `[" + type.instance->block->name + "; " + type.count->str() +
           "]`";
  case ValueType::Function:
    return "function `" + type.name + "`";
  case ValueType::Builtin:
    return "operation `" + type.name + "`";
  }
  return "";
}

bool linnet::sameType(const ValueType &a, const ValueType &b) {
  if (a.isInvalid() || b.isInvalid())
    return true;
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case ValueType::Tensor:
    return a.dims == b.dims &&
           (a.weak || b.weak || a.element.name == b.element.name);
  case ValueType::Tuple:
    if (a.elements.size() != b.elements.size())
      return false;
    for (size_t i = 0; i < a.elements.size(); ++i)
      if (!sameType(a.elements[i], b.elements[i]))
        return false;
    return true;
  case ValueType::Size:
    return true;
  case ValueType::Element:
    return a.element.name == b.element.name;
  case ValueType::SizeList:
    return a.dims == b.dims;
  default:
    return false;
  }
}

ShapeExpr linnet::substituteSize(const ShapeExpr &size,
                                 const Substitution &subst) {
  auto result = size.substitute(subst.sizes);
  if (!result) {
    llvm::consumeError(result.takeError());
    return size; // overflow: keep the symbolic form, binding reports it
  }
  return *result;
}

ValueType linnet::instantiateType(const TypeRef &type,
                                  const Substitution &subst) {
  auto element = [&](const ElementRef &ref) {
    if (ref.isGeneric)
      if (auto it = subst.elements.find(ref.name); it != subst.elements.end())
        return it->second;
    return ref;
  };
  switch (type.kind) {
  case TypeRef::Tensor: {
    DimList dims;
    for (const DimEntry &dim : type.dims) {
      if (dim.size) {
        dims.push_back(ValueDim::of(substituteSize(*dim.size, subst)));
        continue;
      }
      if (auto it = subst.shapes.find(dim.spread); it != subst.shapes.end())
        dims.insert(dims.end(), it->second.begin(), it->second.end());
      else
        dims.push_back(ValueDim{std::nullopt, dim.spread});
    }
    return ValueType::tensor(std::move(dims), element(type.element));
  }
  case TypeRef::Scalar:
    return ValueType::tensor({}, element(type.element));
  case TypeRef::Tuple: {
    std::vector<ValueType> elements;
    for (const TypeRef &part : type.elements)
      elements.push_back(instantiateType(part, subst));
    return ValueType::tuple(std::move(elements));
  }
  }
  return ValueType::invalid();
}

ValueType linnet::substituteType(const ValueType &type,
                                 const Substitution &subst) {
  ValueType result = type;
  result.dims.clear();
  for (const ValueDim &dim : type.dims) {
    if (dim.size) {
      result.dims.push_back(ValueDim::of(substituteSize(*dim.size, subst)));
    } else if (auto it = subst.shapes.find(dim.spread);
               it != subst.shapes.end()) {
      result.dims.insert(result.dims.end(), it->second.begin(),
                         it->second.end());
    } else {
      result.dims.push_back(dim);
    }
  }
  if (type.element.isGeneric)
    if (auto it = subst.elements.find(type.element.name);
        it != subst.elements.end())
      result.element = it->second;
  for (ValueType &element : result.elements)
    element = substituteType(element, subst);
  return result;
}

bool linnet::isRuntimeSize(const ShapeExpr &size) {
  for (const ShapeSymbol &symbol : size.symbols())
    if (symbol.rank >= kRuntimeSymbolRank)
      return true;
  return false;
}
