//===- ModelParameters.cpp - Flattening a bound model's parameters --------===//
//
// Walks the block tree from the root as Binding instantiates it: each sub's
// Dim arguments are evaluated in the parent's sizes, each Float argument is
// resolved through the parent's element types, and each param's type is
// evaluated in the instance's sizes.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/ModelParameters.h"

#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace linnet;

namespace {

struct InstanceContext {
  std::map<std::string, ShapeExpr> sizes;
  std::map<std::string, ElementType> elements;
};

/// A bound size; binding has checked it is a positive integer.
int64_t evaluate(const ShapeExpr &size, const InstanceContext &context) {
  auto value = size.substitute(context.sizes);
  if (!value) {
    llvm::consumeError(value.takeError());
    return 0;
  }
  std::optional<Rational> constant = value->constantValue();
  return constant && constant->isInteger() ? constant->numerator() : 0;
}

ElementType resolve(const ElementRef &ref, const InstanceContext &context) {
  if (ref.isGeneric) {
    auto it = context.elements.find(ref.name);
    return it == context.elements.end() ? ElementType::F32 : it->second;
  }
  return parseElementType(ref.name).value_or(ElementType::F32);
}

void collect(const BlockDecl &block, const InstanceContext &context,
             const std::string &prefix, bool states,
             std::vector<ModelParameter> &out) {
  for (const MemberDecl &member : block.members) {
    if (auto *state = std::get_if<StateDecl>(&member); state && states) {
      ModelParameter record;
      record.path = prefix + state->name;
      for (const DimEntry &dim : state->type.dims)
        record.shape.push_back(dim.size ? evaluate(*dim.size, context) : 0);
      record.element = resolve(state->type.element, context);
      record.block = block.name;
      out.push_back(std::move(record));
      continue;
    }
    if (auto *param = std::get_if<ParamDecl>(&member); param && !states) {
      ModelParameter parameter;
      parameter.path = prefix + param->name;
      for (const DimEntry &dim : param->type.dims)
        parameter.shape.push_back(dim.size ? evaluate(*dim.size, context) : 0);
      parameter.element = resolve(param->type.element, context);
      parameter.optional = param->optional;
      parameter.block = block.name;
      out.push_back(std::move(parameter));
      continue;
    }
    auto *sub = std::get_if<SubDecl>(&member);
    if (!sub || !sub->block)
      continue;
    InstanceContext inner;
    for (size_t i = 0; i < sub->args.size() && i < sub->block->generics.size();
         ++i) {
      const GenericArg &arg = sub->args[i];
      const std::string &name = sub->block->generics[i].name;
      if (arg.kind == GenericKind::Dim && arg.size)
        inner.sizes[name] = ShapeExpr::constant(evaluate(*arg.size, context));
      else if (arg.kind == GenericKind::Float)
        inner.elements[name] = resolve(arg.element, context);
    }
    if (!sub->count) {
      collect(*sub->block, inner, prefix + sub->name + ".", states, out);
      continue;
    }
    int64_t copies = evaluate(*sub->count, context);
    for (int64_t index = 0; index < copies; ++index)
      collect(*sub->block, inner,
              prefix + sub->name + "." + std::to_string(index) + ".", states,
              out);
  }
}

} // namespace

static std::vector<ModelParameter> listMembers(const BoundModel &model,
                                               bool states) {
  std::vector<ModelParameter> members;
  if (!model.root)
    return members;
  InstanceContext root;
  for (const BoundGeneric &generic : model.generics) {
    if (generic.kind == GenericKind::Dim)
      root.sizes[generic.name] = ShapeExpr::constant(generic.size);
    else if (generic.kind == GenericKind::Float)
      root.elements[generic.name] = generic.element;
  }
  collect(*model.root, root, "", states, members);
  return members;
}

std::vector<ModelParameter> linnet::listParameters(const Program &,
                                                   const BoundModel &model) {
  return listMembers(model, /*states=*/false);
}

std::vector<ModelParameter> linnet::listStates(const Program &,
                                               const BoundModel &model) {
  return listMembers(model, /*states=*/true);
}
