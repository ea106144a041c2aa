//===- GenOperations.cpp - Operators and built-in operations --------------===//
//
// Each operator and built-in of docs/language.md becomes tensor-level MLIR:
// elementwise operations and broadcasts are linalg.generic ops (fused later
// into dispatch regions), reductions and contractions are linalg.generic
// ops with reduction iterators accumulating in f32, reshapes are
// collapse/expand pairs, slices are extract/insert_slice, and the special
// operations are linnet dialect ops. Result types come from the checker's
// annotations, so no typing rule is decided twice.
//
//===----------------------------------------------------------------------===//

#include "Generator.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>

using namespace linnet;
using namespace linnet::irgen;
namespace arith = mlir::arith;
namespace linalg = mlir::linalg;
namespace tensor = mlir::tensor;
using mlir::utils::IteratorType;

static bool isFloat(ElementType element) { return isFloatType(element); }

/// Where floats are computed: f32 for narrower floats, as PyTorch does.
static ElementType computeElement(ElementType element) {
  return element == ElementType::BF16 || element == ElementType::F16
             ? ElementType::F32
             : element;
}

static std::optional<int64_t> constantOf(const ShapeExpr &size) {
  auto value = size.constantValue();
  if (!value || !value->isInteger())
    return std::nullopt;
  return value->numerator();
}

static bool isOne(const ValueDim &dim) {
  return dim.size && constantOf(*dim.size) == 1;
}

//===----------------------------------------------------------------------===//
// Scalars and conversions
//===----------------------------------------------------------------------===//

mlir::Value Generator::convertScalar(mlir::Value value, ElementType from,
                                     ElementType to, mlir::Location at) {
  if (from == to)
    return value;
  mlir::Type target = mlirElement(to);
  if (isFloat(from) && isFloat(to)) {
    if (elementTypeBytes(to) > elementTypeBytes(from) ||
        (from == ElementType::BF16 && to == ElementType::F16) ||
        (from == ElementType::F16 && to == ElementType::BF16)) {
      if (elementTypeBytes(to) == elementTypeBytes(from)) {
        mlir::Value wide =
            arith::ExtFOp::create(builder, at, builder.getF32Type(), value);
        return arith::TruncFOp::create(builder, at, target, wide);
      }
      return arith::ExtFOp::create(builder, at, target, value);
    }
    return arith::TruncFOp::create(builder, at, target, value);
  }
  if (!isFloat(from) && isFloat(to))
    return from == ElementType::I1
               ? arith::UIToFPOp::create(builder, at, target, value).getResult()
               : arith::SIToFPOp::create(builder, at, target, value)
                     .getResult();
  if (isFloat(from) && !isFloat(to)) {
    if (to == ElementType::I1) {
      mlir::Value zero = arith::ConstantOp::create(
          builder, at, builder.getFloatAttr(value.getType(), 0.0));
      return arith::CmpFOp::create(builder, at, arith::CmpFPredicate::UNE,
                                   value, zero);
    }
    return arith::FPToSIOp::create(builder, at, target, value);
  }
  unsigned fromBits = value.getType().getIntOrFloatBitWidth();
  unsigned toBits = target.getIntOrFloatBitWidth();
  if (to == ElementType::I1) {
    mlir::Value zero = arith::ConstantOp::create(
        builder, at, builder.getIntegerAttr(value.getType(), 0));
    return arith::CmpIOp::create(builder, at, arith::CmpIPredicate::ne, value,
                                 zero);
  }
  if (toBits > fromBits)
    return from == ElementType::I1
               ? arith::ExtUIOp::create(builder, at, target, value).getResult()
               : arith::ExtSIOp::create(builder, at, target, value).getResult();
  return arith::TruncIOp::create(builder, at, target, value);
}

mlir::Value Generator::scalarOf(const GenValue &value, ElementType element,
                                mlir::Location at) {
  mlir::Type type = mlirElement(element);
  switch (value.kind) {
  case GenValue::Number:
  case GenValue::Bool:
    if (mlir::isa<mlir::FloatType>(type))
      return arith::ConstantOp::create(
          builder, at, builder.getFloatAttr(type, value.number));
    return arith::ConstantOp::create(
        builder, at, builder.getIntegerAttr(type, int64_t(value.number)));
  case GenValue::Size: {
    if (auto constant = constantOf(value.size)) {
      if (mlir::isa<mlir::FloatType>(type))
        return arith::ConstantOp::create(
            builder, at, builder.getFloatAttr(type, double(*constant)));
      return arith::ConstantOp::create(builder, at,
                                       builder.getIntegerAttr(type, *constant));
    }
    mlir::Value index = indexValue(value.size, at);
    mlir::Value wide =
        arith::IndexCastOp::create(builder, at, builder.getI64Type(), index);
    return convertScalar(wide, ElementType::I64, element, at);
  }
  case GenValue::Tensor: {
    mlir::Value scalar = tensor::ExtractOp::create(builder, at, value.tensor,
                                                   mlir::ValueRange{});
    return convertScalar(scalar, value.element, element, at);
  }
  default:
    fail({}, "a value", "it is not a scalar");
    return arith::ConstantOp::create(builder, at,
                                     scalarAttrOrZero(builder, type));
  }
}

mlir::TypedAttr irgen::scalarAttrOrZero(mlir::OpBuilder &builder,
                                        mlir::Type type) {
  if (auto floatType = mlir::dyn_cast<mlir::FloatType>(type))
    return builder.getFloatAttr(floatType, 0.0);
  return builder.getIntegerAttr(type, 0);
}

GenValue Generator::asTensor(const GenValue &value, ElementType element,
                             mlir::Location at) {
  if (value.isTensor() || value.kind == GenValue::Invalid ||
      value.kind == GenValue::Tuple)
    return value;
  mlir::Value scalar = scalarOf(value, element, at);
  mlir::Value tensor = tensor::FromElementsOp::create(
      builder, at, mlir::RankedTensorType::get({}, scalar.getType()),
      mlir::ValueRange{scalar});
  return GenValue::ofTensor(tensor, {}, element);
}

//===----------------------------------------------------------------------===//
// Structured operations
//===----------------------------------------------------------------------===//

/// The map reading an operand of `dims` broadcast to a result of rank
/// `rank` (aligned from the right; a constant 1 against another size is
/// read at 0).
static mlir::AffineMap broadcastMap(mlir::MLIRContext *context,
                                    const DimList &dims,
                                    const DimList &result) {
  unsigned rank = unsigned(result.size());
  unsigned offset = rank - unsigned(dims.size());
  llvm::SmallVector<mlir::AffineExpr> exprs;
  for (unsigned i = 0; i < dims.size(); ++i) {
    if (isOne(dims[i]) && !isOne(result[offset + i]))
      exprs.push_back(mlir::getAffineConstantExpr(0, context));
    else
      exprs.push_back(mlir::getAffineDimExpr(offset + i, context));
  }
  return mlir::AffineMap::get(rank, 0, exprs, context);
}

mlir::Value Generator::elementwise(llvm::ArrayRef<GenValue> operands,
                                   llvm::ArrayRef<ElementType> computeIn,
                                   const DimList &dims, ElementType element,
                                   mlir::Location at, ElementBody body) {
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<mlir::AffineMap> maps;
  // Per operand: the input number, or the captured scalar.
  llvm::SmallVector<int> inputOf;
  llvm::SmallVector<mlir::Value> captured;
  for (size_t i = 0; i < operands.size(); ++i) {
    const GenValue &operand = operands[i];
    if (operand.isTensor() && operand.rank() > 0) {
      inputOf.push_back(int(inputs.size()));
      inputs.push_back(operand.tensor);
      maps.push_back(broadcastMap(&context, operand.dims, dims));
      captured.push_back({});
    } else {
      inputOf.push_back(-1);
      captured.push_back(scalarOf(operand, computeIn[i], at));
    }
  }
  maps.push_back(builder.getMultiDimIdentityMap(unsigned(dims.size())));
  llvm::SmallVector<IteratorType> iterators(dims.size(),
                                            IteratorType::parallel);
  mlir::Value init = emptyTensor(dims, element, at);
  auto generic = linalg::GenericOp::create(
      builder, at, mlir::TypeRange{init.getType()}, inputs,
      mlir::ValueRange{init}, maps, iterators,
      [&](mlir::OpBuilder &nested, mlir::Location bodyLoc,
          mlir::ValueRange args) {
        mlir::OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
        llvm::SmallVector<mlir::Value> values;
        for (size_t i = 0; i < operands.size(); ++i) {
          if (inputOf[i] < 0) {
            values.push_back(captured[i]);
            continue;
          }
          values.push_back(convertScalar(args[inputOf[i]], operands[i].element,
                                         computeIn[i], bodyLoc));
        }
        mlir::Value result = body(builder, bodyLoc, values);
        linalg::YieldOp::create(builder, bodyLoc, result);
      });
  return generic.getResult(0);
}

