//===- IRGen.cpp - Entries, statements, names and calls -------------------===//
//
// One MLIR function per entry. Block functions are inlined: each call runs
// the callee's body in a new frame whose generics are the call's resolved
// generics (from the checker) in the entry's terms, so every size is either
// a constant (bound by the checkpoint) or a polynomial in the entry's own
// generics, which become index values read off the entry's arguments.
//
//===----------------------------------------------------------------------===//

#include "Generator.h"

#include "linnet/Dialect/Linnet/IR/LinnetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"

using namespace linnet;
using namespace linnet::irgen;

static std::string joinPath(const std::string &prefix,
                            const std::string &name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void linnet::registerIRGenDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                  mlir::LLVM::LLVMDialect, linnet::LinnetDialect>();
}

Generator::Generator(mlir::MLIRContext &context, const Program &program,
                     const CheckedProgram &checked, const BoundModel &model,
                     llvm::ArrayRef<ModelParameter> parameters,
                     DiagnosticEngine &diags)
    : builder(&context), context(context), program(program), checked(checked),
      model(model), diags(diags), parameters(parameters),
      states(listStates(program, model)) {}

bool Generator::fail(llvm::SMRange range, const std::string &what,
                     const std::string &why) {
  if (!failed)
    diags.report(range, diag::NotCompilable, what, why);
  failed = true;
  return false;
}

mlir::Location Generator::loc(llvm::SMRange range) {
  llvm::SourceMgr &sourceMgr = diags.getSourceMgr();
  mlir::Location location = mlir::UnknownLoc::get(&context);
  if (range.Start.isValid()) {
    unsigned buffer = sourceMgr.FindBufferContainingLoc(range.Start);
    if (buffer != 0) {
      auto [line, column] = sourceMgr.getLineAndColumn(range.Start, buffer);
      location = mlir::FileLineColLoc::get(
          &context, sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier(),
          line, column);
    }
  }
  if (!current.frames.empty() && frame().caller)
    return mlir::CallSiteLoc::get(location, frame().caller);
  return location;
}

//===----------------------------------------------------------------------===//
// Generics and types in the entry's terms
//===----------------------------------------------------------------------===//

ShapeExpr Generator::resolveSize(const ShapeExpr &size) {
  auto resolved = size.substitute(frame().generics.sizes);
  if (!resolved) {
    llvm::consumeError(resolved.takeError());
    fail({}, size.str(), "the size overflows");
    return ShapeExpr::constant(1);
  }
  return *resolved;
}

DimList Generator::resolveDims(const DimList &dims) {
  DimList result;
  for (const ValueDim &dim : dims) {
    if (!dim.isSpread()) {
      result.push_back(ValueDim::of(resolveSize(*dim.size)));
      continue;
    }
    auto it = frame().generics.shapes.find(dim.spread);
    if (it == frame().generics.shapes.end()) {
      fail({}, "*" + dim.spread, "the spread is not bound");
      continue;
    }
    for (const ValueDim &inner : it->second)
      result.push_back(inner);
  }
  return result;
}

ElementType Generator::resolveElement(const ElementRef &element) {
  std::string name = element.name;
  // Generics are looked up even when not marked as such: a sub's arguments
  // name the parent's Float generics.
  if (!parseElementType(name)) {
    auto it = frame().generics.elements.find(name);
    if (it != frame().generics.elements.end())
      name = it->second.name;
  }
  if (auto type = parseElementType(name))
    return *type;
  fail({}, name, "the element type is not bound");
  return ElementType::F32;
}

static ValueType resolveType(Generator &gen, const ValueType &type) {
  ValueType result = type;
  switch (type.kind) {
  case ValueType::Tensor:
    result.dims = gen.resolveDims(type.dims);
    result.element = ElementRef{
        elementTypeName(gen.resolveElement(type.element)).str(), false};
    break;
  case ValueType::SizeList:
    result.dims = gen.resolveDims(type.dims);
    break;
  case ValueType::Element:
    result.element = ElementRef{
        elementTypeName(gen.resolveElement(type.element)).str(), false};
    break;
  case ValueType::Tuple:
    for (ValueType &element : result.elements)
      element = resolveType(gen, element);
    break;
  default:
    break;
  }
  if (type.value)
    result.value = gen.resolveSize(*type.value);
  return result;
}

ValueType Generator::typeOf(const ast::Expr &expr) {
  const ValueType *type = frame().function->annotations.typeOf(expr);
  if (!type) {
    fail(ast::rangeOf(expr), "this expression", "it was not checked");
    return ValueType::invalid();
  }
  return resolveType(*this, *type);
}

Substitution Generator::composeGenerics(const Substitution &inCaller) {
  Substitution result;
  for (const auto &[name, size] : inCaller.sizes)
    result.sizes[name] = resolveSize(size);
  for (const auto &[name, dims] : inCaller.shapes)
    result.shapes[name] = resolveDims(dims);
  for (const auto &[name, element] : inCaller.elements)
    result.elements[name] =
        ElementRef{elementTypeName(resolveElement(element)).str(), false};
  return result;
}

void Generator::addQuotients(Frame &target) {
  if (!target.function)
    return;
  for (const auto &[name, parts] : target.function->annotations.quotients) {
    auto dividend = parts.first.substitute(target.generics.sizes);
    auto divisor = parts.second.substitute(target.generics.sizes);
    if (!dividend || !divisor) {
      llvm::consumeError(dividend.takeError());
      llvm::consumeError(divisor.takeError());
      continue;
    }
    auto quotient = ShapeExpr::divide(*dividend, *divisor);
    if (!quotient) {
      llvm::consumeError(quotient.takeError());
      continue;
    }
    target.generics.sizes[name] = *quotient;
  }
}

