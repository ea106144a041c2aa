//===- ShapeExpr.cpp - Symbolic sizes as polynomials ----------------------===//
//
// Exact rational arithmetic and polynomial normal forms for tensor sizes.
// Every intermediate value is computed in 128 bits and checked before it is
// narrowed back to 64, so a size that overflows is reported rather than
// silently wrapped into a different, plausible-looking shape.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/ShapeExpr.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <utility>

using namespace linnet;

namespace {

using Wide = __int128;
using UWide = unsigned __int128;

UWide magnitude(Wide value) {
  return value < 0 ? -static_cast<UWide>(value) : static_cast<UWide>(value);
}

std::string toString(UWide value) {
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  return std::string(digits.rbegin(), digits.rend());
}

bool termLess(const ShapeExpr::Term &lhs, const ShapeExpr::Term &rhs) {
  if (lhs.monomial.size() != rhs.monomial.size())
    return lhs.monomial.size() < rhs.monomial.size();
  return lhs.monomial < rhs.monomial;
}

/// Folds adjacent terms with equal monomials (as left by sorting) into one
/// and drops those whose coefficients cancel. Returns false on overflow.
bool mergeLikeTerms(std::vector<ShapeExpr::Term> &terms) {
  std::vector<ShapeExpr::Term> merged;
  for (ShapeExpr::Term &term : terms) {
    if (!merged.empty() && merged.back().monomial == term.monomial) {
      std::optional<Rational> sum =
          merged.back().coefficient.add(term.coefficient);
      if (!sum)
        return false;
      merged.back().coefficient = *sum;
    } else {
      merged.push_back(std::move(term));
    }
  }
  merged.erase(std::remove_if(merged.begin(), merged.end(),
                              [](const ShapeExpr::Term &term) {
                                return term.coefficient.isZero();
                              }),
               merged.end());
  terms = std::move(merged);
  return true;
}

llvm::Error makeShapeError(ShapeError kind) {
  return llvm::make_error<ShapeErrorInfo>(kind);
}

/// Bounds on the size of a polynomial, so that no shape expression can make
/// the algebra slow: `H * H * ...` or a product of long sums grows without
/// end otherwise. A monomial of degree above 64 exceeds 2^64 for any sizes
/// of 2 or more, so it is reported as an overflow; a polynomial of more
/// terms than any real shape has is reported the same way.
constexpr size_t kMaxDegree = 64;
constexpr size_t kMaxTerms = 1024;

} // namespace

//===----------------------------------------------------------------------===//
// ShapeExpr
//===----------------------------------------------------------------------===//

ShapeExpr ShapeExpr::constant(Rational value) {
  ShapeExpr result;
  if (!value.isZero())
    result.terms.push_back({value, {}});
  return result;
}

ShapeExpr ShapeExpr::symbol(ShapeSymbol symbol) {
  ShapeExpr result;
  result.terms.push_back({Rational(1), {std::move(symbol)}});
  return result;
}

void ShapeExpr::normalize() {
  for (Term &term : terms)
    std::sort(term.monomial.begin(), term.monomial.end());
  std::sort(terms.begin(), terms.end(), termLess);
}

llvm::Expected<ShapeExpr> ShapeExpr::add(const ShapeExpr &lhs,
                                         const ShapeExpr &rhs) {
  // Both are in normal form, so a merge keeps the terms sorted.
  ShapeExpr result;
  result.terms.reserve(lhs.terms.size() + rhs.terms.size());
  std::merge(lhs.terms.begin(), lhs.terms.end(), rhs.terms.begin(),
             rhs.terms.end(), std::back_inserter(result.terms), termLess);
  if (!mergeLikeTerms(result.terms) || result.terms.size() > kMaxTerms)
    return makeShapeError(ShapeError::Overflow);
  return result;
}

llvm::Expected<ShapeExpr> ShapeExpr::subtract(const ShapeExpr &lhs,
                                              const ShapeExpr &rhs) {
  llvm::Expected<ShapeExpr> negated = negate(rhs);
  if (!negated)
    return negated.takeError();
  return add(lhs, *negated);
}