/// Sums (or maximums) over `axis` into `accumulator`'s element, keeping the
/// axis as 1 when `keep`.
static mlir::Value reduceAxis(Generator &gen, const GenValue &input,
                              unsigned axis, bool keep, ElementType accumulate,
                              bool maximum, mlir::Location at) {
  mlir::OpBuilder &builder = gen.builder;
  // The axis is removed; a kept axis is put back as 1 by a reshape, so the
  // reduction's result is read by an identity map (what tiling needs).
  DimList resultDims, keptDims;
  for (unsigned i = 0; i < input.rank(); ++i) {
    if (i != axis)
      resultDims.push_back(input.dims[i]);
    keptDims.push_back(i != axis ? input.dims[i]
                                 : ValueDim::of(ShapeExpr::constant(1)));
  }
  double initial = 0;
  if (maximum)
    initial = isFloat(accumulate) ? -INFINITY : double(INT32_MIN);
  mlir::Value init = gen.filledTensor(resultDims, accumulate, initial, at);
  unsigned rank = input.rank();
  llvm::SmallVector<mlir::AffineExpr> outExprs;
  for (unsigned i = 0; i < rank; ++i) {
    if (i != axis)
      outExprs.push_back(builder.getAffineDimExpr(i));
  }
  llvm::SmallVector<mlir::AffineMap> maps = {
      builder.getMultiDimIdentityMap(rank),
      mlir::AffineMap::get(rank, 0, outExprs, builder.getContext())};
  llvm::SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators[axis] = IteratorType::reduction;
  ElementType from = input.element;
  auto generic = linalg::GenericOp::create(
      builder, at, mlir::TypeRange{init.getType()},
      mlir::ValueRange{input.tensor}, mlir::ValueRange{init}, maps, iterators,
      [&](mlir::OpBuilder &nested, mlir::Location bodyLoc,
          mlir::ValueRange args) {
        mlir::OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
        mlir::Value x = gen.convertScalar(args[0], from, accumulate, bodyLoc);
        mlir::Value result;
        if (isFloat(accumulate))
          result = maximum
                       ? arith::MaximumFOp::create(builder, bodyLoc, x, args[1])
                             .getResult()
                       : arith::AddFOp::create(builder, bodyLoc, x, args[1])
                             .getResult();
        else
          result = maximum
                       ? arith::MaxSIOp::create(builder, bodyLoc, x, args[1])
                             .getResult()
                       : arith::AddIOp::create(builder, bodyLoc, x, args[1])
                             .getResult();
        linalg::YieldOp::create(builder, bodyLoc, result);
      });
  if (!keep)
    return generic.getResult(0);
  return gen.reshape(
      GenValue::ofTensor(generic.getResult(0), resultDims, accumulate),
      keptDims, at);
}

mlir::Value Generator::transpose(const GenValue &value,
                                 llvm::ArrayRef<int64_t> permutation,
                                 mlir::Location at) {
  unsigned rank = value.rank();
  DimList dims;
  llvm::SmallVector<mlir::AffineExpr> inputExprs(rank);
  for (unsigned i = 0; i < rank; ++i) {
    dims.push_back(value.dims[permutation[i]]);
    inputExprs[permutation[i]] = builder.getAffineDimExpr(i);
  }
  mlir::Value init = emptyTensor(dims, value.element, at);
  llvm::SmallVector<mlir::AffineMap> maps = {
      mlir::AffineMap::get(rank, 0, inputExprs, &context),
      builder.getMultiDimIdentityMap(rank)};
  llvm::SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, at, mlir::TypeRange{init.getType()},
             mlir::ValueRange{value.tensor}, mlir::ValueRange{init}, maps,
             iterators,
             [&](mlir::OpBuilder &nested, mlir::Location bodyLoc,
                 mlir::ValueRange args) {
               linalg::YieldOp::create(nested, bodyLoc, args[0]);
             })
      .getResult(0);
}

/// A numeric stand-in for a size, to decide which side of a reshape group
/// to extend: symbols count as large distinct values.
static double magnitude(const ShapeExpr &size) {
  double total = 0;
  for (const ShapeExpr::Term &term : size.getTerms()) {
    double product = double(term.coefficient.numerator()) /
                     double(term.coefficient.denominator());
    for (const ShapeSymbol &symbol : term.monomial)
      product *= 1000.0 + double(std::hash<std::string>()(symbol.name) % 997);
    total += product;
  }
  return total;
}

mlir::Value Generator::reshape(const GenValue &value, const DimList &dims,
                               mlir::Location at) {
  if (value.dims == dims)
    return value.tensor;
  mlir::RankedTensorType resultType = tensorType(dims, value.element);
  auto product = [](const ShapeExpr &a, const ShapeExpr &b) {
    auto result = ShapeExpr::multiply(a, b);
    if (!result) {
      llvm::consumeError(result.takeError());
      return a;
    }
    return *result;
  };
  // Groups of source and result axes with equal element counts.
  llvm::SmallVector<mlir::ReassociationIndices> sourceGroups, resultGroups;
  size_t i = 0, j = 0, n = value.dims.size(), m = dims.size();
  bool grouped = n > 0 && m > 0;
  while (grouped && (i < n || j < m)) {
    if (i == n || j == m) {
      // Trailing unit axes join the last group.
      for (; i < n && isOne(value.dims[i]); ++i)
        sourceGroups.back().push_back(int64_t(i));
      for (; j < m && isOne(dims[j]); ++j)
        resultGroups.back().push_back(int64_t(j));
      grouped = i == n && j == m;
      break;
    }
    mlir::ReassociationIndices source{int64_t(i)}, result{int64_t(j)};
    ShapeExpr left = *value.dims[i++].size, right = *dims[j++].size;
    while (left != right) {
      if (magnitude(left) < magnitude(right) && i < n) {
        source.push_back(int64_t(i));
        left = product(left, *value.dims[i++].size);
      } else if (j < m) {
        result.push_back(int64_t(j));
        right = product(right, *dims[j++].size);
      } else {
        grouped = false;
        break;
      }
    }
    // Unit axes on one side only join this group.
    while (i < n && isOne(value.dims[i]) && (j == m || !isOne(dims[j])))
      source.push_back(int64_t(i++));
    while (j < m && isOne(dims[j]) && (i == n || !isOne(value.dims[i])))
      result.push_back(int64_t(j++));
    sourceGroups.push_back(source);
    resultGroups.push_back(result);
  }
  // MLIR 22's expand-strided-metadata crashes on a subview of an
  // expand_shape that splits one axis into two dynamic ones ([B * S, H] to
  // [B, S, H]); such reshapes go through a shape tensor instead.
  for (const auto &group : resultGroups) {
    unsigned dynamic = 0;
    for (int64_t axis : group)
      dynamic += !constantOf(*dims[axis].size);
    grouped &= dynamic < 2;
  }
  if (!grouped) {
    // Rank 0, no common grouping, or the case above: through a shape tensor.
    llvm::SmallVector<mlir::Value> sizes;
    for (const ValueDim &dim : dims)
      sizes.push_back(indexValue(*dim.size, at));
    mlir::Value shape;
    if (sizes.empty())
      shape = tensor::EmptyOp::create(builder, at, llvm::ArrayRef<int64_t>{0},
                                      builder.getIndexType());
    else
      shape = tensor::FromElementsOp::create(builder, at, sizes);
    return tensor::ReshapeOp::create(builder, at, resultType, value.tensor,
                                     shape);
  }
  // Collapse each source group to one axis, then expand to the result.
  mlir::Value current = value.tensor;
  DimList middle;
  for (const auto &group : sourceGroups) {
    ShapeExpr size = ShapeExpr::constant(1);
    for (int64_t axis : group)
      size = product(size, *value.dims[axis].size);
    middle.push_back(ValueDim::of(size));
  }
  if (middle.size() != n)
    current = tensor::CollapseShapeOp::create(
        builder, at, tensorType(middle, value.element), current, sourceGroups);
  if (middle.size() != m) {
    llvm::SmallVector<mlir::OpFoldResult> outputShape;
    for (const ValueDim &dim : dims)
      outputShape.push_back(foldedIndex(*dim.size, at));
    current = tensor::ExpandShapeOp::create(builder, at, resultType, current,
                                            resultGroups, outputShape);
  }
  if (current.getType() != resultType)
    current = tensor::CastOp::create(builder, at, resultType, current);
  return current;
}

//===----------------------------------------------------------------------===//
// Literals, tuples, lists
//===----------------------------------------------------------------------===//

GenValue Generator::generateNode(const ast::IntegerLiteral &literal,
                                 const ast::Expr &expr) {
  int64_t value = 0;
  llvm::StringRef(literal.text).getAsInteger(10, value);
  return GenValue::ofSize(ShapeExpr::constant(value));
}

GenValue Generator::generateNode(const ast::FloatLiteral &literal,
                                 const ast::Expr &) {
  GenValue value;
  value.kind = GenValue::Number;
  value.number = std::strtod(literal.text.c_str(), nullptr);
  return value;
}

GenValue Generator::generateNode(const ast::BoolLiteral &literal,
                                 const ast::Expr &) {
  GenValue value;
  value.kind = GenValue::Bool;
  value.number = literal.value ? 1 : 0;
  value.element = ElementType::I1;
  return value;
}