//===----------------------------------------------------------------------===//
// MLIR types and sizes
//===----------------------------------------------------------------------===//

mlir::Type Generator::mlirElement(ElementType element) {
  switch (element) {
  case ElementType::BF16:
    return builder.getBF16Type();
  case ElementType::F16:
    return builder.getF16Type();
  case ElementType::F32:
    return builder.getF32Type();
  case ElementType::F64:
    return builder.getF64Type();
  case ElementType::I1:
    return builder.getI1Type();
  case ElementType::I8:
    return builder.getIntegerType(8);
  case ElementType::I16:
    return builder.getIntegerType(16);
  case ElementType::I32:
    return builder.getI32Type();
  case ElementType::I64:
    return builder.getI64Type();
  }
  return builder.getF32Type();
}

ElementType Generator::elementOf(mlir::Type type) {
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isF16())
    return ElementType::F16;
  if (type.isF32())
    return ElementType::F32;
  if (type.isF64())
    return ElementType::F64;
  switch (type.getIntOrFloatBitWidth()) {
  case 1:
    return ElementType::I1;
  case 8:
    return ElementType::I8;
  case 16:
    return ElementType::I16;
  case 32:
    return ElementType::I32;
  default:
    return ElementType::I64;
  }
}

static std::optional<int64_t> constantSize(const ShapeExpr &size) {
  auto value = size.constantValue();
  if (!value || !value->isInteger())
    return std::nullopt;
  return value->numerator();
}

mlir::RankedTensorType Generator::tensorType(const DimList &dims,
                                             ElementType element) {
  llvm::SmallVector<int64_t> shape;
  for (const ValueDim &dim : dims) {
    auto value = dim.size ? constantSize(*dim.size) : std::nullopt;
    shape.push_back(value ? *value : mlir::ShapedType::kDynamic);
  }
  return mlir::RankedTensorType::get(shape, mlirElement(element));
}

mlir::Value Generator::indexValue(const ShapeExpr &size, mlir::Location at) {
  if (auto value = constantSize(size))
    return mlir::arith::ConstantIndexOp::create(builder, at, *value);
  std::string key = size.str();
  if (auto it = current.indexCache.find(key); it != current.indexCache.end())
    return it->second;
  // Sum of terms; each an integer coefficient times a product of sizes
  // (a rational coefficient divides the product exactly: `B * S / 2`).
  mlir::Value sum;
  for (const ShapeExpr::Term &term : size.getTerms()) {
    mlir::Value product;
    for (const ShapeSymbol &symbol : term.monomial) {
      auto it = current.entrySizes.find(symbol.name);
      if (it == current.entrySizes.end()) {
        fail({}, symbol.name, "the size is known only at run time");
        return mlir::arith::ConstantIndexOp::create(builder, at, 1);
      }
      product = product ? mlir::arith::MulIOp::create(builder, at, product,
                                                      it->second)
                              .getResult()
                        : it->second;
    }
    int64_t numerator = term.coefficient.numerator();
    int64_t denominator = term.coefficient.denominator();
    mlir::Value value = product;
    if (!value)
      value = mlir::arith::ConstantIndexOp::create(builder, at, numerator);
    else if (numerator != 1)
      value = mlir::arith::MulIOp::create(
          builder, at, value,
          mlir::arith::ConstantIndexOp::create(builder, at, numerator));
    if (denominator != 1)
      value = mlir::arith::DivSIOp::create(
          builder, at, value,
          mlir::arith::ConstantIndexOp::create(builder, at, denominator));
    sum = sum ? mlir::arith::AddIOp::create(builder, at, sum, value).getResult()
              : value;
  }
  if (!sum)
    sum = mlir::arith::ConstantIndexOp::create(builder, at, 0);
  current.indexCache[key] = sum;
  return sum;
}

mlir::OpFoldResult Generator::foldedIndex(const ShapeExpr &size,
                                          mlir::Location at) {
  if (auto value = constantSize(size))
    return builder.getIndexAttr(*value);
  return indexValue(size, at);
}

llvm::SmallVector<mlir::Value> Generator::dynamicSizes(const DimList &dims,
                                                       mlir::Location at) {
  llvm::SmallVector<mlir::Value> sizes;
  for (const ValueDim &dim : dims)
    if (!constantSize(*dim.size))
      sizes.push_back(indexValue(*dim.size, at));
  return sizes;
}

mlir::Value Generator::emptyTensor(const DimList &dims, ElementType element,
                                   mlir::Location at) {
  mlir::RankedTensorType type = tensorType(dims, element);
  return mlir::tensor::EmptyOp::create(builder, at, type.getShape(),
                                       type.getElementType(),
                                       dynamicSizes(dims, at));
}

static mlir::TypedAttr scalarAttr(mlir::OpBuilder &builder, mlir::Type type,
                                  double value) {
  if (auto floatType = mlir::dyn_cast<mlir::FloatType>(type))
    return builder.getFloatAttr(floatType, value);
  return builder.getIntegerAttr(type, int64_t(value));
}

