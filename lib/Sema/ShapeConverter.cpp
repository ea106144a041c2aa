//===- ShapeConverter.cpp - Written shape expressions to normal form ------===//
//
// Every operand is converted even after an error, so one expression reports
// each of its unknown names, but no arithmetic is done on a failed operand.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/ShapeConverter.h"

#include "linnet/Sema/DeclChecker.h"

using namespace linnet;
namespace x3 = boost::spirit::x3;

std::optional<ShapeExpr> ShapeConverter::check(llvm::Expected<ShapeExpr> result,
                                               llvm::SMRange whole,
                                               llvm::SMRange divisor,
                                               DiagnosticEngine &diags) {
  if (result)
    return std::move(*result);
  std::optional<ShapeError> kind;
  llvm::handleAllErrors(result.takeError(), [&](const ShapeErrorInfo &info) {
    kind = info.getKind();
  });
  llvm::SMRange at = divisor.Start.isValid() ? divisor : whole;
  switch (kind.value_or(ShapeError::Overflow)) {
  case ShapeError::Overflow:
    diags.report(whole, diag::ShapeOverflow, sourceText(whole));
    break;
  case ShapeError::DivisionByZero:
    diags.report(at, diag::DivisionByZero, sourceText(whole));
    break;
  case ShapeError::NonConstantDivisor:
    diags.report(at, diag::NonConstantDivisor, sourceText(whole),
                 divisor.Start.isValid() ? sourceText(divisor)
                                         : "a size that is not a constant");
    break;
  }
  return std::nullopt;
}

std::optional<ShapeExpr>
ShapeConverter::sizeOfGeneric(const ast::Identifier &name,
                              const GenericDecl *generic,
                              DiagnosticEngine &diags) {
  if (!generic) {
    if (auto type = parseElementType(name.name))
      diags.report(name.range, diag::KindMismatch, name.name,
                   isFloatType(*type) ? "a float element type"
                                      : "an integer element type",
                   "a size");
    else
      diags.report(name.range, diag::UnknownGeneric, name.name);
    return std::nullopt;
  }
  if (generic->invalid)
    return std::nullopt; // its declaration was reported
  if (generic->kind != GenericKind::Dim) {
    diags.report(name.range, diag::KindMismatch, name.name,
                 "a `" + kindName(generic->kind).str() + "` generic", "a size");
    diags.report(generic->loc, diag::DeclaredHere, name.name);
    return std::nullopt;
  }
  return ShapeExpr::symbol(generic->symbol());
}

std::optional<ShapeExpr> ShapeConverter::factor(const ast::ShapeFactor &node,
                                                const ast::ShapeSum &whole) {
  if (auto *literal = boost::get<ast::IntegerLiteral>(&node)) {
    int64_t value;
    if (llvm::StringRef(literal->text).getAsInteger(10, value))
      return std::nullopt; // reported by the parser
    return ShapeExpr::constant(value);
  }
  if (auto *name = boost::get<ast::Identifier>(&node))
    return nameToSize(*name);
  if (auto *negation = boost::get<x3::forward_ast<ast::ShapeNegation>>(&node)) {
    auto operand = factor(negation->get().operand, whole);
    if (!operand)
      return std::nullopt;
    return check(ShapeExpr::negate(*operand), whole.range, {}, diags);
  }
  return convert(boost::get<x3::forward_ast<ast::ShapeSum>>(node).get());
}

std::optional<ShapeExpr> ShapeConverter::product(const ast::ShapeProduct &node,
                                                 const ast::ShapeSum &whole) {
  auto value = factor(node.first, whole);
  bool ok = value.has_value();
  for (const ast::ShapeProductTail &tail : node.rest) {
    auto operand = factor(tail.operand, whole);
    if (!ok || !operand) {
      ok = false;
      continue;
    }
    value = check(tail.op == '*' ? ShapeExpr::multiply(*value, *operand)
                                 : ShapeExpr::divide(*value, *operand),
                  whole.range, ast::rangeOf(tail.operand), diags);
    ok = value.has_value();
  }
  return ok ? value : std::nullopt;
}

std::optional<ShapeExpr> ShapeConverter::convert(const ast::ShapeSum &sum) {
  auto value = product(sum.first, sum);
  bool ok = value.has_value();
  for (const ast::ShapeSumTail &tail : sum.rest) {
    auto operand = product(tail.operand, sum);
    if (!ok || !operand) {
      ok = false;
      continue;
    }
    value = check(tail.op == '+' ? ShapeExpr::add(*value, *operand)
                                 : ShapeExpr::subtract(*value, *operand),
                  sum.range, {}, diags);
    ok = value.has_value();
  }
  return ok ? value : std::nullopt;
}