GenValue Generator::generateNode(const ast::TupleExpr &tuple,
                                 const ast::Expr &) {
  std::vector<GenValue> elements;
  for (const ast::Expr &element : tuple.elements) {
    elements.push_back(generate(element));
    if (elements.back().kind == GenValue::Invalid)
      return {};
  }
  return GenValue::tuple(std::move(elements));
}

GenValue Generator::generateNode(const ast::ListExpr &list,
                                 const ast::Expr &expr) {
  // A size list is typed as a whole; concat's list of tensors is not.
  const ValueType *annotated = frame().function->annotations.typeOf(expr);
  if (annotated && annotated->kind == ValueType::SizeList) {
    GenValue value;
    value.kind = GenValue::SizeList;
    value.dims = typeOf(expr).dims;
    return value;
  }
  // A list of tensors (concat's operand): a tuple.
  std::vector<GenValue> elements;
  for (const ast::ListItem &item : list.items) {
    elements.push_back(generate(item.value));
    if (elements.back().kind == GenValue::Invalid)
      return {};
  }
  return GenValue::tuple(std::move(elements));
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

/// The element in which an operator compares or combines its operands: the
/// element of a tensor that is not a literal, else a literal's.
static ElementType operandElement(const GenValue &lhs, const GenValue &rhs,
                                  const ValueType &lhsType,
                                  const ValueType &rhsType) {
  if (lhs.isTensor() && !lhsType.weak)
    return lhs.element;
  if (rhs.isTensor() && !rhsType.weak)
    return rhs.element;
  if (lhs.isTensor())
    return lhs.element;
  if (rhs.isTensor())
    return rhs.element;
  if (lhs.kind == GenValue::Number || rhs.kind == GenValue::Number)
    return ElementType::F32;
  return ElementType::I64;
}

static mlir::Value combine(mlir::OpBuilder &builder, mlir::Location at,
                           llvm::StringRef op, mlir::Value a, mlir::Value b) {
  bool isFloatValue = mlir::isa<mlir::FloatType>(a.getType());
  if (isFloatValue) {
    if (op == "+")
      return arith::AddFOp::create(builder, at, a, b);
    if (op == "-")
      return arith::SubFOp::create(builder, at, a, b);
    if (op == "*")
      return arith::MulFOp::create(builder, at, a, b);
    if (op == "/")
      return arith::DivFOp::create(builder, at, a, b);
    if (op == "%")
      return arith::RemFOp::create(builder, at, a, b);
    auto predicate = llvm::StringSwitch<arith::CmpFPredicate>(op)
                         .Case("==", arith::CmpFPredicate::OEQ)
                         .Case("!=", arith::CmpFPredicate::UNE)
                         .Case("<", arith::CmpFPredicate::OLT)
                         .Case("<=", arith::CmpFPredicate::OLE)
                         .Case(">", arith::CmpFPredicate::OGT)
                         .Default(arith::CmpFPredicate::OGE);
    return arith::CmpFOp::create(builder, at, predicate, a, b);
  }
  if (op == "+")
    return arith::AddIOp::create(builder, at, a, b);
  if (op == "-")
    return arith::SubIOp::create(builder, at, a, b);
  if (op == "*")
    return arith::MulIOp::create(builder, at, a, b);
  if (op == "/")
    return arith::DivSIOp::create(builder, at, a, b);
  if (op == "%")
    return arith::RemSIOp::create(builder, at, a, b);
  if (op == "&&")
    return arith::AndIOp::create(builder, at, a, b);
  if (op == "||")
    return arith::OrIOp::create(builder, at, a, b);
  auto predicate = llvm::StringSwitch<arith::CmpIPredicate>(op)
                       .Case("==", arith::CmpIPredicate::eq)
                       .Case("!=", arith::CmpIPredicate::ne)
                       .Case("<", arith::CmpIPredicate::slt)
                       .Case("<=", arith::CmpIPredicate::sle)
                       .Case(">", arith::CmpIPredicate::sgt)
                       .Default(arith::CmpIPredicate::sge);
  return arith::CmpIOp::create(builder, at, predicate, a, b);
}

static GenValue matmul(Generator &gen, const GenValue &a, const GenValue &b,
                       const ValueType &type, mlir::Location at);

GenValue Generator::generateNode(const ast::BinaryExpr &binary,
                                 const ast::Expr &expr) {
  ValueType type = typeOf(expr);
  if (type.kind == ValueType::Size)
    return GenValue::ofSize(*type.value);
  GenValue lhs = generate(binary.lhs), rhs = generate(binary.rhs);
  if (lhs.kind == GenValue::Invalid || rhs.kind == GenValue::Invalid ||
      type.kind != ValueType::Tensor)
    return {};
  mlir::Location at = loc(binary.range);
  if (binary.op == "@")
    return matmul(*this, lhs, rhs, type, at);
  ElementType result = resolveElement(type.element);
  llvm::StringRef op = binary.op;
  bool compares = op == "==" || op == "!=" || op == "<" || op == "<=" ||
                  op == ">" || op == ">=";
  ElementType in = result;
  if (compares)
    in = operandElement(lhs, rhs, typeOf(binary.lhs), typeOf(binary.rhs));
  if (lhs.kind == GenValue::Number && rhs.kind == GenValue::Number) {
    // Both literals: fold.
    GenValue value;
    value.kind = GenValue::Number;
    double a = lhs.number, b = rhs.number;
    value.number = op == "+"   ? a + b
                   : op == "-" ? a - b
                   : op == "*" ? a * b
                   : op == "/" ? a / b
                               : std::fmod(a, b);
    if (!compares)
      return value;
  }
  ElementType work = compares ? in : result;
  // Narrow floats are combined in f32 and rounded once, as PyTorch does.
  ElementType compute = isFloat(work) ? computeElement(work) : work;
  mlir::Value tensor = elementwise(
      {lhs, rhs}, {compute, compute}, type.dims, result, at,
      [&](mlir::OpBuilder &b, mlir::Location l,
          llvm::ArrayRef<mlir::Value> values) {
        mlir::Value value = combine(b, l, op, values[0], values[1]);
        return compares ? value : convertScalar(value, compute, result, l);
      });
  return GenValue::ofTensor(tensor, type.dims, result);
}

GenValue Generator::generateNode(const ast::UnaryExpr &unary,
                                 const ast::Expr &expr) {
  ValueType type = typeOf(expr);
  if (type.kind == ValueType::Size)
    return GenValue::ofSize(*type.value);
  GenValue operand = generate(unary.operand);
  if (operand.kind == GenValue::Invalid)
    return {};
  if (operand.kind == GenValue::Number) {
    operand.number = -operand.number;
    return operand;
  }
  mlir::Location at = loc(unary.range);
  ElementType element = resolveElement(type.element);
  ElementType compute = computeElement(element);
  bool negate = unary.op == "-";
  mlir::Value tensor = elementwise(
      {operand}, {compute}, type.dims, element, at,
      [&](mlir::OpBuilder &b, mlir::Location l,
          llvm::ArrayRef<mlir::Value> values) -> mlir::Value {
        mlir::Value x = values[0];
        if (!negate) {
          mlir::Value one =
              arith::ConstantOp::create(b, l, b.getIntegerAttr(x.getType(), 1));
          return arith::XOrIOp::create(b, l, x, one);
        }
        if (isFloat(compute))
          return convertScalar(arith::NegFOp::create(b, l, x), compute, element,
                               l);
        mlir::Value zero =
            arith::ConstantOp::create(b, l, b.getIntegerAttr(x.getType(), 0));
        return arith::SubIOp::create(b, l, zero, x);
      });
  return GenValue::ofTensor(tensor, type.dims, element);
}

static GenValue matmul(Generator &gen, const GenValue &a, const GenValue &b,
                       const ValueType &type, mlir::Location at) {
  // [..., M, K] @ [..., K, N]: loops over the result's axes, then K.
  mlir::OpBuilder &builder = gen.builder;
  ElementType result = gen.resolveElement(type.element);
  ElementType accumulate = isFloat(result) ? ElementType::F32 : result;
  unsigned rank = unsigned(type.dims.size());
  unsigned k = rank; // the reduction loop
  auto operandMap = [&](const GenValue &operand, bool left) {
    llvm::SmallVector<mlir::AffineExpr> exprs;
    unsigned batch = operand.rank() - 2;
    unsigned offset = (rank - 2) - batch;
    for (unsigned i = 0; i < batch; ++i) {
      if (isOne(operand.dims[i]) && !isOne(type.dims[offset + i]))
        exprs.push_back(builder.getAffineConstantExpr(0));
      else
        exprs.push_back(builder.getAffineDimExpr(offset + i));
    }
    if (left) {
      exprs.push_back(builder.getAffineDimExpr(rank - 2));
      exprs.push_back(builder.getAffineDimExpr(k));
    } else {
      exprs.push_back(builder.getAffineDimExpr(k));
      exprs.push_back(builder.getAffineDimExpr(rank - 1));
    }
    return mlir::AffineMap::get(rank + 1, 0, exprs, builder.getContext());
  };
  llvm::SmallVector<mlir::AffineExpr> outExprs;
  for (unsigned i = 0; i < rank; ++i)
    outExprs.push_back(builder.getAffineDimExpr(i));
  llvm::SmallVector<mlir::AffineMap> maps = {
      operandMap(a, true), operandMap(b, false),
      mlir::AffineMap::get(rank + 1, 0, outExprs, builder.getContext())};
  llvm::SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators.push_back(IteratorType::reduction);
  mlir::Value init = gen.filledTensor(type.dims, accumulate, 0.0, at);
  mlir::Value product =
      linalg::GenericOp::create(
          builder, at, mlir::TypeRange{init.getType()},
          mlir::ValueRange{a.tensor, b.tensor}, mlir::ValueRange{init}, maps,
          iterators,
          [&](mlir::OpBuilder &nested, mlir::Location l,
              mlir::ValueRange args) {
            mlir::OpBuilder::InsertionGuard guard(builder);
            builder.setInsertionPoint(nested.getInsertionBlock(),
                                      nested.getInsertionPoint());
            mlir::Value x =
                gen.convertScalar(args[0], a.element, accumulate, l);
            mlir::Value y =
                gen.convertScalar(args[1], b.element, accumulate, l);
            mlir::Value sum =
                isFloat(accumulate)
                    ? arith::AddFOp::create(
                          builder, l, arith::MulFOp::create(builder, l, x, y),
                          args[2])
                          .getResult()
                    : arith::AddIOp::create(
                          builder, l, arith::MulIOp::create(builder, l, x, y),
                          args[2])
                          .getResult();
            linalg::YieldOp::create(builder, l, sum);
          })
          .getResult(0);
  GenValue accumulated = GenValue::ofTensor(product, type.dims, accumulate);
  if (accumulate == result)
    return accumulated;
  mlir::Value rounded = gen.elementwise(
      {accumulated}, {accumulate}, type.dims, result, at,
      [&](mlir::OpBuilder &, mlir::Location l,
          llvm::ArrayRef<mlir::Value> values) {
        return gen.convertScalar(values[0], accumulate, result, l);
      });
  return GenValue::ofTensor(rounded, type.dims, result);
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

std::optional<IndexPlan>
Generator::planIndex(const GenValue &base,
                     const std::vector<ast::Index> &indices,
                     llvm::SMRange range) {
  mlir::Location at = loc(range);
  IndexPlan plan;
  unsigned written = 0;
  for (const ast::Index &item : indices)
    written += item.kind != ast::Index::Ellipsis;
  // A bound: a size known before running, or an integer scalar read now.
  auto boundOf = [&](const ast::Expr &bound) -> std::optional<mlir::Value> {
    ValueType type = typeOf(bound);
    if ((type.kind == ValueType::Size || (type.isScalar() && type.value)) &&
        type.value && !isRuntimeSize(*type.value))
      return indexValue(*type.value, at);
    GenValue value = generate(bound);
    if (!value.isTensor() || value.rank() != 0 || isFloat(value.element)) {
      fail(ast::rangeOf(bound), "this index", "it is not an integer scalar");
      return std::nullopt;
    }
    mlir::Value scalar = tensor::ExtractOp::create(builder, at, value.tensor,
                                                   mlir::ValueRange{});
    return arith::IndexCastOp::create(builder, at, builder.getIndexType(),
                                      scalar)
        .getResult();
  };
  // The symbolic value of a bound, where the checker knows it.
  auto valueOf = [&](const ast::Expr &bound) -> std::optional<ShapeExpr> {
    ValueType type = typeOf(bound);
    if (type.value)
      return *type.value;
    return std::nullopt;
  };
  unsigned axis = 0;
  int firstGather = -1, lastGather = -1;
  bool adjacent = true;
  for (const ast::Index &item : indices) {
    if (item.kind == ast::Index::Ellipsis) {
      for (unsigned n = base.rank() - written; n > 0; --n, ++axis)
        plan.axes.push_back({IndexPlan::Axis::Range,
                             builder.getIndexAttr(0),
                             foldedIndex(*base.dims[axis].size, at),
                             {}});
      continue;
    }
    if (item.kind == ast::Index::Element) {
      ValueType type = typeOf(*item.lower);
      if (type.kind == ValueType::Tensor && type.rank() >= 1) {
        GenValue indicesValue = generate(*item.lower);
        if (!indicesValue.isTensor() || indicesValue.rank() != 1) {
          fail(item.range, "this index",
               "only one-dimensional index tensors are supported");
          return std::nullopt;
        }
        if (lastGather >= 0 && lastGather + 1 != int(axis))
          adjacent = false;
        if (firstGather < 0)
          firstGather = int(axis);
        lastGather = int(axis);
        plan.gathers = true;
        plan.axes.push_back(
            {IndexPlan::Axis::Gather, {}, {}, std::move(indicesValue)});
        ++axis;
        continue;
      }
      auto offset = boundOf(*item.lower);
      if (!offset)
        return std::nullopt;
      plan.axes.push_back(
          {IndexPlan::Axis::Point, *offset, builder.getIndexAttr(1), {}});
      ++axis;
      continue;
    }
    mlir::OpFoldResult offset = builder.getIndexAttr(0);
    std::optional<ShapeExpr> lower = ShapeExpr::constant(0);
    std::optional<ShapeExpr> upper = *base.dims[axis].size;
    if (item.lower) {
      auto value = boundOf(*item.lower);
      if (!value)
        return std::nullopt;
      offset = *value;
      lower = valueOf(*item.lower);
    }
    if (item.upper)
      upper = valueOf(*item.upper);
    // The length is the difference of the bounds' values (`pos:pos + 1` is
    // 1 whatever `pos` is), which the checker proved known.
    std::optional<ShapeExpr> length;
    if (lower && upper) {
      auto difference = ShapeExpr::subtract(*upper, *lower);
      if (difference)
        length = *difference;
      else
        llvm::consumeError(difference.takeError());
    }
    if (!length || isRuntimeSize(*length)) {
      fail(item.range, "this slice", "its length is known only at run time");
      return std::nullopt;
    }
    plan.axes.push_back(
        {IndexPlan::Axis::Range, offset, foldedIndex(*length, at), {}});
    ++axis;
  }
  for (; axis < base.rank(); ++axis)
    plan.axes.push_back({IndexPlan::Axis::Range,
                         builder.getIndexAttr(0),
                         foldedIndex(*base.dims[axis].size, at),
                         {}});
  if (plan.gathers) {
    // Position of the gathered axis among the value's axes.
    unsigned before = 0;
    for (int i = 0; i < firstGather; ++i)
      before += plan.axes[i].kind == IndexPlan::Axis::Range;
    plan.gatherPosition = adjacent ? before : 0;
  }
  return plan;
}

/// The region one gathered element addresses: offsets, sizes and strides
/// with each gathered axis at `element`'s index.
static void regionOf(Generator &gen, const IndexPlan &plan, mlir::Value element,
                     mlir::Location at,
                     llvm::SmallVectorImpl<mlir::OpFoldResult> &offsets,
                     llvm::SmallVectorImpl<mlir::OpFoldResult> &sizes,
                     llvm::SmallVectorImpl<mlir::OpFoldResult> &strides) {
  mlir::OpBuilder &builder = gen.builder;
  for (const IndexPlan::Axis &axis : plan.axes) {
    strides.push_back(builder.getIndexAttr(1));
    if (axis.kind != IndexPlan::Axis::Gather) {
      offsets.push_back(axis.offset);
      sizes.push_back(axis.kind == IndexPlan::Axis::Range
                          ? axis.size
                          : builder.getIndexAttr(1));
      continue;
    }
    mlir::Value index = tensor::ExtractOp::create(
        builder, at, axis.indices.tensor, mlir::ValueRange{element});
    offsets.push_back(
        arith::IndexCastOp::create(builder, at, builder.getIndexType(), index)
            .getResult());
    sizes.push_back(builder.getIndexAttr(1));
  }
}

/// The type of what one element of a gather addresses: the ranged axes.
static DimList rangedDims(const DimList &valueDims, const IndexPlan &plan) {
  DimList dims = valueDims;
  if (plan.gathers)
    dims.erase(dims.begin() + plan.gatherPosition);
  return dims;
}

/// Reassociation that folds each dropped unit axis into a kept neighbour.
static llvm::SmallVector<mlir::ReassociationIndices>
unitAxesGroups(llvm::ArrayRef<bool> dropped) {
  llvm::SmallVector<mlir::ReassociationIndices> groups;
  mlir::ReassociationIndices pending;
  for (size_t axis = 0; axis < dropped.size(); ++axis) {
    pending.push_back(int64_t(axis));
    if (!dropped[axis]) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return groups;
}

/// The region of `source` at offsets/sizes, with the `dropped` unit axes
/// removed. Slices keep every axis and a collapse removes the unit ones:
/// a rank-reducing slice is ambiguous when several axes have size 1, and
/// MLIR 22's folders can pick the wrong one.
static mlir::Value extractRegion(Generator &gen, mlir::Value source,
                                 llvm::ArrayRef<mlir::OpFoldResult> offsets,
                                 llvm::ArrayRef<mlir::OpFoldResult> sizes,
                                 llvm::ArrayRef<mlir::OpFoldResult> strides,
                                 llvm::ArrayRef<bool> dropped,
                                 mlir::RankedTensorType resultType,
                                 mlir::Location at) {
  auto sourceType = mlir::cast<mlir::RankedTensorType>(source.getType());
  llvm::SmallVector<int64_t> shape;
  for (mlir::OpFoldResult size : sizes) {
    auto constant = mlir::getConstantIntValue(size);
    shape.push_back(constant ? *constant : mlir::ShapedType::kDynamic);
  }
  auto fullType =
      mlir::RankedTensorType::get(shape, sourceType.getElementType());
  mlir::Value slice = tensor::ExtractSliceOp::create(
      gen.builder, at, fullType, source, offsets, sizes, strides);
  if (llvm::none_of(dropped, [](bool d) { return d; }))
    return slice;
  return tensor::CollapseShapeOp::create(gen.builder, at, resultType, slice,
                                         unitAxesGroups(dropped));
}

/// `value` (without the `dropped` unit axes) written into `destination`'s
/// region: the unit axes are put back by an expand first.
static mlir::Value insertRegion(Generator &gen, mlir::Value value,
                                mlir::Value destination,
                                llvm::ArrayRef<mlir::OpFoldResult> offsets,
                                llvm::ArrayRef<mlir::OpFoldResult> sizes,
                                llvm::ArrayRef<mlir::OpFoldResult> strides,
                                llvm::ArrayRef<bool> dropped,
                                mlir::Location at) {
  if (llvm::any_of(dropped, [](bool d) { return d; })) {
    auto valueType = mlir::cast<mlir::RankedTensorType>(value.getType());
    llvm::SmallVector<int64_t> shape;
    for (mlir::OpFoldResult size : sizes) {
      auto constant = mlir::getConstantIntValue(size);
      shape.push_back(constant ? *constant : mlir::ShapedType::kDynamic);
    }
    auto fullType =
        mlir::RankedTensorType::get(shape, valueType.getElementType());
    value = tensor::ExpandShapeOp::create(gen.builder, at, fullType, value,
                                          unitAxesGroups(dropped), sizes);
  }
  return tensor::InsertSliceOp::create(gen.builder, at, value, destination,
                                       offsets, sizes, strides);
}

/// The axes an index plan removes: points and gathers.
static llvm::SmallVector<bool> droppedAxes(const IndexPlan &plan) {
  llvm::SmallVector<bool> dropped;
  for (const IndexPlan::Axis &axis : plan.axes)
    dropped.push_back(axis.kind != IndexPlan::Axis::Range);
  return dropped;
}

/// Only `axis` of `rank` removed.
static llvm::SmallVector<bool> oneAxis(unsigned rank, unsigned axis) {
  llvm::SmallVector<bool> dropped(rank, false);
  dropped[axis] = true;
  return dropped;
}

GenValue Generator::generateNode(const ast::IndexExpr &index,
                                 const ast::Expr &expr) {
  ValueType type = typeOf(expr);
  GenValue base = generate(index.base);
  if (base.kind == GenValue::Invalid || type.kind != ValueType::Tensor)
    return {};
  if (!base.isTensor()) {
    fail(index.range, "this index", "only tensors are indexed");
    return {};
  }
  mlir::Location at = loc(index.range);
  auto plan = planIndex(base, index.indices, index.range);
  if (!plan)
    return {};
  ElementType element = resolveElement(type.element);
  if (!plan->gathers) {
    llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
    regionOf(*this, *plan, {}, at, offsets, sizes, strides);
    mlir::Value slice =
        extractRegion(*this, base.tensor, offsets, sizes, strides,
                      droppedAxes(*plan), tensorType(type.dims, element), at);
    return GenValue::ofTensor(slice, type.dims, element);
  }
  // A gather: one slice per index, inserted at its place in the result.
  DimList part = rangedDims(type.dims, *plan);
  mlir::RankedTensorType partType = tensorType(part, element);
  mlir::Value result = emptyTensor(type.dims, element, at);
  mlir::Value zero = arith::ConstantIndexOp::create(builder, at, 0);
  mlir::Value one = arith::ConstantIndexOp::create(builder, at, 1);
  mlir::Value count = indexValue(*type.dims[plan->gatherPosition].size, at);
  auto loop = mlir::scf::ForOp::create(
      builder, at, zero, count, one, mlir::ValueRange{result},
      [&](mlir::OpBuilder &nested, mlir::Location l, mlir::Value i,
          mlir::ValueRange carried) {
        mlir::OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
        llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
        regionOf(*this, *plan, i, l, offsets, sizes, strides);
        mlir::Value slice =
            extractRegion(*this, base.tensor, offsets, sizes, strides,
                          droppedAxes(*plan), partType, l);
        llvm::SmallVector<mlir::OpFoldResult> to, toSizes, toStrides;
        for (unsigned d = 0; d < type.rank(); ++d) {
          bool gathered = d == plan->gatherPosition;
          to.push_back(gathered ? mlir::OpFoldResult(i)
                                : builder.getIndexAttr(0));
          toSizes.push_back(gathered ? builder.getIndexAttr(1)
                                     : foldedIndex(*type.dims[d].size, l));
          toStrides.push_back(builder.getIndexAttr(1));
        }
        mlir::Value updated =
            insertRegion(*this, slice, carried[0], to, toSizes, toStrides,
                         oneAxis(type.rank(), plan->gatherPosition), l);
        mlir::scf::YieldOp::create(builder, l, updated);
      });
  return GenValue::ofTensor(loop.getResult(0), type.dims, element);
}

GenValue Generator::scatter(const GenValue &destination,
                            const std::vector<ast::Index> &indices,
                            const GenValue &value, llvm::SMRange range) {
  mlir::Location at = loc(range);
  auto plan = planIndex(destination, indices, range);
  if (!plan)
    return {};
  GenValue source = asTensor(value, destination.element, at);
  if (!source.isTensor())
    return {};
  if (source.element != destination.element) {
    fail(range, "this write", "the element types differ");
    return {};
  }
  if (!plan->gathers) {
    llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
    regionOf(*this, *plan, {}, at, offsets, sizes, strides);
    mlir::Value updated =
        insertRegion(*this, source.tensor, destination.tensor, offsets, sizes,
                     strides, droppedAxes(*plan), at);
    return GenValue::ofTensor(updated, destination.dims, destination.element);
  }
  // One region per index: the value's slice at that index goes there.
  DimList part = rangedDims(source.dims, *plan);
  mlir::RankedTensorType partType = tensorType(part, source.element);
  mlir::Value zero = arith::ConstantIndexOp::create(builder, at, 0);
  mlir::Value one = arith::ConstantIndexOp::create(builder, at, 1);
  mlir::Value count = indexValue(*source.dims[plan->gatherPosition].size, at);
  auto loop = mlir::scf::ForOp::create(
      builder, at, zero, count, one, mlir::ValueRange{destination.tensor},
      [&](mlir::OpBuilder &nested, mlir::Location l, mlir::Value i,
          mlir::ValueRange carried) {
        mlir::OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
        llvm::SmallVector<mlir::OpFoldResult> from, fromSizes, fromStrides;
        for (unsigned d = 0; d < source.rank(); ++d) {
          bool gathered = d == plan->gatherPosition;
          from.push_back(gathered ? mlir::OpFoldResult(i)
                                  : builder.getIndexAttr(0));
          fromSizes.push_back(gathered ? builder.getIndexAttr(1)
                                       : foldedIndex(*source.dims[d].size, l));
          fromStrides.push_back(builder.getIndexAttr(1));
        }
        mlir::Value slice = extractRegion(
            *this, source.tensor, from, fromSizes, fromStrides,
            oneAxis(source.rank(), plan->gatherPosition), partType, l);
        llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
        regionOf(*this, *plan, i, l, offsets, sizes, strides);
        mlir::Value updated =
            insertRegion(*this, slice, carried[0], offsets, sizes, strides,
                         droppedAxes(*plan), l);
        mlir::scf::YieldOp::create(builder, l, updated);
      });
  return GenValue::ofTensor(loop.getResult(0), destination.dims,
                            destination.element);
}

//===----------------------------------------------------------------------===//
// Built-in operations
//===----------------------------------------------------------------------===//

namespace {

/// Reads a built-in call's arguments by parameter name.
struct BuiltinArguments {
  Generator &gen;
  const CallResolution &resolution;

  bool has(const std::string &name) const {
    return resolution.builtinArguments.count(name) != 0;
  }
  const ast::Expr &expr(const std::string &name) const {
    return *resolution.builtinArguments.at(name);
  }
  GenValue value(const std::string &name) const {
    return gen.generate(expr(name));
  }
  /// An axis argument, made non-negative; `fallback` when absent.
  unsigned axis(const std::string &name, unsigned rank,
                int64_t fallback = -1) const {
    int64_t axis = fallback;
    if (has(name)) {
      ValueType type = gen.typeOf(expr(name));
      if (type.value)
        if (auto value = constantOf(*type.value))
          axis = *value;
    }
    if (axis < 0)
      axis += rank;
    return unsigned(axis);
  }
  bool flag(const std::string &name) const {
    return has(name) && value(name).number != 0;
  }
  DimList sizes(const std::string &name) const {
    return gen.typeOf(expr(name)).dims;
  }
};

} // namespace

/// The scalar function of a unary float built-in.
static mlir::Value unaryMath(mlir::OpBuilder &b, mlir::Location l, BuiltinId id,
                             mlir::Value x) {
  mlir::Type type = x.getType();
  auto constant = [&](double value) {
    return arith::ConstantOp::create(b, l, b.getFloatAttr(type, value));
  };
  auto sigmoid = [&](mlir::Value u) -> mlir::Value {
    mlir::Value e =
        mlir::math::ExpOp::create(b, l, arith::NegFOp::create(b, l, u));
    return arith::DivFOp::create(b, l, constant(1.0),
                                 arith::AddFOp::create(b, l, constant(1.0), e));
  };
  switch (id) {
  case BuiltinId::Exp:
    return mlir::math::ExpOp::create(b, l, x);
  case BuiltinId::Log:
    return mlir::math::LogOp::create(b, l, x);
  case BuiltinId::Sqrt:
    return mlir::math::SqrtOp::create(b, l, x);
  case BuiltinId::Rsqrt:
    return arith::DivFOp::create(b, l, constant(1.0),
                                 mlir::math::SqrtOp::create(b, l, x));
  case BuiltinId::Cos:
    return mlir::math::CosOp::create(b, l, x);
  case BuiltinId::Sin:
    return mlir::math::SinOp::create(b, l, x);
  case BuiltinId::Sigmoid:
    return sigmoid(x);
  case BuiltinId::Silu:
    return arith::MulFOp::create(b, l, x, sigmoid(x));
  case BuiltinId::Softplus: {
    // softplus(u) = max(u, 0) + log(1 + exp(-|u|)), without overflow.
    mlir::Value positive = arith::MaximumFOp::create(b, l, x, constant(0.0));
    mlir::Value negativeAbs =
        arith::NegFOp::create(b, l, mlir::math::AbsFOp::create(b, l, x));
    mlir::Value tail = mlir::math::Log1pOp::create(
        b, l, mlir::math::ExpOp::create(b, l, negativeAbs));
    return arith::AddFOp::create(b, l, positive, tail);
  }
  default:
    llvm_unreachable("not a unary float built-in");
  }
}

/// The same function of a number known at compile time.
static double foldUnary(BuiltinId id, double x) {
  switch (id) {
  case BuiltinId::Exp:
    return std::exp(x);
  case BuiltinId::Log:
    return std::log(x);
  case BuiltinId::Sqrt:
    return std::sqrt(x);
  case BuiltinId::Rsqrt:
    return 1.0 / std::sqrt(x);
  case BuiltinId::Cos:
    return std::cos(x);
  case BuiltinId::Sin:
    return std::sin(x);
  case BuiltinId::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case BuiltinId::Silu:
    return x / (1.0 + std::exp(-x));
  case BuiltinId::Softplus:
    return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  default:
    llvm_unreachable("not a unary float built-in");
  }
}

/// An i32 tensor `[rows]` from an offset or length argument: a tensor of
/// that shape, or a scalar broadcast to it.
static GenValue rowVector(Generator &gen, const GenValue &value,
                          const ValueDim &rows, mlir::Location at) {
  if (value.isTensor() && value.rank() == 1 &&
      value.element == ElementType::I32)
    return value;
  DimList dims = {rows};
  mlir::Value tensor =
      gen.elementwise({value}, {ElementType::I32}, dims, ElementType::I32, at,
                      [](mlir::OpBuilder &, mlir::Location,
                         llvm::ArrayRef<mlir::Value> v) { return v[0]; });
  return GenValue::ofTensor(tensor, dims, ElementType::I32);
}

GenValue Generator::builtin(const CallResolution &resolution,
                            const ast::CallExpr &call, const ast::Expr &expr) {
  BuiltinId id = *resolution.builtin;
  std::string name = builtinSpelling(id).str();
  BuiltinArguments args{*this, resolution};
  mlir::Location at = loc(call.range);
  ValueType type = typeOf(expr);
  if (type.isInvalid())
    return {};

  switch (id) {
#define LINNET_UNARY_FLOAT_BUILTIN(Id, Spelling) case BuiltinId::Id:
#include "linnet/Sema/Builtins.def"
    {
      GenValue x = args.value("x");
      if (x.kind == GenValue::Number) {
        x.number = foldUnary(id, x.number);
        return x;
      }
      x = asTensor(x, ElementType::F32, at);
      ElementType element = resolveElement(type.element);
      ElementType compute = computeElement(element);
      mlir::Value tensor =
          elementwise({x}, {compute}, type.dims, element, at,
                      [&](mlir::OpBuilder &b, mlir::Location l,
                          llvm::ArrayRef<mlir::Value> values) {
                        return convertScalar(unaryMath(b, l, id, values[0]),
                                             compute, element, l);
                      });
      return GenValue::ofTensor(tensor, type.dims, element);
    }

  case BuiltinId::Cast: {
    GenValue x = args.value("x");
    ElementType element = resolveElement(type.element);
    if (!x.isTensor())
      return asTensor(x, element, at);
    mlir::Value tensor =
        elementwise({x}, {x.element}, type.dims, element, at,
                    [&](mlir::OpBuilder &, mlir::Location l,
                        llvm::ArrayRef<mlir::Value> values) {
                      return convertScalar(values[0], x.element, element, l);
                    });
    return GenValue::ofTensor(tensor, type.dims, element);
  }
  case BuiltinId::Where: {
    GenValue condition = args.value("condition");
    GenValue a = args.value("a"), b = args.value("b");
    ElementType element = resolveElement(type.element);
    mlir::Value tensor =
        elementwise({condition, a, b}, {ElementType::I1, element, element},
                    type.dims, element, at,
                    [&](mlir::OpBuilder &builder, mlir::Location l,
                        llvm::ArrayRef<mlir::Value> values) {
                      return arith::SelectOp::create(builder, l, values[0],
                                                     values[1], values[2]);
                    });
    return GenValue::ofTensor(tensor, type.dims, element);
  }
  case BuiltinId::Sum:
  case BuiltinId::Mean:
  case BuiltinId::Max: {
    GenValue x = args.value("x");
    if (!x.isTensor())
      return {};
    unsigned axis = args.axis("axis", x.rank());
    bool keep = args.flag("keepdim");
    ElementType element = resolveElement(type.element);
    ElementType accumulate = isFloat(element) ? ElementType::F32 : element;
    mlir::Value reduced =
        reduceAxis(*this, x, axis, keep, accumulate, id == BuiltinId::Max, at);
    GenValue partial = GenValue::ofTensor(reduced, type.dims, accumulate);
    GenValue count = GenValue::ofSize(*x.dims[axis].size);
    bool mean = id == BuiltinId::Mean;
    mlir::Value tensor = elementwise(
        {partial, count}, {accumulate, accumulate}, type.dims, element, at,
        [&](mlir::OpBuilder &b, mlir::Location l,
            llvm::ArrayRef<mlir::Value> values) {
          mlir::Value value = values[0];
          if (mean)
            value = arith::DivFOp::create(b, l, value, values[1]);
          return convertScalar(value, accumulate, element, l);
        });
    return GenValue::ofTensor(tensor, type.dims, element);
  }
  case BuiltinId::Softmax: {
    GenValue x = args.value("x");
    if (!x.isTensor())
      return {};
    unsigned axis = args.axis("axis", x.rank());
    ElementType element = resolveElement(type.element);
    const ElementType f32 = ElementType::F32;
    DimList kept = x.dims;
    kept[axis] = ValueDim::of(ShapeExpr::constant(1));
    GenValue maximum = GenValue::ofTensor(
        reduceAxis(*this, x, axis, true, f32, true, at), kept, f32);
    GenValue exponent = GenValue::ofTensor(
        elementwise({x, maximum}, {f32, f32}, x.dims, f32, at,
                    [&](mlir::OpBuilder &b, mlir::Location l,
                        llvm::ArrayRef<mlir::Value> v) -> mlir::Value {
                      return mlir::math::ExpOp::create(
                          b, l, arith::SubFOp::create(b, l, v[0], v[1]));
                    }),
        x.dims, f32);
    GenValue total = GenValue::ofTensor(
        reduceAxis(*this, exponent, axis, true, f32, false, at), kept, f32);
    mlir::Value tensor = elementwise(
        {exponent, total}, {f32, f32}, x.dims, element, at,
        [&](mlir::OpBuilder &b, mlir::Location l,
            llvm::ArrayRef<mlir::Value> v) {
          return convertScalar(arith::DivFOp::create(b, l, v[0], v[1]), f32,
                               element, l);
        });
    return GenValue::ofTensor(tensor, x.dims, element);
  }
  case BuiltinId::Matmul:
    return matmul(*this, args.value("a"), args.value("b"), type, at);
  case BuiltinId::Reshape: {
    GenValue x = args.value("x");
    if (!x.isTensor())
      return {};
    return GenValue::ofTensor(reshape(x, type.dims, at), type.dims, x.element);
  }
  case BuiltinId::Transpose: {
    GenValue x = args.value("x");
    if (!x.isTensor())
      return {};
    llvm::SmallVector<int64_t> permutation;
    for (const ValueDim &dim : args.sizes("permutation"))
      permutation.push_back(constantOf(*dim.size).value_or(0));
    return GenValue::ofTensor(transpose(x, permutation, at), type.dims,
                              x.element);
  }
  case BuiltinId::Concat: {
    GenValue list = args.value("tensors");
    ElementType element = resolveElement(type.element);
    unsigned axis = args.axis("axis", type.rank());
    mlir::Value result = emptyTensor(type.dims, element, at);
    ShapeExpr offset = ShapeExpr::constant(0);
    for (const GenValue &part : list.elements) {
      if (!part.isTensor())
        return {};
      llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
      for (unsigned i = 0; i < part.rank(); ++i) {
        offsets.push_back(i == axis ? foldedIndex(offset, at)
                                    : builder.getIndexAttr(0));
        sizes.push_back(foldedIndex(*part.dims[i].size, at));
        strides.push_back(builder.getIndexAttr(1));
      }
      result = tensor::InsertSliceOp::create(builder, at, part.tensor, result,
                                             offsets, sizes, strides);
      auto next = ShapeExpr::add(offset, *part.dims[axis].size);
      if (!next) {
        llvm::consumeError(next.takeError());
        return {};
      }
      offset = *next;
    }
    return GenValue::ofTensor(result, type.dims, element);
  }
  case BuiltinId::Split: {
    GenValue x = args.value("x");
    if (!x.isTensor())
      return {};
    unsigned axis = args.axis("axis", x.rank());
    std::vector<GenValue> parts;
    ShapeExpr offset = ShapeExpr::constant(0);
    for (const ValueType &partType : type.elements) {
      llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
      for (unsigned i = 0; i < x.rank(); ++i) {
        offsets.push_back(i == axis ? foldedIndex(offset, at)
                                    : builder.getIndexAttr(0));
        sizes.push_back(foldedIndex(*partType.dims[i].size, at));
        strides.push_back(builder.getIndexAttr(1));
      }
      mlir::Value part = tensor::ExtractSliceOp::create(
          builder, at, tensorType(partType.dims, x.element), x.tensor, offsets,
          sizes, strides);
      parts.push_back(GenValue::ofTensor(part, partType.dims, x.element));
      auto next = ShapeExpr::add(offset, *partType.dims[axis].size);
      if (!next) {
        llvm::consumeError(next.takeError());
        return {};
      }
      offset = *next;
    }
    return GenValue::tuple(std::move(parts));
  }
  case BuiltinId::RepeatInterleave: {
    GenValue x = args.value("x");
    if (!x.isTensor())
      return {};
    unsigned axis = args.axis("axis", x.rank());
    ValueType repeatsType = typeOf(args.expr("repeats"));
    auto repeats =
        repeatsType.value ? constantOf(*repeatsType.value) : std::nullopt;
    if (!repeats || *repeats <= 0) {
      fail(call.range, name, "the repeat count must be a bound size");
      return {};
    }
    // Output axis i reads input axis i / repeats.
    unsigned rank = x.rank();
    llvm::SmallVector<mlir::AffineExpr> exprs;
    for (unsigned i = 0; i < rank; ++i)
      exprs.push_back(i == axis ? builder.getAffineDimExpr(i).floorDiv(*repeats)
                                : builder.getAffineDimExpr(i));
    mlir::Value init = emptyTensor(type.dims, x.element, at);
    llvm::SmallVector<mlir::AffineMap> maps = {
        mlir::AffineMap::get(rank, 0, exprs, &context),
        builder.getMultiDimIdentityMap(rank)};
    llvm::SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    mlir::Value tensor =
        linalg::GenericOp::create(
            builder, at, mlir::TypeRange{init.getType()},
            mlir::ValueRange{x.tensor}, mlir::ValueRange{init}, maps, iterators,
            [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange v) {
              linalg::YieldOp::create(b, l, v[0]);
            })
            .getResult(0);
    return GenValue::ofTensor(tensor, type.dims, x.element);
  }
  case BuiltinId::Zeros: {
    ElementType element = resolveElement(type.element);
    return GenValue::ofTensor(filledTensor(type.dims, element, 0.0, at),
                              type.dims, element);
  }
  case BuiltinId::Arange: {
    ElementType element = resolveElement(type.element);
    mlir::Value init = emptyTensor(type.dims, element, at);
    mlir::Type target = mlirElement(element);
    mlir::Value tensor =
        linalg::GenericOp::create(
            builder, at, mlir::TypeRange{init.getType()}, mlir::ValueRange{},
            mlir::ValueRange{init}, {builder.getMultiDimIdentityMap(1)},
            {IteratorType::parallel},
            [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange) {
              mlir::Value index = linalg::IndexOp::create(b, l, 0);
              linalg::YieldOp::create(
                  b, l,
                  arith::IndexCastOp::create(b, l, target, index).getResult());
            })
            .getResult(0);
    return GenValue::ofTensor(tensor, type.dims, element);
  }
  case BuiltinId::Take: {
    // out[i..., r...] = table[clamp(ids[i...]), r...]
    GenValue table = args.value("table");
    GenValue ids = args.value("ids");
    if (!table.isTensor() || !ids.isTensor())
      return {};
    ElementType element = table.element;
    unsigned rank = type.rank(), idRank = ids.rank();
    llvm::SmallVector<mlir::AffineExpr> idExprs;
    for (unsigned i = 0; i < idRank; ++i)
      idExprs.push_back(builder.getAffineDimExpr(i));
    mlir::Value init = emptyTensor(type.dims, element, at);
    llvm::SmallVector<mlir::AffineMap> maps = {
        mlir::AffineMap::get(rank, 0, idExprs, &context),
        builder.getMultiDimIdentityMap(rank)};
    llvm::SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    mlir::Value rows = indexValue(*table.dims[0].size, at);
    checkIndices(ids.tensor, rows, "take", at);
    mlir::Value tensor =
        linalg::GenericOp::create(
            builder, at, mlir::TypeRange{init.getType()},
            mlir::ValueRange{ids.tensor}, mlir::ValueRange{init}, maps,
            iterators,
            [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange v) {
              // Clamped, so every read is in bounds whatever arrives; an id
              // outside is reported by checkIndices' call.
              mlir::Value id =
                  arith::IndexCastOp::create(b, l, b.getIndexType(), v[0]);
              mlir::Value zero = arith::ConstantIndexOp::create(b, l, 0);
              mlir::Value last = arith::SubIOp::create(
                  b, l, rows, arith::ConstantIndexOp::create(b, l, 1));
              id = arith::MaxSIOp::create(
                  b, l, zero, arith::MinSIOp::create(b, l, id, last));
              llvm::SmallVector<mlir::Value> indices = {id};
              for (unsigned i = idRank; i < rank; ++i)
                indices.push_back(linalg::IndexOp::create(b, l, i));
              mlir::Value row =
                  tensor::ExtractOp::create(b, l, table.tensor, indices);
              linalg::YieldOp::create(b, l, row);
            })
            .getResult(0);
    return GenValue::ofTensor(tensor, type.dims, element);
  }
  case BuiltinId::Attention: {
    GenValue q = args.value("q"), k = args.value("k"), v = args.value("v");
    if (!q.isTensor() || !k.isTensor() || !v.isTensor())
      return {};
    GenValue offset = rowVector(*this, args.value("offset"), q.dims[0], at);
    mlir::Value scale = scalarOf(args.value("scale"), ElementType::F32, at);
    mlir::Value lengths;
    if (args.has("lengths"))
      lengths = rowVector(*this, args.value("lengths"), q.dims[0], at).tensor;
    ElementType element = resolveElement(type.element);
    mlir::Value tensor =
        AttentionOp::create(builder, at, tensorType(type.dims, element),
                            q.tensor, k.tensor, v.tensor, offset.tensor, scale,
                            lengths, /*start=*/mlir::Value(),
                            emptyTensor(type.dims, element, at))
            .getOutput();
    return GenValue::ofTensor(tensor, type.dims, element);
  }
  case BuiltinId::DeltaRule: {
    GenValue q = args.value("q"), k = args.value("k"), v = args.value("v");
    GenValue beta = args.value("beta"), g = args.value("g");
    GenValue initial = args.value("initial");
    for (const GenValue *value : {&q, &k, &v, &beta, &g, &initial})
      if (!value->isTensor())
        return {};
    GenValue lengths =
        args.has("lengths")
            ? rowVector(*this, args.value("lengths"), q.dims[0], at)
            : rowVector(*this, GenValue::ofSize(*q.dims[1].size), q.dims[0],
                        at);
    const ValueType &outType = type.elements[0], &stateType = type.elements[1];
    // The final state's destination is the initial state: updated in place.
    auto op = DeltaRuleOp::create(
        builder, at,
        mlir::TypeRange{tensorType(outType.dims, ElementType::F32),
                        tensorType(stateType.dims, ElementType::F32)},
        q.tensor, k.tensor, v.tensor, beta.tensor, g.tensor, lengths.tensor,
        emptyTensor(outType.dims, ElementType::F32, at), initial.tensor);
    return GenValue::tuple(
        {GenValue::ofTensor(op.getOutput(), outType.dims, ElementType::F32),
         GenValue::ofTensor(op.getFinalState(), stateType.dims,
                            ElementType::F32)});
  }
  case BuiltinId::CausalConv: {
    GenValue x = args.value("x"), taps = args.value("taps");
    GenValue history = args.value("history");
    if (!x.isTensor() || !taps.isTensor() || !history.isTensor())
      return {};
    GenValue lengths =
        args.has("lengths")
            ? rowVector(*this, args.value("lengths"), x.dims[0], at)
            : rowVector(*this, GenValue::ofSize(*x.dims[1].size), x.dims[0],
                        at);
    const ValueType &outType = type.elements[0],
                    &historyType = type.elements[1];
    auto op =
        CausalConvOp::create(builder, at, tensorType(outType.dims, x.element),
                             tensorType(historyType.dims, x.element), x.tensor,
                             taps.tensor, history.tensor, lengths.tensor);
    return GenValue::tuple(
        {GenValue::ofTensor(op.getOutput(), outType.dims, x.element),
         GenValue::ofTensor(op.getNewHistory(), historyType.dims, x.element)});
  }
  case BuiltinId::ExpertMatmul: {
    GenValue x = args.value("x"), weights = args.value("weights");
    GenValue experts = args.value("experts");
    if (!x.isTensor() || !weights.isTensor() || !experts.isTensor())
      return {};
    if (experts.element != ElementType::I32)
      experts = GenValue::ofTensor(
          elementwise({experts}, {experts.element}, experts.dims,
                      ElementType::I32, at,
                      [&](mlir::OpBuilder &, mlir::Location l,
                          llvm::ArrayRef<mlir::Value> values) {
                        return convertScalar(values[0], experts.element,
                                             ElementType::I32, l);
                      }),
          experts.dims, ElementType::I32);
    mlir::Value tensor =
        ExpertMatmulOp::create(builder, at, tensorType(type.dims, x.element),
                               x.tensor, weights.tensor, experts.tensor);
    return GenValue::ofTensor(tensor, type.dims, x.element);
  }
  case BuiltinId::TopK:
  case BuiltinId::Rank: {
    GenValue x = args.value("x");
    if (!x.isTensor())
      return {};
    unsigned axis = args.axis("axis", x.rank());
    if (axis + 1 != x.rank()) {
      fail(call.range, name, "only the last axis is supported");
      return {};
    }
    if (id == BuiltinId::Rank) {
      mlir::Value tensor = RankOp::create(
          builder, at, tensorType(type.dims, ElementType::I32), x.tensor);
      return GenValue::ofTensor(tensor, type.dims, ElementType::I32);
    }
    const ValueType &valuesType = type.elements[0];
    auto count = constantOf(*valuesType.dims[axis].size);
    if (!count) {
      fail(call.range, name, "`k` must be a bound size");
      return {};
    }
    auto op = TopKOp::create(
        builder, at, tensorType(valuesType.dims, x.element),
        tensorType(valuesType.dims, ElementType::I32), x.tensor, *count);
    return GenValue::tuple(
        {GenValue::ofTensor(op.getValues(), valuesType.dims, x.element),
         GenValue::ofTensor(op.getIndices(), valuesType.dims,
                            ElementType::I32)});
  }
  }
  llvm_unreachable("every built-in has a lowering");
}

namespace {

/// `file:line:col` of the op, then of each call it was inlined through.
std::string sourcePlace(mlir::Location loc) {
  if (auto callSite = mlir::dyn_cast<mlir::CallSiteLoc>(loc))
    return sourcePlace(callSite.getCallee()) + ", called from " +
           sourcePlace(callSite.getCaller());
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    return fused.getLocations().empty()
               ? std::string("an unknown place")
               : sourcePlace(fused.getLocations().front());
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) +
            ":" + std::to_string(file.getColumn()));
  return "an unknown place";
}

} // namespace

void Generator::checkIndices(mlir::Value ids, mlir::Value bound,
                             llvm::StringRef op, mlir::Location at) {
  mlir::Type i64 = builder.getI64Type();
  auto idsType = mlir::cast<mlir::RankedTensorType>(ids.getType());
  unsigned rank = unsigned(idsType.getRank());
  // The smallest and the largest id, in one pass, into tensor<1xi64>: a
  // leading parallel loop of one, since the CPU target's tiling of a
  // reduction over every dimension loses the accumulator between tiles.
  auto single = mlir::RankedTensorType::get({1}, i64);
  auto start = [&](int64_t value) {
    mlir::Value init =
        tensor::EmptyOp::create(builder, at, single.getShape(), i64);
    mlir::Value constant =
        arith::ConstantIntOp::create(builder, at, i64, value);
    return linalg::FillOp::create(builder, at, mlir::ValueRange{constant},
                                  mlir::ValueRange{init})
        .getResult(0);
  };
  llvm::SmallVector<mlir::AffineExpr> idDims;
  for (unsigned i = 0; i < rank; ++i)
    idDims.push_back(builder.getAffineDimExpr(i + 1));
  mlir::AffineMap toSingle = mlir::AffineMap::get(
      rank + 1, 0, {builder.getAffineDimExpr(0)}, &context);
  llvm::SmallVector<mlir::AffineMap> maps = {
      mlir::AffineMap::get(rank + 1, 0, idDims, &context), toSingle, toSingle};
  llvm::SmallVector<IteratorType> iterators(rank + 1, IteratorType::reduction);
  iterators[0] = IteratorType::parallel;
  auto extremes = linalg::GenericOp::create(
      builder, at, mlir::TypeRange{single, single}, mlir::ValueRange{ids},
      mlir::ValueRange{start(INT64_MAX), start(INT64_MIN)}, maps, iterators,
      [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange v) {
        mlir::Value id = arith::ExtSIOp::create(b, l, i64, v[0]);
        linalg::YieldOp::create(
            b, l,
            mlir::ValueRange{arith::MinSIOp::create(b, l, id, v[1]),
                             arith::MaxSIOp::create(b, l, id, v[2])});
      });
  mlir::Value first = arith::ConstantIndexOp::create(builder, at, 0);
  mlir::Value smallest = tensor::ExtractOp::create(
      builder, at, extremes.getResult(0), mlir::ValueRange{first});
  mlir::Value largest = tensor::ExtractOp::create(
      builder, at, extremes.getResult(1), mlir::ValueRange{first});
  mlir::Value limit = arith::IndexCastOp::create(builder, at, i64, bound);
  mlir::Value zero = arith::ConstantIntOp::create(builder, at, i64, 0);
  mlir::Value below = arith::CmpIOp::create(
      builder, at, arith::CmpIPredicate::slt, smallest, zero);
  mlir::Value above = arith::CmpIOp::create(
      builder, at, arith::CmpIPredicate::sge, largest, limit);
  mlir::Value outside = arith::OrIOp::create(builder, at, below, above);

  // The runtime function, declared once, and the op's place as a string.
  auto pointer = mlir::LLVM::LLVMPointerType::get(&context);
  llvm::StringRef callee = "linnet_index_out_of_range";
  mlir::OpBuilder moduleBuilder =
      mlir::OpBuilder::atBlockBegin(module.getBody());
  if (!module.lookupSymbol(callee)) {
    auto declaration = mlir::func::FuncOp::create(
        moduleBuilder, at, callee,
        builder.getFunctionType({pointer, i64, i64}, {}));
    declaration.setPrivate();
  }
  std::string place = "`" + op.str() + "` at " + sourcePlace(at);
  std::string symbol = "linnet_index_site_" + std::to_string(indexSites++);
  std::string text = place;
  text.push_back('\0');
  auto stringType = mlir::LLVM::LLVMArrayType::get(
      mlir::IntegerType::get(&context, 8), unsigned(text.size()));
  mlir::LLVM::GlobalOp::create(moduleBuilder, at, stringType,
                               /*isConstant=*/true,
                               mlir::LLVM::Linkage::Internal, symbol,
                               builder.getStringAttr(text));

  mlir::scf::IfOp::create(
      builder, at, outside, [&](mlir::OpBuilder &b, mlir::Location l) {
        mlir::Value index =
            arith::SelectOp::create(b, l, below, smallest, largest);
        mlir::Value site =
            mlir::LLVM::AddressOfOp::create(b, l, pointer, symbol);
        mlir::func::CallOp::create(b, l, callee, mlir::TypeRange{},
                                   mlir::ValueRange{site, index, limit});
        mlir::scf::YieldOp::create(b, l);
      });
}