mlir::Value Generator::filledTensor(const DimList &dims, ElementType element,
                                    double value, mlir::Location at) {
  mlir::Value empty = emptyTensor(dims, element, at);
  mlir::Value scalar = mlir::arith::ConstantOp::create(
      builder, at, scalarAttr(builder, mlirElement(element), value));
  return mlir::linalg::FillOp::create(builder, at, mlir::ValueRange{scalar},
                                      mlir::ValueRange{empty})
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

void Generator::bindArgumentSizes(llvm::ArrayRef<ValueType> types,
                                  llvm::ArrayRef<mlir::Value> arguments,
                                  llvm::ArrayRef<llvm::SMRange> locations) {
  // Each size comes from the first argument dimension that is exactly it.
  for (size_t i = 0; i < types.size(); ++i) {
    const ValueType &type = types[i];
    if (type.kind != ValueType::Tensor)
      continue;
    for (size_t d = 0; d < type.dims.size(); ++d) {
      if (type.dims[d].isSpread())
        continue;
      const ShapeExpr &size = *type.dims[d].size;
      auto symbols = size.symbols();
      if (symbols.size() != 1 || size != ShapeExpr::symbol(symbols[0]) ||
          current.entrySizes.count(symbols[0].name))
        continue;
      current.entrySizes[symbols[0].name] = mlir::tensor::DimOp::create(
          builder, loc(locations[i]), arguments[i], int64_t(d));
    }
  }
}

bool Generator::generateEntry(const FnDecl &entry, mlir::ModuleOp module) {
  const CheckedFunction *function = checked.find(model.root, entry.name);
  if (!function || !function->ok)
    return fail(entry.loc, entry.name, "the entry did not check");
  this->module = module;
  current = FunctionState();
  for (const ModelParameter &parameter : parameters) {
    current.parameterIndex[parameter.path] =
        unsigned(current.parameterDecls.size());
    current.parameterDecls.push_back(&parameter);
    current.parameterPaths.push_back(parameter.path);
  }

  Frame root;
  root.block = model.root;
  root.function = function;
  for (const BoundGeneric &generic : model.generics) {
    if (generic.kind == GenericKind::Dim)
      root.generics.sizes[generic.name] = ShapeExpr::constant(generic.size);
    else if (generic.kind == GenericKind::Float)
      root.generics.elements[generic.name] =
          ElementRef{elementTypeName(generic.element).str(), false};
  }
  for (const GenericDecl &generic : entry.generics) {
    if (generic.kind != GenericKind::Dim)
      return fail(generic.loc, entry.name, "an entry's generics must be sizes");
    root.generics.sizes[generic.name] = ShapeExpr::symbol(generic.symbol());
  }
  addQuotients(root);
  current.frames.push_back(std::move(root));

  // Parameters first, then the entry's own arguments.
  llvm::SmallVector<mlir::Type> argumentTypes;
  for (const ModelParameter &parameter : parameters) {
    DimList dims;
    for (int64_t size : parameter.shape)
      dims.push_back(ValueDim::of(ShapeExpr::constant(size)));
    argumentTypes.push_back(tensorType(dims, parameter.element));
  }
  // Entries that write state take every state member after the weights and
  // return its new value after their result.
  bool stateful = function->writesState;
  if (stateful)
    for (const ModelParameter &state : states) {
      DimList dims;
      for (int64_t size : state.shape)
        dims.push_back(ValueDim::of(ShapeExpr::constant(size)));
      argumentTypes.push_back(tensorType(dims, state.element));
    }
  std::vector<ValueType> entryTypes;
  std::vector<llvm::SMRange> entryLocs;
  for (const FnParamDecl &param : entry.params) {
    ValueType type = instantiateType(param.type, frame().generics);
    if (type.kind != ValueType::Tensor)
      return fail(param.loc, entry.name, "arguments must be tensors");
    entryTypes.push_back(type);
    entryLocs.push_back(param.loc);
    argumentTypes.push_back(
        tensorType(type.dims, resolveElement(type.element)));
  }
  if (!entry.result)
    return fail(entry.loc, entry.name, "an entry must return a tensor");
  ValueType resultType = instantiateType(*entry.result, frame().generics);
  if (resultType.kind != ValueType::Tensor)
    return fail(entry.loc, entry.name, "an entry must return a tensor");
  ElementType resultElement = resolveElement(resultType.element);
  mlir::RankedTensorType mlirResult =
      tensorType(resultType.dims, resultElement);

  mlir::Location entryLoc = loc(entry.loc);
  builder.setInsertionPointToEnd(module.getBody());
  llvm::SmallVector<mlir::Type> resultTypes = {mlirResult};
  size_t stateArguments = stateful ? states.size() : 0;
  for (size_t i = 0; i < stateArguments; ++i)
    resultTypes.push_back(argumentTypes[parameters.size() + i]);
  auto func = mlir::func::FuncOp::create(
      builder, entryLoc, entry.name,
      builder.getFunctionType(argumentTypes, resultTypes));
  func->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  for (size_t i = 0; i < parameters.size(); ++i) {
    func.setArgAttr(unsigned(i), "linnet.parameter",
                    builder.getStringAttr(parameters[i].path));
    // Weights may be mapped read-only from the checkpoint.
    func.setArgAttr(unsigned(i), "bufferization.writable",
                    builder.getBoolAttr(false));
  }
  mlir::Block *block = func.addEntryBlock();
  builder.setInsertionPointToStart(block);
  for (size_t i = 0; i < parameters.size(); ++i)
    current.parameterArguments.push_back(block->getArgument(unsigned(i)));
  for (size_t i = 0; i < stateArguments; ++i) {
    unsigned index = unsigned(parameters.size() + i);
    const ModelParameter &state = states[i];
    func.setArgAttr(index, "linnet.state", builder.getStringAttr(state.path));
    // The result that is the state's new value says which state it is: the
    // CPU pipeline writes it into the argument's buffer and drops it.
    func.setResultAttr(unsigned(i + 1), "linnet.state",
                       builder.getStringAttr(state.path));
    current.stateIndex[state.path] = unsigned(i);
    current.stateDecls.push_back(&state);
    current.statePaths.push_back(state.path);
    DimList dims;
    for (int64_t size : state.shape)
      dims.push_back(ValueDim::of(ShapeExpr::constant(size)));
    current.stateValues.push_back(
        GenValue::ofTensor(block->getArgument(index), dims, state.element));
  }

  frame().scopes.emplace_back();
  llvm::SmallVector<mlir::Value> entryArguments;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    mlir::Value argument =
        block->getArgument(unsigned(parameters.size() + stateArguments + i));
    entryArguments.push_back(argument);
    frame().scopes.back()[entry.params[i].name] = GenValue::ofTensor(
        argument, entryTypes[i].dims, resolveElement(entryTypes[i].element));
  }
  bindArgumentSizes(entryTypes, entryArguments, entryLocs);

  GenValue result;
  bool returned = false;
  if (!body(entry.syntax->body, result, returned) || failed)
    return false;
  if (!returned)
    return fail(entry.loc, entry.name, "the entry does not return");
  result = asTensor(result, resultElement, entryLoc);
  if (!result.isTensor())
    return fail(entry.loc, entry.name, "the entry does not return a tensor");
  mlir::Value value = result.tensor;
  if (value.getType() != mlirResult)
    value = mlir::tensor::CastOp::create(builder, entryLoc, mlirResult, value);
  llvm::SmallVector<mlir::Value> results = {value};
  for (size_t i = 0; i < stateArguments; ++i) {
    mlir::Value state = current.stateValues[i].tensor;
    if (state.getType() != resultTypes[i + 1])
      state = mlir::tensor::CastOp::create(builder, entryLoc,
                                           resultTypes[i + 1], state);
    results.push_back(state);
  }
  mlir::func::ReturnOp::create(builder, entryLoc, results);
  current = FunctionState();
  return !failed;
}

