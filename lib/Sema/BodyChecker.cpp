//===- BodyChecker.cpp - Statements, expressions and calls ----------------===//
//
// Checks one function at a time against the declarations of its block:
// local scopes, statements, expressions, calls of sub-block functions with
// generic inference, and state writes. Built-in operations are typed in
// Builtins.cpp. Each function's dataflow is recorded as it is checked.
//
//===----------------------------------------------------------------------===//

#include "BodyCheckerImpl.h"

#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/ShapeConverter.h"

#include <functional>
#include <set>

using namespace linnet;
using namespace linnet::detail;
namespace x3 = boost::spirit::x3;

std::string Obligation::statement() const {
  if (kind == Integral)
    return "`" + lhs.str() + "` is an integer";
  if (kind == Divides)
    return "`" + lhs.str() + "` divides `" + rhs.str() + "`";
  if (kind == AtMost)
    return "`" + lhs.str() + "` <= `" + rhs.str() + "`";
  return "`" + lhs.str() + "` == `" + rhs.str() + "`";
}

/// What an expression is, after "`source` is": its type as messages quote
/// it, without repeating the source (`[H, H]` is "a size list", not "a size
/// list `[H, H]`").
static std::string describeAs(const std::string &source,
                              const ValueType &type) {
  std::string quoted = quoteValueType(type);
  std::string echo = " `" + source + "`";
  if (quoted.size() > echo.size() &&
      quoted.compare(quoted.size() - echo.size(), echo.size(), echo) == 0)
    return quoted.substr(0, quoted.size() - echo.size());
  return quoted;
}

//===----------------------------------------------------------------------===//
// Values, scopes and the graph
//===----------------------------------------------------------------------===//

Value FunctionChecker::node(const std::string &label,
                            llvm::ArrayRef<Value> inputs, ValueType result,
                            llvm::SMRange loc) {
  if (result.isInvalid())
    return Value::invalid();
  GraphNode graphNode;
  graphNode.label = label;
  graphNode.loc = loc;
  for (const Value &input : inputs)
    if (input.id >= 0)
      graphNode.inputs.push_back(input.id);
  Value value{std::move(result), -1};
  addOutputs(graphNode, value);
  graph.nodes.push_back(std::move(graphNode));
  return value;
}

void FunctionChecker::addOutputs(GraphNode &graphNode, Value &value) {
  if (value.type.kind != ValueType::Tensor &&
      value.type.kind != ValueType::Tuple)
    return;
  value.id = int(graph.values.size());
  graph.values.push_back(value.type);
  graph.valueNames.push_back("");
  graphNode.outputs.push_back(value.id);
}

void FunctionChecker::nameValue(const Value &value, const std::string &name) {
  if (value.id >= 0 && graph.valueNames[value.id].empty())
    graph.valueNames[value.id] = name;
}

Value FunctionChecker::element(const Value &tuple, size_t index) {
  Value part{tuple.type.elements[index], -1};
  if (tuple.id >= 0 && part.type.kind == ValueType::Tensor) {
    // Tuple parts are drawn as the tuple's edge; they share its node.
    part.id = tuple.id;
  }
  return part;
}

ShapeExpr FunctionChecker::runtimeSymbol(const std::string &name) {
  unsigned rank = kRuntimeSymbolRank + nextRuntimeSymbol++;
  return ShapeExpr::symbol({rank, name});
}

const Value *FunctionChecker::lookupLocal(llvm::StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    if (auto found = it->find(name); found != it->end())
      return &found->second;
  return nullptr;
}

void FunctionChecker::bindLocal(const ast::Identifier &name, Value value) {
  if (name.name == "_")
    return;
  nameValue(value, name.name);
  value.declared = name.range;
  scopes.back()[name.name] = std::move(value);
}

void FunctionChecker::noteDeclaration(const std::string &name,
                                      llvm::SMRange declared) {
  if (declared.isValid())
    diags.report(declared, diag::DeclaredHere, name);
}