llvm::Expected<ShapeExpr> ShapeExpr::multiply(const ShapeExpr &lhs,
                                              const ShapeExpr &rhs) {
  ShapeExpr result;
  if (lhs.terms.size() * rhs.terms.size() > 16 * kMaxTerms)
    return makeShapeError(ShapeError::Overflow);
  result.terms.reserve(lhs.terms.size() * rhs.terms.size());
  for (const Term &left : lhs.terms) {
    for (const Term &right : rhs.terms) {
      std::optional<Rational> coefficient =
          left.coefficient.multiply(right.coefficient);
      if (!coefficient ||
          left.monomial.size() + right.monomial.size() > kMaxDegree)
        return makeShapeError(ShapeError::Overflow);
      Monomial monomial = left.monomial;
      monomial.insert(monomial.end(), right.monomial.begin(),
                      right.monomial.end());
      result.terms.push_back({*coefficient, std::move(monomial)});
    }
  }
  result.normalize();
  if (!mergeLikeTerms(result.terms) || result.terms.size() > kMaxTerms)
    return makeShapeError(ShapeError::Overflow);
  return result;
}

llvm::Expected<ShapeExpr> ShapeExpr::divide(const ShapeExpr &lhs,
                                            const ShapeExpr &rhs) {
  std::optional<Rational> divisor = rhs.constantValue();
  if (!divisor)
    return makeShapeError(ShapeError::NonConstantDivisor);
  if (divisor->isZero())
    return makeShapeError(ShapeError::DivisionByZero);
  // Dividing every coefficient by the same nonzero value keeps them nonzero
  // and leaves the monomials, hence the order, untouched.
  ShapeExpr result = lhs;
  for (Term &term : result.terms) {
    std::optional<Rational> quotient = term.coefficient.divide(*divisor);
    if (!quotient)
      return makeShapeError(ShapeError::Overflow);
    term.coefficient = *quotient;
  }
  return result;
}

llvm::Expected<ShapeExpr> ShapeExpr::negate(const ShapeExpr &value) {
  ShapeExpr result = value;
  for (Term &term : result.terms) {
    std::optional<Rational> negated = term.coefficient.negate();
    if (!negated)
      return makeShapeError(ShapeError::Overflow);
    term.coefficient = *negated;
  }
  return result;
}

llvm::Expected<ShapeExpr>
ShapeExpr::substitute(const std::map<std::string, ShapeExpr> &bindings) const {
  ShapeExpr sum;
  for (const Term &term : terms) {
    ShapeExpr product = constant(term.coefficient);
    for (const ShapeSymbol &factor : term.monomial) {
      auto binding = bindings.find(factor.name);
      llvm::Expected<ShapeExpr> next =
          multiply(product, binding == bindings.end() ? symbol(factor)
                                                      : binding->second);
      if (!next)
        return next.takeError();
      product = std::move(*next);
    }
    llvm::Expected<ShapeExpr> next = add(sum, product);
    if (!next)
      return next.takeError();
    sum = std::move(*next);
  }
  return sum;
}

std::optional<Rational> ShapeExpr::constantValue() const {
  if (terms.empty())
    return Rational(0);
  if (terms.size() == 1 && terms.front().monomial.empty())
    return terms.front().coefficient;
  return std::nullopt;
}

std::vector<ShapeSymbol> ShapeExpr::symbols() const {
  std::vector<ShapeSymbol> result;
  for (const Term &term : terms)
    result.insert(result.end(), term.monomial.begin(), term.monomial.end());
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

std::string ShapeExpr::str() const {
  if (terms.empty())
    return "0";
  std::string text;
  for (const Term &term : terms) {
    int64_t numerator = term.coefficient.numerator();
    int64_t denominator = term.coefficient.denominator();
    bool negative = numerator < 0;
    if (text.empty())
      text += negative ? "-" : "";
    else
      text += negative ? " - " : " + ";
    // Through 128 bits so that INT64_MIN prints its magnitude too.
    UWide absolute = magnitude(numerator);
    if (term.monomial.empty()) {
      text += toString(absolute);
    } else {
      if (absolute != 1)
        text += toString(absolute) + " * ";
      for (size_t i = 0, e = term.monomial.size(); i != e; ++i)
        text += (i == 0 ? "" : " * ") + term.monomial[i].name;
    }
    if (denominator != 1)
      text += " / " + std::to_string(denominator);
  }
  return text;
}

//===----------------------------------------------------------------------===//
// ShapeErrorInfo
//===----------------------------------------------------------------------===//

char ShapeErrorInfo::ID = 0;

void ShapeErrorInfo::log(llvm::raw_ostream &os) const {
  switch (kind) {
  case ShapeError::Overflow:
    os << "shape arithmetic overflows 64 bits";
    return;
  case ShapeError::DivisionByZero:
    os << "division by zero";
    return;
  case ShapeError::NonConstantDivisor:
    os << "division by a non-constant shape expression";
    return;
  }
}

std::error_code ShapeErrorInfo::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}