/// Whether calls of `block`'s functions become functions of their own: a
/// block with sub-blocks is a layer or a mixer, big enough that sharing its
/// code between instances pays; leaves (Linear, norms) are inlined so that
/// their elementwise work fuses with their neighbours.
static bool isOutlinedBlock(const BlockDecl &block) {
  for (const MemberDecl &member : block.members)
    if (std::holds_alternative<SubDecl>(member))
      return true;
  return false;
}

std::optional<GenValue>
Generator::outlinedCall(const BlockDecl &block, const FnDecl &fn,
                        const std::string &path, const Substitution &generics,
                        std::vector<GenValue> arguments, llvm::SMRange at) {
  const CheckedFunction *function = checked.find(&block, fn.name);
  if (!function || !function->ok || !isOutlinedBlock(block) || !fn.result)
    return std::nullopt;
  // The callee's frame: its block's generics as bound, its own generics as
  // fresh symbols whose values it reads off its arguments.
  Frame callee;
  callee.block = &block;
  callee.function = function;
  for (const GenericDecl &generic : block.generics) {
    if (auto it = generics.sizes.find(generic.name);
        it != generics.sizes.end()) {
      if (!it->second.isConstant())
        return std::nullopt;
      callee.generics.sizes.insert(*it);
    }
    if (auto it = generics.elements.find(generic.name);
        it != generics.elements.end())
      callee.generics.elements.insert(*it);
    if (generics.shapes.count(generic.name))
      return std::nullopt;
  }
  for (const GenericDecl &generic : fn.generics) {
    if (generic.kind != GenericKind::Dim)
      return std::nullopt;
    callee.generics.sizes[generic.name] = ShapeExpr::symbol(generic.symbol());
  }
  addQuotients(callee);
  std::vector<ValueType> paramTypes;
  for (const FnParamDecl &param : fn.params) {
    paramTypes.push_back(instantiateType(param.type, callee.generics));
    if (paramTypes.back().kind != ValueType::Tensor)
      return std::nullopt;
  }
  // Every own generic must be some argument's dimension.
  for (const GenericDecl &generic : fn.generics) {
    bool found = false;
    for (const ValueType &type : paramTypes)
      for (const ValueDim &dim : type.dims)
        found |= dim.size && *dim.size == ShapeExpr::symbol(generic.symbol());
    if (!found)
      return std::nullopt;
  }
  ValueType resultType = instantiateType(*fn.result, callee.generics);
  std::vector<ValueType> resultTypes = resultType.kind == ValueType::Tuple
                                           ? resultType.elements
                                           : std::vector<ValueType>{resultType};
  for (const ValueType &type : resultTypes)
    if (type.kind != ValueType::Tensor)
      return std::nullopt;

  // The parameters of the block instance's subtree, by relative path.
  std::string prefix = path + ".";
  llvm::SmallVector<mlir::Value> parameterValues;
  FunctionState inner;
  for (size_t i = 0; i < current.parameterDecls.size(); ++i) {
    llvm::StringRef relative = current.parameterPaths[i];
    if (!relative.starts_with(prefix))
      continue;
    inner.parameterIndex[relative.drop_front(prefix.size())] =
        unsigned(inner.parameterDecls.size());
    inner.parameterDecls.push_back(current.parameterDecls[i]);
    inner.parameterPaths.push_back(relative.drop_front(prefix.size()).str());
    parameterValues.push_back(current.parameterArguments[i]);
  }
  // The state of the subtree is passed in and its new value returned, so
  // that stateful functions are shared between layers too.
  llvm::SmallVector<unsigned> callerStates;
  for (size_t i = 0; i < current.stateDecls.size(); ++i) {
    llvm::StringRef relative = current.statePaths[i];
    if (!relative.starts_with(prefix))
      continue;
    inner.stateIndex[relative.drop_front(prefix.size())] =
        unsigned(inner.stateDecls.size());
    inner.stateDecls.push_back(current.stateDecls[i]);
    inner.statePaths.push_back(relative.drop_front(prefix.size()).str());
    callerStates.push_back(unsigned(i));
  }
  if (function->writesState && callerStates.empty())
    return std::nullopt;
  size_t stateCount = callerStates.size();

  std::string key =
      block.qualifiedName() + "." + fn.name + (stateCount ? "|with-state" : "");
  std::string name = block.name + "." + fn.name;
  for (const GenericDecl &generic : block.generics) {
    if (auto it = callee.generics.sizes.find(generic.name);
        it != callee.generics.sizes.end())
      key += "|" + it->second.str();
    if (auto it = callee.generics.elements.find(generic.name);
        it != callee.generics.elements.end())
      key += "|" + it->second.name;
  }
  mlir::func::FuncOp func;
  if (auto it = outlined.find(key); it != outlined.end()) {
    func = it->second;
  } else {
    // Argument types: the parameters' types, then the callee's view of its
    // arguments (its own generics dynamic).
    llvm::SmallVector<mlir::Type> argumentTypes;
    for (const ModelParameter *parameter : inner.parameterDecls) {
      DimList dims;
      for (int64_t size : parameter->shape)
        dims.push_back(ValueDim::of(ShapeExpr::constant(size)));
      argumentTypes.push_back(tensorType(dims, parameter->element));
    }
    llvm::SmallVector<mlir::Type> stateTypes;
    for (unsigned index : callerStates)
      stateTypes.push_back(current.stateValues[index].tensor.getType());
    argumentTypes.append(stateTypes.begin(), stateTypes.end());
    llvm::SmallVector<mlir::Type> results;
    {
      // Types are resolved in the callee's frame.
      FunctionState saved = std::move(current);
      current = FunctionState();
      current.frames.push_back(callee);
      for (const ValueType &type : paramTypes)
        argumentTypes.push_back(
            tensorType(type.dims, resolveElement(type.element)));
      for (const ValueType &type : resultTypes)
        results.push_back(tensorType(type.dims, resolveElement(type.element)));
      current = std::move(saved);
    }
    results.append(stateTypes.begin(), stateTypes.end());
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    mlir::Location fnLoc = mlir::FileLineColLoc::get(&context, "", 0, 0);
    {
      llvm::SourceMgr &sourceMgr = diags.getSourceMgr();
      unsigned buffer = sourceMgr.FindBufferContainingLoc(fn.loc.Start);
      if (buffer != 0) {
        auto [line, column] = sourceMgr.getLineAndColumn(fn.loc.Start, buffer);
        fnLoc = mlir::FileLineColLoc::get(
            &context, sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier(),
            line, column);
      }
    }
    std::string symbol = name;
    for (unsigned n = 1; module.lookupSymbol(symbol); ++n)
      symbol = name + "." + std::to_string(n);
    func = mlir::func::FuncOp::create(
        builder, fnLoc, symbol,
        builder.getFunctionType(argumentTypes, results));
    func.setPrivate();
    for (size_t i = 0; i < inner.parameterDecls.size(); ++i) {
      func.setArgAttr(unsigned(i), "linnet.parameter",
                      builder.getStringAttr(inner.parameterPaths[i]));
      func.setArgAttr(unsigned(i), "bufferization.writable",
                      builder.getBoolAttr(false));
    }
    outlined[key] = func;

    mlir::Block *entryBlock = func.addEntryBlock();
    builder.setInsertionPointToStart(entryBlock);
    FunctionState saved = std::move(current);
    current = std::move(inner);
    inner = FunctionState();
    for (size_t i = 0; i < current.parameterDecls.size(); ++i)
      current.parameterArguments.push_back(
          entryBlock->getArgument(unsigned(i)));
    for (size_t i = 0; i < stateCount; ++i) {
      const ModelParameter &state = *current.stateDecls[i];
      DimList dims;
      for (int64_t size : state.shape)
        dims.push_back(ValueDim::of(ShapeExpr::constant(size)));
      unsigned index = unsigned(current.parameterDecls.size() + i);
      func.setArgAttr(index, "linnet.state",
                      builder.getStringAttr(current.statePaths[i]));
      // The state's new value, after the function's own results.
      func.setResultAttr(unsigned(results.size() - stateCount + i),
                         "linnet.state",
                         builder.getStringAttr(current.statePaths[i]));
      current.stateValues.push_back(GenValue::ofTensor(
          entryBlock->getArgument(index), dims, state.element));
    }
    current.frames.push_back(callee);
    frame().scopes.emplace_back();
    llvm::SmallVector<mlir::Value> own;
    std::vector<llvm::SMRange> ownLocs;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      mlir::Value argument = entryBlock->getArgument(
          unsigned(current.parameterDecls.size() + stateCount + i));
      own.push_back(argument);
      ownLocs.push_back(fn.params[i].loc);
      frame().scopes.back()[fn.params[i].name] = GenValue::ofTensor(
          argument, paramTypes[i].dims, resolveElement(paramTypes[i].element));
    }
    bindArgumentSizes(paramTypes, own, ownLocs);
    GenValue result;
    bool returned = false;
    bool ok = body(fn.syntax->body, result, returned) && returned && !failed;
    if (ok) {
      std::vector<GenValue> values =
          resultTypes.size() == 1 && result.kind != GenValue::Tuple
              ? std::vector<GenValue>{result}
              : result.elements;
      llvm::SmallVector<mlir::Value> returnedValues;
      for (size_t i = 0; i < values.size() && i < resultTypes.size(); ++i) {
        GenValue value =
            asTensor(values[i], resolveElement(resultTypes[i].element), fnLoc);
        mlir::Value tensor = value.tensor;
        if (tensor && tensor.getType() != results[i])
          tensor =
              mlir::tensor::CastOp::create(builder, fnLoc, results[i], tensor);
        returnedValues.push_back(tensor);
      }
      for (size_t i = 0; i < stateCount; ++i) {
        mlir::Value state = current.stateValues[i].tensor;
        mlir::Type type = results[resultTypes.size() + i];
        if (state.getType() != type)
          state = mlir::tensor::CastOp::create(builder, fnLoc, type, state);
        returnedValues.push_back(state);
      }
      ok = returnedValues.size() == results.size();
      if (ok)
        mlir::func::ReturnOp::create(builder, fnLoc, returnedValues);
    }
    current = std::move(saved);
    if (!ok) {
      if (!failed)
        fail(fn.loc, fn.name, "the function does not return its result");
      return GenValue();
    }
  }

  // The call: parameters, then the arguments cast to the callee's types.
  mlir::Location callLoc = loc(at);
  llvm::SmallVector<mlir::Value> operands(parameterValues);
  for (unsigned index : callerStates)
    operands.push_back(current.stateValues[index].tensor);
  mlir::FunctionType type = func.getFunctionType();
  for (size_t i = 0; i < arguments.size(); ++i) {
    unsigned index = unsigned(parameterValues.size() + stateCount + i);
    auto expected = mlir::cast<mlir::RankedTensorType>(type.getInput(index));
    GenValue argument =
        asTensor(arguments[i], elementOf(expected.getElementType()), callLoc);
    if (!argument.isTensor())
      return GenValue();
    mlir::Value value = argument.tensor;
    if (value.getType() != expected)
      value = mlir::tensor::CastOp::create(builder, callLoc, expected, value);
    operands.push_back(value);
  }
  auto call = mlir::func::CallOp::create(builder, callLoc, func, operands);
  // The subtree's state after the call.
  unsigned stateResults = call.getNumResults() - unsigned(stateCount);
  for (size_t i = 0; i < stateCount; ++i) {
    GenValue &state = current.stateValues[callerStates[i]];
    state = GenValue::ofTensor(call.getResult(stateResults + unsigned(i)),
                               state.dims, state.element);
  }
  // Results in the caller's terms.
  ValueType callerResult = instantiateType(*fn.result, generics);
  std::vector<ValueType> callerTypes =
      callerResult.kind == ValueType::Tuple
          ? callerResult.elements
          : std::vector<ValueType>{callerResult};
  std::vector<GenValue> values;
  for (size_t i = 0; i < callerTypes.size(); ++i) {
    ElementType element = resolveElement(callerTypes[i].element);
    DimList dims = callerTypes[i].dims;
    mlir::Value value = call.getResult(unsigned(i));
    mlir::RankedTensorType wanted = tensorType(dims, element);
    if (value.getType() != wanted)
      value = mlir::tensor::CastOp::create(builder, callLoc, wanted, value);
    values.push_back(GenValue::ofTensor(value, dims, element));
  }
  if (callerResult.kind == ValueType::Tuple)
    return GenValue::tuple(std::move(values));
  return values.front();
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Generator::bindPattern(const ast::Pattern &pattern,
                            const GenValue &value) {
  if (auto *name = boost::get<ast::Identifier>(&pattern)) {
    if (name->name != "_")
      frame().scopes.back()[name->name] = value;
    return;
  }
  const auto &tuple =
      boost::get<boost::spirit::x3::forward_ast<ast::TuplePattern>>(pattern)
          .get();
  for (size_t i = 0; i < tuple.elements.size() && i < value.elements.size();
       ++i)
    bindPattern(tuple.elements[i], value.elements[i]);
}