void FunctionChecker::noteDeclaration(const ast::Expr &expr) {
  // A name's declaration, when the expression is just a name: a local, a
  // parameter, a member or a generic.
  const auto *name = boost::get<ast::Identifier>(&expr);
  if (!name)
    return;
  if (const Value *local = lookupLocal(name->name)) {
    noteDeclaration(name->name, local->declared);
    return;
  }
  if (const MemberDecl *member = block.findMember(name->name)) {
    noteDeclaration(name->name,
                    std::visit([](const auto &m) { return m.loc; }, *member));
    return;
  }
  if (const GenericDecl *generic = findGeneric(name->name))
    noteDeclaration(name->name, generic->loc);
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

Value FunctionChecker::resolveName(const ast::Identifier &name, bool callee) {
  if (const Value *local = lookupLocal(name.name))
    return *local;
  if (const MemberDecl *member = block.findMember(name.name)) {
    if (auto *sub = std::get_if<SubDecl>(member))
      return Value{subInstance(*sub), -1};
    if (auto *param = std::get_if<ParamDecl>(member))
      return memberRead("param " + param->name, param->type, name.range);
    if (auto *state = std::get_if<StateDecl>(member))
      return memberRead("state " + state->name, state->type, name.range);
    ValueType type;
    type.kind = ValueType::Function;
    type.name = std::get<FnDecl>(*member).name;
    return Value{type, -1};
  }
  if (const GenericDecl *generic = findGeneric(name.name)) {
    if (generic->kind == GenericKind::Dim)
      return Value{ValueType::size(ShapeExpr::symbol(generic->symbol())), -1};
    if (generic->kind == GenericKind::Float) {
      ValueType type;
      type.kind = ValueType::Element;
      type.element = ElementRef{generic->name, true};
      return Value{type, -1};
    }
    diags.report(name.range, diag::ShapeNotExpected, name.name, "value");
    diags.report(generic->loc, diag::DeclaredHere, name.name);
    return Value::invalid();
  }
  if (parseElementType(name.name)) {
    ValueType type;
    type.kind = ValueType::Element;
    type.element = ElementRef{name.name, false};
    return Value{type, -1};
  }
  if (lookupBuiltin(name.name)) {
    ValueType type;
    type.kind = ValueType::Builtin;
    type.name = name.name;
    return Value{type, -1};
  }
  diags.report(name.range, diag::UnknownName, name.name,
               callee ? "; it is neither a function of `" + block.name +
                            "` nor a built-in operation"
                      : "");
  return Value::invalid();
}

const GenericDecl *FunctionChecker::findGeneric(llvm::StringRef name) const {
  for (const GenericDecl &generic : fn.generics)
    if (generic.name == name)
      return &generic;
  return block.findGeneric(name);
}

ValueType FunctionChecker::subInstance(const SubDecl &sub) {
  auto instance = std::make_shared<BlockInstance>();
  instance->block = sub.block;
  instance->path = sub.name;
  for (size_t i = 0; i < sub.args.size(); ++i) {
    const GenericDecl &generic = sub.block->generics[i];
    const GenericArg &arg = sub.args[i];
    if (generic.kind == GenericKind::Dim && arg.size)
      instance->generics.sizes[generic.name] = *arg.size;
    else if (generic.kind == GenericKind::Float)
      instance->generics.elements[generic.name] = arg.element;
  }
  ValueType type;
  type.kind = sub.count ? ValueType::BlockArray : ValueType::Block;
  type.instance = std::move(instance);
  type.count = sub.count;
  return type;
}

Value FunctionChecker::memberRead(const std::string &label, const TypeRef &type,
                                  llvm::SMRange loc) {
  if (auto it = memberValues.find(label); it != memberValues.end())
    return it->second;
  Value value = node(label, {}, instantiateType(type, {}), loc);
  memberValues[label] = value;
  return value;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void FunctionChecker::checkBody(const ast::Body &body) {
  scopes.emplace_back();
  for (const ast::Statement &statement : body.statements) {
    if (returned) {
      diags.report(rangeOfStatement(statement), diag::UnreachableCode,
                   "statement after `return`");
      break;
    }
    boost::apply_visitor(
        [&](const auto &node) { checkStatement(unwrap(node)); }, statement);
  }
  scopes.pop_back();
}

llvm::SMRange FunctionChecker::rangeOfStatement(const ast::Statement &s) {
  return boost::apply_visitor(
      [](const auto &node) { return unwrap(node).range; }, s);
}

void FunctionChecker::checkStatement(const ast::LetStmt &let) {
  Value value = check(let.value);
  if (let.annotation) {
    // The annotation is a declaration in this function's scope.
    ValueType declared = annotationType(*let.annotation);
    value = expectTensor(value, declared, ast::rangeOf(let.value));
    if (!declared.isInvalid() && !value.type.isInvalid() &&
        !sameType(declared, value.type))
      diags.report(ast::rangeOf(let.value), diag::AnnotationMismatch,
                   quoteValueType(value.type), quoteValueType(declared),
                   describeDifference(value.type, declared));
    else if (value.type.weak && declared.isTensor()) {
      // `let scale: f32 = 0.5` is an `f32`, no longer a weak literal.
      value.type.weak = false;
      value.type.element = declared.element;
    }
  }
  bindPattern(let.pattern, value);
}

void FunctionChecker::bindPattern(const ast::Pattern &pattern,
                                  const Value &value) {
  if (auto *name = boost::get<ast::Identifier>(&pattern)) {
    bindLocal(*name, value);
    return;
  }
  const auto &tuple =
      boost::get<x3::forward_ast<ast::TuplePattern>>(pattern).get();
  if (value.type.isInvalid()) {
    for (const ast::Pattern &element : tuple.elements)
      bindPattern(element, Value::invalid());
    return;
  }
  if (value.type.kind != ValueType::Tuple ||
      value.type.elements.size() != tuple.elements.size()) {
    diags.report(
        tuple.range, diag::TupleArity, unsigned(tuple.elements.size()),
        quoteValueType(value.type),
        value.type.kind == ValueType::Tuple
            ? "the tuple has " + std::to_string(value.type.elements.size()) +
                  (value.type.elements.size() == 1 ? " element" : " elements")
            : "only a tuple is taken apart by a pattern");
    for (const ast::Pattern &element : tuple.elements)
      bindPattern(element, Value::invalid());
    return;
  }
  for (size_t i = 0; i < tuple.elements.size(); ++i)
    bindPattern(tuple.elements[i], element(value, i));
}

void FunctionChecker::checkStatement(const ast::RequireStmt &require) {
  std::optional<ShapeExpr> lhs = shapeValue(require.lhs);
  std::optional<ShapeExpr> rhs = shapeValue(require.rhs);
  if (!lhs || !rhs)
    return;
  bool atMost = require.relation == "<=";
  obligation(atMost ? Obligation::AtMost : Obligation::Equal, *lhs, *rhs,
             "required by the function", require.range,
             "`" + sourceText(require.range) + "` fails");
}

void FunctionChecker::checkStatement(const ast::ReturnStmt &ret) {
  Value value = check(ret.value);
  if (fn.result)
    value = expectTensor(value, instantiateType(*fn.result, {}),
                         ast::rangeOf(ret.value));
  returned = true;
  returnRange = ret.range;
  for (int id : flattenIds(value))
    graph.results.push_back(id);
  if (value.type.isInvalid())
    return;
  if (!fn.result) {
    diags.report(ast::rangeOf(ret.value), diag::ReturnMismatch, fn.name,
                 quoteValueType(value.type), "to return nothing",
                 "; declare the result with `-> " +
                     formatValueType(value.type) + "`");
    diags.report(fn.loc, diag::DeclaredHere, fn.name);
    return;
  }
  ValueType declared = instantiateType(*fn.result, {});
  if (!sameType(declared, value.type)) {
    diags.report(ast::rangeOf(ret.value), diag::ReturnMismatch, fn.name,
                 quoteValueType(value.type), quoteValueType(declared),
                 describeDifference(value.type, declared));
    diags.report(fn.result->loc, diag::BoundBy,
                 "the result of `" + fn.name + "` is declared here");
  }
}

std::vector<int> FunctionChecker::flattenIds(const Value &value) {
  if (value.id >= 0)
    return {value.id};
  return {};
}

void FunctionChecker::checkStatement(const ast::AssignStmt &assign) {
  Value value = check(assign.value);
  const std::string &name = assign.target.name;
  // A local: rebinding keeps the type, so loops stay well typed.
  if (const Value *local = lookupLocal(name)) {
    if (!assign.indices.empty()) {
      diags.report(assign.target.range, diag::NotAssignable, name,
                   "a local value is rebound whole, not written in place");
      noteDeclaration(name, local->declared);
      return;
    }
    if (!sameType(local->type, value.type)) {
      diags.report(ast::rangeOf(assign.value), diag::RebindMismatch, name,
                   quoteValueType(local->type), quoteValueType(value.type));
      noteDeclaration(name, local->declared);
      // Neither type is trusted from here on, so later uses report nothing.
      for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
        if (auto found = it->find(name); found != it->end()) {
          found->second.type = ValueType::invalid();
          found->second.id = -1;
          break;
        }
      return;
    }
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
      if (auto found = it->find(name); found != it->end()) {
        nameValue(value, name);
        found->second = value;
        break;
      }
    return;
  }
  const MemberDecl *member = block.findMember(name);
  const StateDecl *state = member ? std::get_if<StateDecl>(member) : nullptr;
  if (member && !state) {
    diags.report(assign.target.range, diag::NotAssignable, name,
                 "only locals and `state` members can be assigned");
    noteDeclaration(name,
                    std::visit([](const auto &m) { return m.loc; }, *member));
    return;
  }
  if (!state) {
    diags.report(assign.target.range, diag::UnknownName, name, "");
    return;
  }
  if (!writesState) {
    stateWriteLoc = assign.target.range;
    stateWritten = name;
  }
  writesState = true;
  // The place as written, `cache_k[:, :, pos:pos + 1, :]`: from the name to
  // the `=`.
  llvm::SMRange valueRange = ast::rangeOf(assign.value);
  llvm::StringRef place =
      llvm::StringRef(assign.target.range.Start.getPointer(),
                      valueRange.Start.getPointer() -
                          assign.target.range.Start.getPointer())
          .rtrim();
  if (place.ends_with("="))
    place = place.drop_back().rtrim();
  llvm::SMRange placeRange(
      assign.target.range.Start,
      llvm::SMLoc::getFromPointer(place.data() + place.size()));
  Value target =
      memberRead("state " + state->name, state->type, assign.target.range);
  for (const std::vector<ast::Index> &indices : assign.indices)
    target = index(target, indices, placeRange);
  value = expectTensor(value, target.type, valueRange);
  if (!target.type.isInvalid() && !value.type.isInvalid() &&
      !sameType(target.type, value.type)) {
    diags.report(valueRange, diag::StateWriteMismatch,
                 quoteValueType(value.type), place.str(),
                 quoteValueType(target.type),
                 describeDifference(value.type, target.type));
    diags.report(state->loc, diag::DeclaredHere, name);
    return;
  }
  node("write state " + name, {value}, ValueType::tuple({}), assign.range);
}

void FunctionChecker::checkStatement(const ast::ForStmt &loop) {
  Value sequence = check(loop.sequence);
  if (sequence.type.isInvalid())
    return;
  if (sequence.type.kind != ValueType::BlockArray) {
    diags.report(ast::rangeOf(loop.sequence), diag::NotIterable,
                 quoteValueType(sequence.type));
    noteDeclaration(loop.sequence);
    return;
  }
  ValueType each = sequence.type;
  each.kind = ValueType::Block;
  each.instance = std::make_shared<BlockInstance>(*sequence.type.instance);
  each.instance->path = loop.variable.name;
  loopRepeat.push_back(sequence.type.count->str());
  scopes.emplace_back();
  scopes.back()[loop.variable.name] = Value{each, -1};
  bool wasReturned = returned;
  checkBody(loop.body);
  if (returned && !wasReturned) {
    // The body is unrolled: a `return` in it skips the later copies.
    diags.report(returnRange, diag::UnreachableCode,
                 "`return` inside a `for` body, which is repeated for each "
                 "sub-block");
    returnedInLoop = true;
  }
  returned = wasReturned;
  scopes.pop_back();
  loopRepeat.pop_back();
}

ValueType FunctionChecker::annotationType(const ast::Type &type) {
  if (auto *name = boost::get<ast::Identifier>(&type)) {
    if (parseElementType(name->name))
      return ValueType::scalar(name->name);
    if (const GenericDecl *generic = findGeneric(name->name);
        generic && generic->kind == GenericKind::Float)
      return ValueType::tensor({}, ElementRef{name->name, true});
  }
  if (auto *tuple = boost::get<x3::forward_ast<ast::TupleType>>(&type)) {
    std::vector<ValueType> elements;
    for (const ast::Type &element : tuple->get().elements) {
      elements.push_back(annotationType(element));
      if (elements.back().isInvalid())
        return ValueType::invalid();
    }
    return ValueType::tuple(std::move(elements));
  }
  if (auto *tensor = boost::get<ast::TensorType>(&type)) {
    DimList dims;
    for (const ast::ShapeItem &item : tensor->dims) {
      if (auto *spread = boost::get<ast::ShapeSpread>(&item)) {
        const GenericDecl *shape = findGeneric(spread->name.name);
        if (!shape) {
          diags.report(spread->name.range, diag::UnknownGeneric,
                       spread->name.name);
          return ValueType::invalid();
        }
        if (shape->kind != GenericKind::Shape) {
          diags.report(spread->range, diag::KindMismatch, spread->name.name,
                       "a `" + kindName(shape->kind).str() + "` generic",
                       "a `Shape` to spread");
          diags.report(shape->loc, diag::DeclaredHere, shape->name);
          return ValueType::invalid();
        }
        dims.push_back(ValueDim{std::nullopt, spread->name.name});
        continue;
      }
      auto size = shapeValue(boost::get<ast::ShapeSum>(item));
      if (!size)
        return ValueType::invalid();
      dims.push_back(ValueDim::of(*size));
    }
    bool generic = false;
    if (const GenericDecl *decl = findGeneric(tensor->elementType.name)) {
      if (decl->kind != GenericKind::Float) {
        diags.report(tensor->elementType.range, diag::KindMismatch, decl->name,
                     "a `" + kindName(decl->kind).str() + "` generic",
                     "an element type");
        diags.report(decl->loc, diag::DeclaredHere, decl->name);
        return ValueType::invalid();
      }
      generic = true;
    }
    if (!generic && !parseElementType(tensor->elementType.name)) {
      diags.report(tensor->elementType.range, diag::UnknownType,
                   tensor->elementType.name);
      return ValueType::invalid();
    }
    return ValueType::tensor(dims,
                             ElementRef{tensor->elementType.name, generic});
  }
  diags.report(ast::rangeOf(type), diag::UnsupportedAnnotation,
               sourceText(ast::rangeOf(type)));
  return ValueType::invalid();
}

std::optional<ShapeExpr> FunctionChecker::shapeValue(const ast::ShapeSum &sum) {
  // Shape expressions in annotations use the same names as sizes in bodies.
  return ShapeConverter(
             diags,
             [&](const ast::Identifier &name) { return genericSize(name); })
      .convert(sum);
}

std::optional<ShapeExpr>
FunctionChecker::genericSize(const ast::Identifier &name) {
  // As in declarations: a `Dim` generic, never a `Float` or a `Shape`.
  return ShapeConverter::sizeOfGeneric(name, findGeneric(name.name), diags);
}

std::optional<ShapeExpr>
FunctionChecker::arithmetic(llvm::Expected<ShapeExpr> result,
                            llvm::SMRange loc) {
  return ShapeConverter::check(std::move(result), loc, {}, diags);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value FunctionChecker::check(const ast::Expr &expr) {
  Value value = boost::apply_visitor(
      [&](const auto &node) -> Value { return checkNode(unwrap(node)); }, expr);
  annotations.types[&expr] = value.type;
  return value;
}

Value FunctionChecker::checkNode(const ast::IntegerLiteral &literal) {
  int64_t value;
  if (llvm::StringRef(literal.text).getAsInteger(10, value))
    return Value::invalid(); // reported by the parser
  return Value{ValueType::size(ShapeExpr::constant(value)), -1};
}

Value FunctionChecker::checkNode(const ast::FloatLiteral &) {
  return Value{ValueType::scalar("f32", /*weak=*/true), -1};
}

Value FunctionChecker::checkNode(const ast::BoolLiteral &) {
  return Value{ValueType::scalar("i1", /*weak=*/false), -1};
}

Value FunctionChecker::checkNode(const ast::Identifier &name) {
  return resolveName(name);
}

Value FunctionChecker::checkNode(const ast::UnaryExpr &unary) {
  Value operand = check(unary.operand);
  if (operand.type.isInvalid())
    return operand;
  if (unary.op == "-") {
    if (operand.type.kind == ValueType::Size) {
      auto value =
          arithmetic(ShapeExpr::negate(*operand.type.value), unary.range);
      return value ? Value{ValueType::size(*value), -1} : Value::invalid();
    }
    Value tensor = asTensor(operand, ast::rangeOf(unary.operand));
    if (tensor.type.isInvalid())
      return tensor;
    ValueType result = tensor.type;
    if (result.value) {
      auto negated = ShapeExpr::negate(*result.value);
      result.value =
          negated ? std::optional<ShapeExpr>(*negated) : std::nullopt;
      if (!negated)
        llvm::consumeError(negated.takeError());
    }
    return node("neg", {tensor}, result, unary.range);
  }
  Value tensor = asTensor(operand, ast::rangeOf(unary.operand));
  if (tensor.type.isInvalid())
    return tensor;
  if (tensor.type.element.name != "i1") {
    diags.report(ast::rangeOf(unary.operand), diag::OperandType,
                 "the operand of `!`", quoteValueType(tensor.type),
                 "an `i1` tensor");
    return Value::invalid();
  }
  return node("not", {tensor}, tensor.type, unary.range);
}

Value FunctionChecker::checkNode(const ast::TupleExpr &tuple) {
  std::vector<ValueType> types;
  std::vector<Value> parts;
  for (const ast::Expr &element : tuple.elements) {
    // A tuple holds tensors and tuples; a size in one is an integer scalar.
    Value part = check(element);
    if (part.type.kind != ValueType::Tuple)
      part = asTensor(part, ast::rangeOf(element));
    parts.push_back(part);
    types.push_back(parts.back().type);
  }
  // A tuple of tensors is one edge in the graph: the producers' outputs.
  Value value{ValueType::tuple(std::move(types)), -1};
  for (const Value &part : parts)
    if (part.type.isInvalid())
      return Value::invalid();
  return node("tuple", parts, value.type, tuple.range);
}

Value FunctionChecker::checkNode(const ast::ListExpr &list) {
  ValueType type;
  type.kind = ValueType::SizeList;
  for (const ast::ListItem &item : list.items) {
    if (item.spread) {
      const auto *name = boost::get<ast::Identifier>(&item.value);
      const GenericDecl *generic = name ? findGeneric(name->name) : nullptr;
      if (!generic || generic->kind != GenericKind::Shape) {
        diags.report(item.range, diag::KindMismatch, sourceText(item.range),
                     "not a `Shape` generic", "a `*Shape` spread");
        return Value::invalid();
      }
      type.dims.push_back(ValueDim{std::nullopt, name->name});
      continue;
    }
    Value value = check(item.value);
    if (value.type.isInvalid())
      return value;
    auto size = staticSize(value, ast::rangeOf(item.value));
    if (!size)
      return Value::invalid();
    type.dims.push_back(ValueDim::of(*size));
  }
  return Value{type, -1};
}

std::optional<ShapeExpr> FunctionChecker::staticSize(const Value &value,
                                                     llvm::SMRange loc) {
  if (value.type.isInvalid())
    return std::nullopt;
  if (value.type.kind == ValueType::Size)
    return value.type.value;
  if (reportElementAsValue(value, loc, "a size"))
    return std::nullopt;
  std::string what = describeAs(sourceText(loc), value.type);
  if (value.type.isScalar() && value.type.value &&
      isRuntimeSize(*value.type.value))
    what += ", known only when running";
  diags.report(loc, diag::NotStaticSize, sourceText(loc), what);
  return std::nullopt;
}

bool FunctionChecker::reportElementAsValue(const Value &value,
                                           llvm::SMRange loc,
                                           const std::string &expected) {
  if (value.type.kind != ValueType::Element)
    return false;
  const std::string &name = value.type.element.name;
  const GenericDecl *generic =
      value.type.element.isGeneric ? findGeneric(name) : nullptr;
  std::string kind = generic ? "a `Float` generic"
                     : isFloatElement(value.type.element)
                         ? "a float element type"
                         : "an integer element type";
  diags.report(loc, diag::KindMismatch, sourceText(loc), kind, expected);
  if (generic)
    diags.report(generic->loc, diag::DeclaredHere, name);
  return true;
}

Value FunctionChecker::checkNode(const ast::MemberExpr &member) {
  Value base = check(member.base);
  if (base.type.isInvalid())
    return base;
  if (base.type.kind != ValueType::Block) {
    diags.report(member.member.range, diag::NoSuchMember,
                 quoteValueType(base.type), member.member.name,
                 base.type.kind == ValueType::BlockArray
                     ? "call it on each sub-block, iterating over `" +
                           sourceText(ast::rangeOf(member.base)) +
                           "` with `for`"
                     : "only sub-blocks have functions");
    return Value::invalid();
  }
  const BlockDecl &target = *base.type.instance->block;
  if (const MemberDecl *candidate = target.findMember(member.member.name))
    if (auto *fn = std::get_if<FnDecl>(candidate)) {
      if (!fn->isPublic) {
        diags.report(member.member.range, diag::PrivateFunction, fn->name,
                     target.name);
        diags.report(fn->loc, diag::DeclaredHere, fn->name);
        return Value::invalid();
      }
      ValueType type;
      type.kind = ValueType::Function;
      type.name = fn->name;
      type.instance = base.type.instance;
      return Value{type, -1};
    }
  std::string functions;
  for (const MemberDecl &candidate : target.members)
    if (auto *fn = std::get_if<FnDecl>(&candidate); fn && fn->isPublic)
      functions += (functions.empty() ? "`" : ", `") + fn->name + "`";
  diags.report(member.member.range, diag::NoSuchMember,
               "block `" + target.name + "`", member.member.name,
               functions.empty() ? "it has no `pub fn`"
                                 : "its public functions are " + functions);
  return Value::invalid();
}

Value FunctionChecker::checkNode(const ast::BinaryExpr &binary) {
  Value lhs = check(binary.lhs);
  Value rhs = check(binary.rhs);
  if (lhs.type.isInvalid() || rhs.type.isInvalid())
    return Value::invalid();
  const std::string &op = binary.op;

  // Sizes compute sizes: `HeadDim / 4`, `B * S`.
  if (lhs.type.kind == ValueType::Size && rhs.type.kind == ValueType::Size &&
      (op == "+" || op == "-" || op == "*" || op == "/")) {
    const ShapeExpr &a = *lhs.type.value, &b = *rhs.type.value;
    if (op == "/" && !b.constantValue())
      return Value{ValueType::size(quotient(a, b, binary.range)), -1};
    auto value = arithmetic(op == "+"   ? ShapeExpr::add(a, b)
                            : op == "-" ? ShapeExpr::subtract(a, b)
                            : op == "*" ? ShapeExpr::multiply(a, b)
                                        : ShapeExpr::divide(a, b),
                            binary.range);
    if (!value)
      return Value::invalid();
    if (op == "/" && !value->constantValue())
      obligation(Obligation::Integral, *value, {}, "a size divides exactly",
                 binary.range);
    return Value{ValueType::size(simplifyQuotients(*value)), -1};
  }
  if (op == "@")
    return matmul(lhs, rhs, binary.rhs, ast::rangeOf(binary.lhs),
                  ast::rangeOf(binary.rhs), binary.range);

  Value a = asTensor(lhs, ast::rangeOf(binary.lhs));
  Value b = asTensor(rhs, ast::rangeOf(binary.rhs));
  if (a.type.isInvalid() || b.type.isInvalid())
    return Value::invalid();
  bool logical = op == "&&" || op == "||";
  bool comparison = op == "==" || op == "!=" || op == "<" || op == "<=" ||
                    op == ">" || op == ">=";
  std::string verb = logical      ? "combine"
                     : comparison ? "compare"
                     : op == "+"  ? "add"
                     : op == "-"  ? "subtract"
                     : op == "*"  ? "multiply"
                     : op == "/"  ? "divide"
                                  : "take the remainder of";
  auto dims = broadcast(a.type, b.type, verb, binary.range);
  if (!dims)
    return Value::invalid();
  auto element = commonElement(a.type, b.type, verb, binary.range);
  if (!element)
    return Value::invalid();
  if (logical && element->name != "i1") {
    bool left = a.type.element.name != "i1";
    diags.report(ast::rangeOf(left ? binary.lhs : binary.rhs),
                 diag::OperandType,
                 std::string(left ? "the left" : "the right") +
                     " operand of `" + op + "`",
                 quoteValueType(left ? a.type : b.type), "an `i1` tensor");
    return Value::invalid();
  }
  ValueType result = ValueType::tensor(
      *dims, comparison || logical ? ElementRef{"i1", false} : *element);
  result.weak = a.type.weak && b.type.weak && !comparison;
  // Integer scalars keep their symbolic value through + - *.
  if (!comparison && !logical && a.type.value && b.type.value &&
      (op == "+" || op == "-" || op == "*")) {
    auto value = op == "+" ? ShapeExpr::add(*a.type.value, *b.type.value)
                 : op == "-"
                     ? ShapeExpr::subtract(*a.type.value, *b.type.value)
                     : ShapeExpr::multiply(*a.type.value, *b.type.value);
    if (value)
      result.value = *value;
    else
      llvm::consumeError(value.takeError());
  }
  return node(op, {a, b}, result, binary.range);
}

Value FunctionChecker::expectTensor(const Value &value,
                                    const ValueType &expected,
                                    llvm::SMRange loc) {
  if (value.type.kind == ValueType::Size && expected.isTensor())
    return asTensor(value, loc);
  return value;
}

Value FunctionChecker::asTensor(const Value &value, llvm::SMRange loc) {
  if (value.type.isInvalid() || value.type.kind == ValueType::Tensor)
    return value;
  if (value.type.kind == ValueType::Size) {
    // A size used as a number: an integer scalar that knows its value. Its
    // element type adapts to the other operand (`cast(HeadDim, f32)` or
    // `x / 4`).
    ValueType scalar = ValueType::scalar("i32", /*weak=*/true);
    scalar.value = value.type.value;
    return Value{scalar, -1};
  }
  if (!reportElementAsValue(value, loc, "a tensor"))
    diags.report(loc, diag::NotATensor, sourceText(loc),
                 describeAs(sourceText(loc), value.type));
  return Value::invalid();
}

std::optional<ElementRef>
FunctionChecker::commonElement(const ValueType &a, const ValueType &b,
                               const std::string &verb, llvm::SMRange loc) {
  if (a.weak && !b.weak)
    return b.element;
  if (b.weak && !a.weak)
    return a.element;
  if (a.element.name == b.element.name)
    return a.element;
  if (a.weak && b.weak) // an integer literal with a float literal
    return ElementRef{"f32", false};
  diags.report(loc, diag::ElementMismatch, verb, formatValueType(a),
               formatValueType(b), a.element.name, b.element.name);
  return std::nullopt;
}

std::optional<DimList> FunctionChecker::broadcast(const ValueType &a,
                                                  const ValueType &b,
                                                  const std::string &verb,
                                                  llvm::SMRange loc) {
  // Numpy rules from the right: equal sizes, or one of them is 1. A spread
  // `*S` matches only the same spread at the same place.
  DimList result;
  size_t i = a.dims.size(), j = b.dims.size();
  while (i > 0 || j > 0) {
    const ValueDim *x = i > 0 ? &a.dims[i - 1] : nullptr;
    const ValueDim *y = j > 0 ? &b.dims[j - 1] : nullptr;
    if (!x || !y) {
      result.push_back(x ? *x : *y);
    } else if (*x == *y) {
      result.push_back(*x);
    } else if (y->size && y->size->constantValue() == Rational(1) &&
               !x->isSpread()) {
      result.push_back(*x);
    } else if (x->size && x->size->constantValue() == Rational(1) &&
               !y->isSpread()) {
      result.push_back(*y);
    } else {
      // Each side's own dimension, counted from its left.
      std::string detail =
          i == j ? "dimension " + std::to_string(i - 1) + " is `" + x->str() +
                       "` on the left and `" + y->str() + "` on the right"
                 : "dimension " + std::to_string(i - 1) + " on the left is `" +
                       x->str() + "` and dimension " + std::to_string(j - 1) +
                       " on the right is `" + y->str() + "`";
      if (x->isSpread() || y->isSpread())
        detail += "; a `*Shape` spread agrees only with the same spread";
      diags.report(loc, diag::ShapeMismatch, verb, formatValueType(a),
                   formatValueType(b), withoutUnknownMarks(detail));
      return std::nullopt;
    }
    if (i > 0)
      --i;
    if (j > 0)
      --j;
  }
  std::reverse(result.begin(), result.end());
  return result;
}

ShapeExpr FunctionChecker::quotient(const ShapeExpr &dividend,
                                    const ShapeExpr &divisor,
                                    llvm::SMRange loc) {
  std::string name = "(" + dividend.str() + ") / (" + divisor.str() + ")";
  if (dividend.getTerms().size() <= 1 && divisor.getTerms().size() == 1)
    name = dividend.str() + " / " + divisor.str();
  quotients[name] = {dividend, divisor};
  // `divisor * quotient == dividend` is what makes the quotient a size;
  // each use is its own obligation, at its own place.
  Obligation ob;
  ob.kind = Obligation::Divides;
  ob.lhs = divisor;
  ob.rhs = dividend;
  ob.what = "`" + name + "` divides exactly";
  ob.loc = loc;
  ob.block = &block;
  obligations.push_back(std::move(ob));
  return ShapeExpr::symbol({kUnknownRank - 2, name});
}

ShapeExpr FunctionChecker::simplifyQuotients(const ShapeExpr &size) {
  // Rewrites `divisor * (dividend / divisor) * rest` to `dividend * rest`
  // for single-term divisors.
  ShapeExpr result = ShapeExpr::constant(0);
  for (const ShapeExpr::Term &term : size.getTerms()) {
    ShapeExpr::Monomial monomial = term.monomial;
    ShapeExpr factor = ShapeExpr::constant(term.coefficient);
    for (const auto &quotient : quotients) {
      const std::string &name = quotient.first;
      const auto &parts = quotient.second;
      auto q =
          std::find_if(monomial.begin(), monomial.end(),
                       [&](const ShapeSymbol &s) { return s.name == name; });
      const ShapeExpr &divisor = parts.second;
      if (q == monomial.end() || divisor.getTerms().size() != 1 ||
          !divisor.getTerms()[0].coefficient.isInteger())
        continue;
      ShapeExpr::Monomial rest = monomial;
      rest.erase(rest.begin() + (q - monomial.begin()));
      bool contains = true;
      for (const ShapeSymbol &symbol : divisor.getTerms()[0].monomial) {
        auto it = std::find(rest.begin(), rest.end(), symbol);
        if (it == rest.end()) {
          contains = false;
          break;
        }
        rest.erase(it);
      }
      if (!contains)
        continue;
      auto scaled = ShapeExpr::divide(
          ShapeExpr::multiply(factor, parts.first).get(),
          ShapeExpr::constant(divisor.getTerms()[0].coefficient));
      if (!scaled) {
        llvm::consumeError(scaled.takeError());
        continue;
      }
      factor = *scaled;
      monomial = rest;
    }
    for (const ShapeSymbol &symbol : monomial) {
      auto next = ShapeExpr::multiply(factor, ShapeExpr::symbol(symbol));
      if (!next) {
        llvm::consumeError(next.takeError());
        return size;
      }
      factor = *next;
    }
    auto sum = ShapeExpr::add(result, factor);
    if (!sum) {
      llvm::consumeError(sum.takeError());
      return size;
    }
    result = *sum;
  }
  return result;
}

bool FunctionChecker::obligation(Obligation::Kind kind, ShapeExpr lhs,
                                 ShapeExpr rhs, const std::string &what,
                                 llvm::SMRange loc,
                                 const std::string &context) {
  Obligation ob;
  ob.kind = kind;
  // `KvHeads * (Heads / KvHeads)` is `Heads`; what stays a quotient is
  // evaluated from its parts when the generics are bound.
  ob.lhs = simplifyQuotients(lhs);
  ob.rhs = simplifyQuotients(rhs);
  ob.what = what;
  ob.context = context;
  ob.loc = loc;
  ob.block = &block;
  std::vector<ShapeSymbol> pending = ob.lhs.symbols();
  for (const ShapeSymbol &symbol : ob.rhs.symbols())
    pending.push_back(symbol);
  while (!pending.empty()) {
    ShapeSymbol symbol = pending.back();
    pending.pop_back();
    auto it = quotients.find(symbol.name);
    if (it == quotients.end() || !ob.quotients.insert(*it).second)
      continue;
    for (const ShapeExpr *part : {&it->second.first, &it->second.second})
      for (const ShapeSymbol &inner : part->symbols())
        pending.push_back(inner);
  }
  // Decide what can be decided for all positive sizes now.
  if (kind == Obligation::Integral) {
    bool integral = true;
    for (const ShapeExpr::Term &term : ob.lhs.getTerms())
      integral &= term.coefficient.isInteger();
    ob.status = integral ? Obligation::Proven : Obligation::Pending;
  } else {
    auto difference = ShapeExpr::subtract(ob.lhs, ob.rhs);
    if (!difference) {
      llvm::consumeError(difference.takeError());
      ob.status = Obligation::Pending;
    } else if (difference->getTerms().empty()) {
      ob.status = Obligation::Proven;
    } else if (kind == Obligation::AtMost) {
      // lhs - rhs with only constant terms decides it now.
      auto constant = difference->constantValue();
      ob.status = !constant                    ? Obligation::Pending
                  : constant->numerator() <= 0 ? Obligation::Proven
                                               : Obligation::Refuted;
    } else {
      // Refuted when every coefficient has the same sign: the difference
      // is then nonzero for all positive sizes.
      bool positive = true, negative = true;
      for (const ShapeExpr::Term &term : difference->getTerms()) {
        positive &= term.coefficient.numerator() > 0;
        negative &= term.coefficient.numerator() < 0;
      }
      ob.status =
          positive || negative ? Obligation::Refuted : Obligation::Pending;
    }
  }
  if (ob.status == Obligation::Refuted)
    diags.report(
        loc, diag::ObligationRefuted,
        withoutUnknownMarks(
            (context.empty() ? "" : context + ": ") + "`" + ob.lhs.str() +
            (kind == Obligation::AtMost ? "` exceeds `" : "` and `") +
            ob.rhs.str() + (kind == Obligation::AtMost ? "`" : "` differ")),
        what);
  bool refuted = ob.status == Obligation::Refuted;
  // An identity is no obligation; a run-time size is checked when running.
  if (ob.status == Obligation::Proven || isRuntimeSize(ob.lhs) ||
      isRuntimeSize(ob.rhs))
    return !refuted;
  obligations.push_back(std::move(ob));
  return !refuted;
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

Value FunctionChecker::checkNode(const ast::IndexExpr &expr) {
  Value base = check(expr.base);
  return index(base, expr.indices, expr.range);
}

Value FunctionChecker::index(const Value &base,
                             const std::vector<ast::Index> &indices,
                             llvm::SMRange loc) {
  if (base.type.isInvalid())
    return base;
  if (base.type.kind != ValueType::Tensor) {
    diags.report(loc, diag::NotATensor, sourceText(loc),
                 describeAs(sourceText(loc), base.type));
    return Value::invalid();
  }
  const DimList &dims = base.type.dims;
  for (const ValueDim &dim : dims)
    if (dim.isSpread()) {
      diags.report(loc, diag::IndexSpread, dim.spread,
                   formatValueType(base.type),
                   "index a tensor whose dimensions are all sizes");
      return Value::invalid();
    }
  // Expand `...` to the axes not written.
  size_t written = 0;
  bool ellipsis = false;
  for (const ast::Index &index : indices) {
    if (index.kind == ast::Index::Ellipsis) {
      if (ellipsis) {
        diags.report(index.range, diag::IndexCount, formatValueType(base.type),
                     "at most one `...`");
        return Value::invalid();
      }
      ellipsis = true;
    } else {
      ++written;
    }
  }
  if (written > dims.size()) {
    diags.report(loc, diag::IndexCount, formatValueType(base.type),
                 std::to_string(dims.size()) + " indices at most, given " +
                     std::to_string(written));
    return Value::invalid();
  }
  struct Axis {
    enum { Keep, Slice, Scalar, Gather } kind = Keep;
    ValueDim dim;
    DimList gatherDims;
  };
  std::vector<Axis> axes;
  std::vector<Value> inputs{base};
  size_t axis = 0;
  for (const ast::Index &index : indices) {
    if (index.kind == ast::Index::Ellipsis) {
      for (size_t n = dims.size() - written; n > 0; --n)
        axes.push_back({Axis::Keep, dims[axis++], {}});
      continue;
    }
    const ValueDim &dim = dims[axis++];
    if (index.kind == ast::Index::Slice) {
      std::optional<ShapeExpr> lower = ShapeExpr::constant(0);
      std::optional<ShapeExpr> upper = dim.size;
      if (index.lower) {
        Value value = check(*index.lower);
        lower = boundValue(value, ast::rangeOf(*index.lower));
      }
      if (index.upper) {
        Value value = check(*index.upper);
        upper = boundValue(value, ast::rangeOf(*index.upper));
      }
      if (!lower || !upper)
        return Value::invalid();
      auto length = ShapeExpr::subtract(*upper, *lower);
      if (!length) {
        llvm::consumeError(length.takeError());
        diags.report(index.range, diag::ShapeOverflow, sourceText(index.range));
        return Value::invalid();
      }
      if (isRuntimeSize(*length)) {
        diags.report(index.range, diag::RuntimeSize, length->str());
        return Value::invalid();
      }
      axes.push_back({Axis::Slice, ValueDim::of(*length), {}});
      continue;
    }
    Value value = check(*index.lower);
    Value position = asTensor(value, ast::rangeOf(*index.lower));
    if (position.type.isInvalid())
      return position;
    if (position.type.element.name[0] != 'i' ||
        position.type.element.name == "i1") {
      diags.report(index.range, diag::OperandType, "the index",
                   quoteValueType(position.type),
                   "an integer scalar or tensor");
      return Value::invalid();
    }
    inputs.push_back(position);
    if (position.type.dims.empty())
      axes.push_back({Axis::Scalar, dim, {}});
    else
      axes.push_back({Axis::Gather, dim, position.type.dims});
  }
  while (axis < dims.size())
    axes.push_back({Axis::Keep, dims[axis++], {}});

  // Numpy: index tensors (and, with them, integer scalars) broadcast
  // together; their shape replaces the indexed axes, in place when those are
  // adjacent, else in front.
  bool anyGather = false;
  for (const Axis &a : axes)
    anyGather |= a.kind == Axis::Gather;
  DimList result;
  if (!anyGather) {
    for (const Axis &a : axes)
      if (a.kind != Axis::Scalar)
        result.push_back(a.dim);
  } else {
    ValueType gathered = ValueType::tensor({}, ElementRef{"i32", false});
    int first = -1, last = -1;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].kind != Axis::Gather && axes[i].kind != Axis::Scalar)
        continue;
      if (first < 0)
        first = int(i);
      last = int(i);
      ValueType each = ValueType::tensor(axes[i].gatherDims, gathered.element);
      auto dimsOut = broadcast(gathered, each, "index with", loc);
      if (!dimsOut)
        return Value::invalid();
      gathered.dims = *dimsOut;
    }
    bool adjacent = true;
    for (int i = first; i <= last; ++i)
      adjacent &= axes[i].kind == Axis::Gather || axes[i].kind == Axis::Scalar;
    if (!adjacent)
      result = gathered.dims;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (int(i) == first && adjacent)
        result.insert(result.end(), gathered.dims.begin(), gathered.dims.end());
      if (axes[i].kind == Axis::Keep || axes[i].kind == Axis::Slice)
        result.push_back(axes[i].dim);
    }
  }
  return node("index", inputs, ValueType::tensor(result, base.type.element),
              loc);
}