bool Generator::body(const ast::Body &body, GenValue &result, bool &returned) {
  for (const ast::Statement &statement : body.statements) {
    if (failed)
      return false;
    if (auto *let = boost::get<ast::LetStmt>(&statement)) {
      GenValue value = generate(let->value);
      if (value.kind == GenValue::Invalid)
        return false;
      bindPattern(let->pattern, value);
      continue;
    }
    if (boost::get<ast::RequireStmt>(&statement))
      continue; // proven when the model was bound
    if (auto *ret = boost::get<ast::ReturnStmt>(&statement)) {
      result = generate(ret->value);
      returned = true;
      return result.kind != GenValue::Invalid;
    }
    if (auto *assign = boost::get<ast::AssignStmt>(&statement)) {
      GenValue *local = nullptr;
      for (auto scope = frame().scopes.rbegin();
           scope != frame().scopes.rend() && !local; ++scope)
        if (auto it = scope->find(assign->target.name); it != scope->end())
          local = &it->second;
      GenValue value = generate(assign->value);
      if (value.kind == GenValue::Invalid)
        return false;
      if (local && assign->indices.empty()) {
        *local = value;
        continue;
      }
      // A write of a state member: its value from here on.
      auto it =
          current.stateIndex.find(joinPath(frame().path, assign->target.name));
      if (it == current.stateIndex.end())
        return fail(assign->range, assign->target.name,
                    "`state` is written outside a stateful entry");
      GenValue &state = current.stateValues[it->second];
      if (assign->indices.size() > 1)
        return fail(assign->range, assign->target.name,
                    "one index list per write is supported");
      if (assign->indices.empty()) {
        GenValue written = asTensor(value, state.element, loc(assign->range));
        if (!written.isTensor())
          return fail(assign->range, assign->target.name,
                      "the value is not a tensor");
        mlir::Value tensor = written.tensor;
        if (tensor.getType() != state.tensor.getType())
          tensor = mlir::tensor::CastOp::create(builder, loc(assign->range),
                                                state.tensor.getType(), tensor);
        state = GenValue::ofTensor(tensor, state.dims, state.element);
        continue;
      }
      GenValue updated =
          scatter(state, assign->indices.front(), value, assign->range);
      if (!updated.isTensor())
        return false;
      state = updated;
      continue;
    }
    const auto &loop =
        boost::get<boost::spirit::x3::forward_ast<ast::ForStmt>>(statement)
            .get();
    GenValue sequence = generate(loop.sequence);
    if (sequence.kind != GenValue::BlockArray)
      return fail(loop.range, "for", "only arrays of sub-blocks are iterated");
    for (int64_t i = 0; i < sequence.count; ++i) {
      GenValue element = sequence;
      element.kind = GenValue::Block;
      element.path = sequence.path + "." + std::to_string(i);
      frame().scopes.emplace_back();
      frame().scopes.back()[loop.variable.name] = element;
      bool ok = this->body(loop.body, result, returned);
      frame().scopes.pop_back();
      if (!ok)
        return false;
      if (returned)
        return true;
    }
  }
  return !failed;
}

//===----------------------------------------------------------------------===//
// Names, members and calls
//===----------------------------------------------------------------------===//

GenValue Generator::memberOf(const GenValue &owner, const std::string &name,
                             llvm::SMRange range) {
  const MemberDecl *member = owner.block->findMember(name);
  if (!member) {
    fail(range, name, "no such member");
    return {};
  }
  if (auto *sub = std::get_if<SubDecl>(member)) {
    GenValue value;
    value.kind = sub->count ? GenValue::BlockArray : GenValue::Block;
    value.block = sub->block;
    value.path = joinPath(owner.path, sub->name);
    if (sub->count) {
      auto count = constantSize(resolveSize(*sub->count));
      if (!count) {
        fail(range, name, "the array's length is not bound");
        return {};
      }
      value.count = *count;
    }
    return value;
  }
  if (std::get_if<ParamDecl>(member)) {
    std::string path = joinPath(owner.path, name);
    auto it = current.parameterIndex.find(path);
    if (it == current.parameterIndex.end()) {
      fail(range, path, "the parameter is not in the model's parameter list");
      return {};
    }
    const ModelParameter &parameter = *current.parameterDecls[it->second];
    DimList dims;
    for (int64_t size : parameter.shape)
      dims.push_back(ValueDim::of(ShapeExpr::constant(size)));
    return GenValue::ofTensor(current.parameterArguments[it->second], dims,
                              parameter.element);
  }
  if (std::get_if<StateDecl>(member)) {
    auto it = current.stateIndex.find(joinPath(owner.path, name));
    if (it == current.stateIndex.end()) {
      fail(range, name, "`state` is read outside a stateful entry");
      return {};
    }
    return current.stateValues[it->second];
  }
  fail(range, name, "a function is only called");
  return {};
}