std::optional<ShapeExpr> FunctionChecker::boundValue(const Value &value,
                                                     llvm::SMRange loc) {
  if (value.type.isInvalid())
    return std::nullopt;
  if (value.type.kind == ValueType::Size)
    return value.type.value;
  if (value.type.isScalar() && value.type.value)
    return value.type.value;
  if (value.type.isScalar() && value.type.element.name[0] == 'i' &&
      value.type.element.name != "i1")
    return runtimeSymbol(sourceText(loc));
  if (reportElementAsValue(value, loc, "a size"))
    return std::nullopt;
  diags.report(loc, diag::OperandType, "the slice bound",
               quoteValueType(value.type), "a size or an integer scalar");
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Value FunctionChecker::checkNode(const ast::CallExpr &call) {
  const auto *calleeName = boost::get<ast::Identifier>(&call.callee);
  Value callee = calleeName ? resolveName(*calleeName, /*callee=*/true)
                            : check(call.callee);
  if (callee.type.isInvalid())
    return callee;
  if (callee.type.kind == ValueType::Builtin) {
    if (!call.genericArgs.empty()) {
      diags.report(call.range, diag::UnexpectedGenericArgs, callee.type.name);
      return Value::invalid();
    }
    return callBuiltin(*lookupBuiltin(callee.type.name), call);
  }
  if (callee.type.kind != ValueType::Function) {
    diags.report(
        ast::rangeOf(call.callee), diag::NotCallable,
        sourceText(ast::rangeOf(call.callee)),
        describeAs(sourceText(ast::rangeOf(call.callee)), callee.type));
    noteDeclaration(call.callee);
    return Value::invalid();
  }
  const BlockDecl &target =
      callee.type.instance ? *callee.type.instance->block : block;
  const MemberDecl *member = target.findMember(callee.type.name);
  const FnDecl *fn = member ? std::get_if<FnDecl>(member) : nullptr;
  if (!fn)
    return Value::invalid();
  if (fn->isEntry) {
    diags.report(call.range, diag::EntryCalled, fn->name);
    diags.report(fn->loc, diag::DeclaredHere, fn->name);
    return Value::invalid();
  }
  Substitution subst;
  if (callee.type.instance)
    subst = callee.type.instance->generics;
  std::string label = callee.type.instance
                          ? callee.type.instance->path + "." + fn->name
                          : fn->name;
  return callFunction(target, *fn, subst, label, call);
}

static std::string countOf(size_t n, const std::string &noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

Value FunctionChecker::callFunction(const BlockDecl &target, const FnDecl &fn,
                                    Substitution subst,
                                    const std::string &label,
                                    const ast::CallExpr &call) {
  // Notes name the function where it is declared: `Linear.forward`.
  std::string declared =
      &target == &block ? fn.name : target.name + "." + fn.name;
  // The callee's own generics become unknowns with fresh names, so they
  // cannot be confused with the caller's generics of the same name.
  std::vector<std::string> unknowns;
  for (const GenericDecl &generic : fn.generics) {
    std::string name = generic.name + "#" + std::to_string(nextUnknown++);
    unknowns.push_back(name);
    if (generic.kind == GenericKind::Dim)
      subst.sizes[generic.name] =
          ShapeExpr::symbol({kUnknownRank + nextUnknown, name});
    else if (generic.kind == GenericKind::Shape)
      subst.shapes[generic.name] = {ValueDim{std::nullopt, name}};
    else
      subst.elements[generic.name] = ElementRef{name, true};
  }
  Unifier unifier;
  // Explicit generic arguments come first: `zero_state<B>()`.
  if (call.genericArgs.size() > fn.generics.size()) {
    diags.report(call.range, diag::GenericArity, label,
                 fn.generics.empty() ? std::string("no generic arguments")
                                     : "at most " + countOf(fn.generics.size(),
                                                            "generic argument"),
                 unsigned(call.genericArgs.size()));
    diags.report(fn.loc, diag::DeclaredHere, declared);
    return Value::invalid();
  }
  for (size_t i = 0; i < call.genericArgs.size(); ++i) {
    const GenericDecl &generic = fn.generics[i];
    const ast::ShapeItem &item = call.genericArgs[i];
    const std::string &unknown = unknowns[i];
    std::string expected = generic.kind == GenericKind::Dim ? "a size"
                           : generic.kind == GenericKind::Float
                               ? "an element type"
                               : "a `*Shape` spread";
    expected += " for `" + generic.name + "`";
    if (auto *spread = boost::get<ast::ShapeSpread>(&item)) {
      const GenericDecl *shape = findGeneric(spread->name.name);
      if (generic.kind != GenericKind::Shape || !shape ||
          shape->kind != GenericKind::Shape) {
        diags.report(spread->range, diag::KindMismatch, "*" + spread->name.name,
                     shape && shape->kind == GenericKind::Shape
                         ? "a spread"
                         : "not a `*Shape` spread",
                     expected);
        return Value::invalid();
      }
      unifier.shapes[unknown] = {ValueDim{std::nullopt, spread->name.name}};
      continue;
    }
    const auto &sum = boost::get<ast::ShapeSum>(item);
    const ast::Identifier *name =
        sum.rest.empty() && sum.first.rest.empty()
            ? boost::get<ast::Identifier>(&sum.first.first)
            : nullptr;
    const GenericDecl *decl = name ? findGeneric(name->name) : nullptr;
    if (generic.kind == GenericKind::Float) {
      if (name && decl && decl->kind == GenericKind::Float)
        unifier.elements[unknown] = ElementRef{name->name, true};
      else if (name && !decl && parseElementType(name->name))
        unifier.elements[unknown] = ElementRef{name->name, false};
      else {
        diags.report(sum.range, diag::KindMismatch, sourceText(sum.range),
                     decl ? "a `" + kindName(decl->kind).str() + "` generic"
                          : "a size",
                     expected);
        return Value::invalid();
      }
      continue;
    }
    if (generic.kind == GenericKind::Shape) {
      diags.report(sum.range, diag::KindMismatch, sourceText(sum.range),
                   "a size", expected);
      return Value::invalid();
    }
    auto size = shapeValue(sum);
    if (!size)
      return Value::invalid();
    unifier.sizes[unknown] = *size;
  }

  // Positional arguments, then keyword arguments by parameter name.
  std::vector<const ast::Expr *> bound(fn.params.size(), nullptr);
  std::vector<llvm::SMRange> givenAt(fn.params.size());
  size_t position = 0;
  bool keywords = false;
  auto parameterList = [&] {
    std::string names;
    for (const FnParamDecl &param : fn.params)
      names += (names.empty() ? "`" : ", `") + param.name + "`";
    return names.empty() ? std::string("it has none")
                         : "its parameters are " + names;
  };
  for (const ast::Argument &arg : call.arguments) {
    size_t i = position;
    if (!arg.keyword) {
      if (position >= fn.params.size()) {
        diags.report(call.range, diag::ArgumentCount, label,
                     countOf(fn.params.size(), "argument"),
                     unsigned(call.arguments.size()));
        diags.report(fn.loc, diag::DeclaredHere, declared);
        return Value::invalid();
      }
      ++position;
    } else {
      keywords = true;
      i = 0;
      while (i < fn.params.size() && fn.params[i].name != arg.keyword->name)
        ++i;
      if (i == fn.params.size()) {
        diags.report(arg.keyword->range, diag::UnknownKeyword, label,
                     arg.keyword->name, parameterList());
        diags.report(fn.loc, diag::DeclaredHere, declared);
        return Value::invalid();
      }
    }
    if (bound[i]) {
      diags.report(arg.keyword ? arg.keyword->range : arg.range,
                   diag::DuplicateArgument, label, fn.params[i].name);
      diags.report(givenAt[i], diag::BoundBy,
                   "`" + fn.params[i].name + "` is first given here");
      return Value::invalid();
    }
    bound[i] = &arg.value;
    givenAt[i] = arg.range;
  }
  for (size_t i = 0; i < bound.size(); ++i)
    if (!bound[i]) {
      if (keywords)
        diags.report(call.range, diag::MissingArgument, label,
                     fn.params[i].name);
      else
        diags.report(call.range, diag::ArgumentCount, label,
                     countOf(fn.params.size(), "argument"),
                     unsigned(call.arguments.size()));
      diags.report(fn.params[i].loc, diag::DeclaredHere, fn.params[i].name);
      return Value::invalid();
    }

  std::vector<Value> args;
  for (size_t i = 0; i < bound.size(); ++i) {
    Value arg = check(*bound[i]);
    if (arg.type.kind == ValueType::Size)
      arg = asTensor(arg, ast::rangeOf(*bound[i]));
    args.push_back(arg);
  }
  bool ok = true;
  for (size_t i = 0; i < bound.size(); ++i) {
    if (args[i].type.isInvalid()) {
      ok = false;
      continue;
    }
    ValueType expected = instantiateType(fn.params[i].type, subst);
    std::string why;
    if (!unifier.unify(expected, args[i].type, why)) {
      ValueType shown = unifier.apply(expected);
      diags.report(ast::rangeOf(*bound[i]), diag::ArgumentMismatch,
                   fn.params[i].name, label, quoteValueType(args[i].type),
                   quoteValueType(shown), withoutUnknownMarks(why));
      diags.report(fn.params[i].loc, diag::DeclaredHere, fn.params[i].name);
      ok = false;
    }
  }
  if (!ok)
    return Value::invalid();
  // Generics no argument mentions: from explicit arguments, else defaults.
  for (size_t i = 0; i < fn.generics.size(); ++i) {
    const GenericDecl &generic = fn.generics[i];
    const std::string &unknown = unknowns[i];
    if (unifier.sizes.count(unknown) || unifier.shapes.count(unknown) ||
        unifier.elements.count(unknown))
      continue;
    if (generic.defaultSize) {
      unifier.sizes[unknown] =
          unifier.apply(substituteSize(*generic.defaultSize, subst));
      continue;
    }
    if (generic.defaultElement) {
      unifier.elements[unknown] =
          ElementRef{elementTypeName(*generic.defaultElement).str(), false};
      continue;
    }
    diags.report(call.range, diag::CannotInfer, generic.name, label);
    diags.report(generic.loc, diag::DeclaredHere, generic.name);
    return Value::invalid();
  }
  // A size inferred through `c * X` is the argument divided by `c`, which
  // must come out whole.
  for (size_t i = 0; i < fn.generics.size(); ++i) {
    auto it = unifier.sizes.find(unknowns[i]);
    if (it == unifier.sizes.end())
      continue;
    bool whole = true;
    for (const ShapeExpr::Term &term : it->second.getTerms())
      whole &= term.coefficient.isInteger();
    if (!whole)
      obligation(Obligation::Integral, it->second, {},
                 "generic `" + fn.generics[i].name + "` of `" + label +
                     "` is a whole size",
                 call.range,
                 "inferring `" + fn.generics[i].name + "` of `" + label + "`");
  }

  ValueType result = fn.result
                         ? unifier.apply(instantiateType(*fn.result, subst))
                         : ValueType::tuple({});
  GraphNode graphNode;
  graphNode.label = label;
  graphNode.loc = call.range;
  graphNode.calleeBlock = &target;
  graphNode.callee = &fn;
  if (!loopRepeat.empty())
    graphNode.repeat = loopRepeat.back();
  // The callee's generics in the caller's terms, for graph expansion.
  graphNode.calleeGenerics = subst;
  for (size_t i = 0; i < fn.generics.size(); ++i) {
    const std::string &name = unknowns[i], &original = fn.generics[i].name;
    if (auto it = unifier.sizes.find(name); it != unifier.sizes.end())
      graphNode.calleeGenerics.sizes[original] = it->second;
    if (auto it = unifier.shapes.find(name); it != unifier.shapes.end())
      graphNode.calleeGenerics.shapes[original] = it->second;
    if (auto it = unifier.elements.find(name); it != unifier.elements.end())
      graphNode.calleeGenerics.elements[original] = it->second;
  }
  CallResolution &resolution = annotations.calls[&call];
  resolution.calleeBlock = &target;
  resolution.callee = &fn;
  resolution.calleeGenerics = graphNode.calleeGenerics;
  resolution.arguments = bound;
  // Aligned with the callee's parameters (-1 for compile-time values), so
  // an expanded call wires each parameter to its argument.
  for (const Value &arg : args)
    graphNode.inputs.push_back(arg.id);
  Value value{result, -1};
  addOutputs(graphNode, value);
  graph.nodes.push_back(std::move(graphNode));
  calls.push_back({&target, fn.name, call.range});
  return value;
}

//===----------------------------------------------------------------------===//
// Unification of declared types with argument types
//===----------------------------------------------------------------------===//

static bool isUnknown(const std::string &name) {
  return name.find('#') != std::string::npos;
}

bool Unifier::unifySize(const ShapeExpr &pattern, const ShapeExpr &actual) {
  ShapeExpr known = apply(pattern);
  std::vector<ShapeSymbol> unknowns;
  for (const ShapeSymbol &symbol : known.symbols())
    if (isUnknown(symbol.name))
      unknowns.push_back(symbol);
  if (unknowns.empty())
    return known == actual;
  // Solvable when the pattern is `c * X` for one unknown X.
  if (unknowns.size() != 1 || known.getTerms().size() != 1 ||
      known.getTerms()[0].monomial.size() != 1)
    return false;
  auto solution = ShapeExpr::divide(
      actual, ShapeExpr::constant(known.getTerms()[0].coefficient));
  if (!solution) {
    llvm::consumeError(solution.takeError());
    return false;
  }
  sizes[unknowns[0].name] = *solution;
  return true;
}

bool Unifier::unify(const ValueType &pattern, const ValueType &actual,
                    std::string &why) {
  if (actual.isInvalid())
    return true;
  if (pattern.kind != actual.kind) {
    why = "";
    return false;
  }
  if (pattern.kind == ValueType::Tuple) {
    if (pattern.elements.size() != actual.elements.size()) {
      why = "; it has " + std::to_string(actual.elements.size()) +
            " elements, expected " + std::to_string(pattern.elements.size());
      return false;
    }
    for (size_t i = 0; i < pattern.elements.size(); ++i)
      if (!unify(pattern.elements[i], actual.elements[i], why))
        return false;
    return true;
  }
  if (pattern.kind != ValueType::Tensor)
    return false;
  // Dimensions, with at most one unknown spread taking what is left.
  DimList dims = apply(pattern).dims;
  int spreadAt = -1;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].isSpread() && isUnknown(dims[i].spread))
      spreadAt = int(i);
  size_t before = spreadAt < 0 ? dims.size() : size_t(spreadAt);
  size_t after = spreadAt < 0 ? 0 : dims.size() - spreadAt - 1;
  if (actual.dims.size() < before + after ||
      (spreadAt < 0 && actual.dims.size() != dims.size())) {
    why = "; it has " + std::to_string(actual.dims.size()) +
          (actual.dims.size() == 1 ? " dimension" : " dimensions") +
          ", expected " +
          (spreadAt < 0 ? std::to_string(dims.size())
                        : "at least " + std::to_string(before + after));
    return false;
  }
  if (spreadAt >= 0)
    shapes[dims[spreadAt].spread] =
        DimList(actual.dims.begin() + before, actual.dims.end() - after);
  // Bind plain unknowns first, then check what depends on them.
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < before; ++i)
    pairs.push_back({i, i});
  for (size_t i = 0; i < after; ++i)
    pairs.push_back({dims.size() - after + i, actual.dims.size() - after + i});
  for (int pass = 0; pass < 2; ++pass)
    for (auto [p, a] : pairs) {
      const ValueDim &want = dims[p];
      const ValueDim &have = actual.dims[a];
      if (want.isSpread() || have.isSpread()) {
        if (pass == 1 && want != have) {
          why = "; dimension " + std::to_string(a) + " is `" + have.str() +
                "`, expected `" + want.str() + "`";
          return false;
        }
        continue;
      }
      ShapeExpr known = apply(*want.size);
      bool simple = known.getTerms().size() == 1 &&
                    known.getTerms()[0].monomial.size() == 1 &&
                    known.getTerms()[0].coefficient == Rational(1) &&
                    isUnknown(known.getTerms()[0].monomial[0].name);
      if (pass == 0 && !simple)
        continue;
      if (!unifySize(known, *have.size)) {
        why = "; dimension " + std::to_string(a) + " is `" + have.size->str() +
              "`, expected `" + apply(known).str() + "`";
        return false;
      }
    }
  // Element type.
  const std::string &element = pattern.element.name;
  if (isUnknown(element) && !elements.count(element)) {
    if (!actual.weak)
      elements[element] = actual.element;
  } else {
    std::string expected =
        isUnknown(element) ? elements[element].name : element;
    if (!actual.weak && expected != actual.element.name) {
      why = "; the element type is `" + actual.element.name + "`, expected `" +
            expected + "`";
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Functions and the program
//===----------------------------------------------------------------------===//

void FunctionChecker::run() {
  scopes.emplace_back();
  for (const FnParamDecl &param : fn.params) {
    ValueType type = instantiateType(param.type, {});
    if (type.isScalar() && type.element.name[0] == 'i' &&
        type.element.name != "i1")
      type.value = runtimeSymbol(param.name);
    Value value{type, -1, param.loc};
    value.id = int(graph.values.size());
    graph.values.push_back(type);
    graph.valueNames.push_back(param.name);
    graph.params.push_back(value.id);
    scopes.back()[param.name] = value;
  }
  checkBody(fn.syntax->body);
  if (!returned && !returnedInLoop && fn.result) {
    // At the closing brace: the range ends just past it.
    llvm::SMLoc end = fn.syntax->body.range.End;
    llvm::SMRange at =
        end.isValid()
            ? llvm::SMRange(llvm::SMLoc::getFromPointer(end.getPointer() - 1),
                            llvm::SMLoc::getFromPointer(end.getPointer() - 1))
            : fn.loc;
    diags.report(at, diag::MissingReturn, fn.name,
                 quoteValueType(instantiateType(*fn.result, {})));
  }
  scopes.pop_back();
}

namespace {

/// A block is the root when it declares entries; a block with entries that
/// is used as a sub-block is an error, reported once at its first entry.
void checkEntries(const Program &program, DiagnosticEngine &diags) {
  std::set<const BlockDecl *> reported;
  for (const auto &block : program.blocks) {
    if (!block->valid)
      continue;
    for (const MemberDecl &member : block->members) {
      auto *sub = std::get_if<SubDecl>(&member);
      if (!sub || !sub->block->hasEntries() ||
          !reported.insert(sub->block).second)
        continue;
      for (const MemberDecl &inner : sub->block->members)
        if (auto *fn = std::get_if<FnDecl>(&inner); fn && fn->isEntry) {
          diags.report(fn->loc, diag::EntryInSubBlock, fn->name,
                       sub->block->name, block->name);
          diags.report(sub->loc, diag::InstantiatedHere, sub->block->name);
          break;
        }
    }
  }
}

using FunctionKey = std::pair<const BlockDecl *, std::string>;

} // namespace

CheckedProgram linnet::checkBodies(const Program &program,
                                   DiagnosticEngine &diags) {
  CheckedProgram checked;
  checkEntries(program, diags);
  std::map<FunctionKey, std::vector<CallSite>> callGraph;
  // Functions in source order, so that reports come in a stable order.
  std::vector<FunctionKey> order;
  for (const auto &block : program.blocks) {
    if (!block->valid)
      continue;
    for (const MemberDecl &member : block->members) {
      auto *fn = std::get_if<FnDecl>(&member);
      if (!fn)
        continue;
      unsigned before = diags.errorCount();
      FunctionChecker checker(program, diags, *block, *fn);
      checker.run();
      CheckedFunction result;
      result.block = block.get();
      result.fn = fn;
      result.graph = std::move(checker.graph);
      result.annotations = std::move(checker.annotations);
      result.annotations.quotients = checker.quotients;
      result.writesState = checker.writesState;
      if (checker.writesState) {
        result.stateWriteLoc = checker.stateWriteLoc;
        result.stateWriteNote =
            "state `" + checker.stateWritten + "` is written here";
      }
      result.ok = diags.errorCount() == before;
      for (Obligation &ob : checker.obligations)
        checked.obligations.push_back(std::move(ob));
      callGraph[{block.get(), fn->name}] = std::move(checker.calls);
      order.push_back({block.get(), fn->name});
      checked.functions[{block.get(), fn->name}] = std::move(result);
    }
  }
  // A block's functions are inlined, so they may not call each other in a
  // cycle. Each cycle is reported once, at the function it returns to.
  {
    // Depth-first, with an explicit stack: a block of a million functions
    // each calling the next must not exhaust the native stack.
    std::map<FunctionKey, int> state;
    std::vector<std::pair<FunctionKey, size_t>> path; ///< key, next call
    for (const FunctionKey &root : order) {
      if (state[root] != 0)
        continue;
      state[root] = 1;
      path.push_back({root, 0});
      while (!path.empty()) {
        auto &[key, next] = path.back();
        const std::vector<CallSite> &calls = callGraph[key];
        if (next == calls.size()) {
          state[key] = 2;
          path.pop_back();
          continue;
        }
        const CallSite &call = calls[next++];
        FunctionKey callee{call.block, call.name};
        if (callee.first != key.first)
          continue;
        if (state[callee] == 0) {
          state[callee] = 1;
          path.push_back({callee, 0});
          continue;
        }
        if (state[callee] != 1)
          continue;
        // The cycle is the path from `callee` back to `key`.
        auto start = std::find_if(path.begin(), path.end(), [&](auto &entry) {
          return entry.first == callee;
        });
        std::string through;
        for (auto it = start + 1; it != path.end(); ++it)
          through += std::string(it == start + 1        ? " through `"
                                 : it + 1 == path.end() ? " and `"
                                                        : ", `") +
                     it->first.second + "`";
        CheckedFunction &fn = checked.functions[callee];
        diags.report(fn.fn->loc, diag::RecursiveCall, callee.second, through);
        diags.report(call.loc, diag::BoundBy,
                     "`" + path.back().first.second + "` calls `" +
                         callee.second + "` here");
        fn.ok = false;
      }
    }
  }
  // State effects flow from callees to callers, along reversed call edges
  // (linear in the calls); each caller then remembers its first call of a
  // function that writes.
  {
    std::map<FunctionKey, std::vector<FunctionKey>> callers;
    std::vector<FunctionKey> work;
    for (const FunctionKey &key : order) {
      for (const CallSite &call : callGraph[key])
        callers[{call.block, call.name}].push_back(key);
      if (checked.functions[key].writesState)
        work.push_back(key);
    }
    std::set<FunctionKey> writes(work.begin(), work.end());
    while (!work.empty()) {
      FunctionKey callee = work.back();
      work.pop_back();
      for (const FunctionKey &caller : callers[callee])
        if (writes.insert(caller).second)
          work.push_back(caller);
    }
    for (const FunctionKey &key : order) {
      CheckedFunction &function = checked.functions[key];
      if (function.writesState || !writes.count(key))
        continue;
      function.writesState = true;
      for (const CallSite &call : callGraph[key])
        if (writes.count({call.block, call.name})) {
          function.stateWriteLoc = call.loc;
          function.stateWriteNote =
              "`" + call.name + "` writes state and is called here";
          break;
        }
    }
  }
  // Stateless functions: `forward` everywhere and the entry `next_token`.
  for (const FunctionKey &key : order) {
    CheckedFunction &function = checked.functions[key];
    const std::string &name = key.second;
    if (function.writesState && (name == "forward" || name == "next_token")) {
      diags.report(function.fn->loc, diag::StateWriteInStateless, name,
                   key.first->name);
      diags.report(function.stateWriteLoc, diag::BoundBy,
                   function.stateWriteNote);
      function.ok = false;
    }
  }
  return checked;
}