GenValue Generator::generateNode(const ast::Identifier &name,
                                 const ast::Expr &expr) {
  for (auto scope = frame().scopes.rbegin(); scope != frame().scopes.rend();
       ++scope)
    if (auto it = scope->find(name.name); it != scope->end())
      return it->second;
  ValueType type = typeOf(expr);
  switch (type.kind) {
  case ValueType::Size:
    return GenValue::ofSize(*type.value);
  case ValueType::Element: {
    GenValue value;
    value.kind = GenValue::Element;
    value.element = resolveElement(type.element);
    return value;
  }
  case ValueType::SizeList: {
    GenValue value;
    value.kind = GenValue::SizeList;
    value.dims = type.dims;
    return value;
  }
  default:
    break;
  }
  GenValue self;
  self.kind = GenValue::Block;
  self.block = frame().block;
  self.path = frame().path;
  return memberOf(self, name.name, name.range);
}

GenValue Generator::generateNode(const ast::MemberExpr &member,
                                 const ast::Expr &) {
  GenValue base = generate(member.base);
  if (base.kind != GenValue::Block) {
    if (base.kind != GenValue::Invalid)
      fail(member.range, member.member.name, "only blocks have members");
    return {};
  }
  return memberOf(base, member.member.name, member.range);
}

GenValue Generator::generateNode(const ast::CallExpr &call,
                                 const ast::Expr &expr) {
  return this->call(call, expr);
}

GenValue Generator::call(const ast::CallExpr &call, const ast::Expr &expr) {
  const CallResolution *resolution =
      frame().function->annotations.resolution(call);
  if (!resolution) {
    fail(call.range, "this call", "it was not checked");
    return {};
  }
  if (resolution->builtin)
    return builtin(*resolution, call, expr);

  // Where the callee's block sits: this block, or a sub (or loop variable).
  std::string path = frame().path;
  bool ownBlock = true;
  if (auto *member =
          boost::get<boost::spirit::x3::forward_ast<ast::MemberExpr>>(
              &call.callee)) {
    GenValue owner = generate(member->get().base);
    if (owner.kind != GenValue::Block) {
      if (owner.kind != GenValue::Invalid)
        fail(call.range, "this call", "the callee is not a block's function");
      return {};
    }
    path = owner.path;
    ownBlock = false;
  }
  Substitution generics = composeGenerics(resolution->calleeGenerics);
  if (ownBlock) {
    // A function of the same block shares the block's generics.
    for (const GenericDecl &generic : frame().block->generics) {
      const Substitution &mine = frame().generics;
      if (auto it = mine.sizes.find(generic.name); it != mine.sizes.end())
        generics.sizes.insert(*it);
      if (auto it = mine.elements.find(generic.name); it != mine.elements.end())
        generics.elements.insert(*it);
      if (auto it = mine.shapes.find(generic.name); it != mine.shapes.end())
        generics.shapes.insert(*it);
    }
  }
  std::vector<GenValue> arguments;
  for (const ast::Expr *argument : resolution->arguments) {
    arguments.push_back(generate(*argument));
    if (arguments.back().kind == GenValue::Invalid)
      return {};
  }
  if (!ownBlock)
    if (auto value = outlinedCall(*resolution->calleeBlock, *resolution->callee,
                                  path, generics, arguments, call.range))
      return *value;
  return inlineCall(*resolution->calleeBlock, *resolution->callee, path,
                    std::move(generics), std::move(arguments), call.range);
}

GenValue Generator::inlineCall(const BlockDecl &block, const FnDecl &fn,
                               const std::string &path, Substitution generics,
                               std::vector<GenValue> arguments,
                               llvm::SMRange at) {
  const CheckedFunction *function = checked.find(&block, fn.name);
  if (!function || !function->ok) {
    fail(at, fn.name, "the function did not check");
    return {};
  }
  if (current.frames.size() > 256) {
    fail(at, fn.name, "calls nest too deeply");
    return {};
  }
  Frame callee;
  callee.block = &block;
  callee.function = function;
  callee.path = path;
  callee.generics = std::move(generics);
  callee.caller = loc(at);
  addQuotients(callee);
  callee.scopes.emplace_back();
  current.frames.push_back(std::move(callee));
  for (size_t i = 0; i < fn.params.size() && i < arguments.size(); ++i) {
    GenValue argument = arguments[i];
    ValueType type = instantiateType(fn.params[i].type, frame().generics);
    if (type.kind == ValueType::Tensor && !argument.isTensor())
      argument = asTensor(argument, resolveElement(type.element), loc(at));
    frame().scopes.back()[fn.params[i].name] = argument;
  }
  GenValue result;
  bool returned = false;
  bool ok = body(fn.syntax->body, result, returned);
  current.frames.pop_back();
  if (!ok || failed)
    return {};
  if (!returned) {
    fail(at, fn.name, "the function does not return");
    return {};
  }
  return result;
}

GenValue Generator::generate(const ast::Expr &expr) {
  if (failed)
    return {};
  return boost::apply_visitor(
      [&](const auto &node) -> GenValue {
        if constexpr (
            std::is_same_v<std::decay_t<decltype(node)>, ast::IntegerLiteral> ||
            std::is_same_v<std::decay_t<decltype(node)>, ast::FloatLiteral> ||
            std::is_same_v<std::decay_t<decltype(node)>, ast::BoolLiteral> ||
            std::is_same_v<std::decay_t<decltype(node)>, ast::Identifier>)
          return generateNode(node, expr);
        else
          return generateNode(node.get(), expr);
      },
      expr);
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

mlir::OwningOpRef<mlir::ModuleOp>
linnet::generateIR(mlir::MLIRContext &context, const Program &program,
                   const CheckedProgram &checked, const BoundModel &model,
                   llvm::ArrayRef<ModelParameter> parameters,
                   llvm::ArrayRef<std::string> entries,
                   DiagnosticEngine &diags) {
  mlir::DialectRegistry registry;
  registerIRGenDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();

  // Every entry asked for must exist.
  std::string names;
  for (const MemberDecl &member : model.root->members)
    if (auto *fn = std::get_if<FnDecl>(&member); fn && fn->isEntry)
      names += (names.empty() ? "`" : ", `") + fn->name + "`";
  for (const std::string &name : entries) {
    const MemberDecl *member = model.root->findMember(name);
    const FnDecl *fn = member ? std::get_if<FnDecl>(member) : nullptr;
    if (!fn || !fn->isEntry) {
      diags.report(diag::UnknownEntry, name, model.root->qualifiedName(),
                   "the entries " + names);
      return nullptr;
    }
  }

  Generator generator(context, program, checked, model, parameters, diags);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  for (const MemberDecl &member : model.root->members) {
    auto *fn = std::get_if<FnDecl>(&member);
    if (!fn || !fn->isEntry)
      continue;
    if (!entries.empty() && llvm::find(entries, fn->name) == entries.end())
      continue;
    if (!generator.generateEntry(*fn, *module))
      return nullptr;
  }
  if (mlir::failed(mlir::verify(*module))) {
    diags.report(diag::NotCompilable, model.root->qualifiedName(),
                 "the generated IR does not verify (a compiler bug)");
    return nullptr;
  }
  return module;
}
