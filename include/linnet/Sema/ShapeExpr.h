//===- ShapeExpr.h - Symbolic sizes as polynomials ----------------*- C++
//-*-===//
//
// Tensor sizes in Linnet are polynomials with rational coefficients over the
// Dim generics in scope (`2 * Heads * HeadDim`, `-1 + Width`, `HeadDim / 4`).
// Keeping them in a normal form makes equality a structural comparison and
// gives `linnet inspect` one canonical way to print every size.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_SHAPEEXPR_H
#define LINNET_SEMA_SHAPEEXPR_H

#include "linnet/Model/Rational.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

/// A Dim generic as it appears in a shape expression. `rank` orders symbols
/// for the canonical form: a block's generics in declaration order, then the
/// function's own generics after them.
struct ShapeSymbol {
  unsigned rank = 0;
  std::string name;

  bool operator==(const ShapeSymbol &rhs) const {
    return rank == rhs.rank && name == rhs.name;
  }
  bool operator!=(const ShapeSymbol &rhs) const { return !(*this == rhs); }
  bool operator<(const ShapeSymbol &rhs) const {
    return rank != rhs.rank ? rank < rhs.rank : name < rhs.name;
  }
};

/// Why a shape computation failed.
enum class ShapeError {
  Overflow,           ///< a coefficient or value does not fit in 64 bits
  DivisionByZero,     ///< a division by the constant zero
  NonConstantDivisor, ///< a division by an expression that is not a constant
};

/// A polynomial in normal form: terms sorted (degree first, then symbols by
/// rank), no zero coefficients, each monomial's symbols sorted by rank.
class ShapeExpr {
public:
  /// A product of symbols; a symbol appears once per power.
  using Monomial = std::vector<ShapeSymbol>;
  struct Term {
    Rational coefficient;
    Monomial monomial;
    bool operator==(const Term &rhs) const {
      return coefficient == rhs.coefficient && monomial == rhs.monomial;
    }
  };

  /// The zero polynomial.
  ShapeExpr() = default;
  static ShapeExpr constant(Rational value);
  static ShapeExpr symbol(ShapeSymbol symbol);

  /// Arithmetic in normal form. Errors: Overflow; for divide also
  /// DivisionByZero and NonConstantDivisor.
  static llvm::Expected<ShapeExpr> add(const ShapeExpr &lhs,
                                       const ShapeExpr &rhs);
  static llvm::Expected<ShapeExpr> subtract(const ShapeExpr &lhs,
                                            const ShapeExpr &rhs);
  static llvm::Expected<ShapeExpr> multiply(const ShapeExpr &lhs,
                                            const ShapeExpr &rhs);
  static llvm::Expected<ShapeExpr> divide(const ShapeExpr &lhs,
                                          const ShapeExpr &rhs);
  static llvm::Expected<ShapeExpr> negate(const ShapeExpr &value);

  /// Replaces symbols by expressions (symbols are looked up by name; those
  /// absent from `bindings` stay). Used both to instantiate a sub-block's
  /// generics with its parent's expressions and to bind sizes to integers.
  llvm::Expected<ShapeExpr>
  substitute(const std::map<std::string, ShapeExpr> &bindings) const;

  /// The value when the expression has no symbols.
  std::optional<Rational> constantValue() const;
  bool isConstant() const {
    return terms.empty() || constantValue().has_value();
  }

  /// The symbols that occur, each once, in canonical order.
  std::vector<ShapeSymbol> symbols() const;

  const std::vector<Term> &getTerms() const { return terms; }

  bool operator==(const ShapeExpr &rhs) const { return terms == rhs.terms; }
  bool operator!=(const ShapeExpr &rhs) const { return !(*this == rhs); }

  /// The canonical form of docs/language.md: `2 * Heads * HeadDim`,
  /// `-1 + Width`, `HeadDim / 4`, `0` for zero.
  std::string str() const;

private:
  std::vector<Term> terms;
  void normalize();
};

/// The llvm::Error payload of a failed shape computation.
class ShapeErrorInfo : public llvm::ErrorInfo<ShapeErrorInfo> {
public:
  static char ID;
  explicit ShapeErrorInfo(ShapeError kind) : kind(kind) {}
  ShapeError getKind() const { return kind; }
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  ShapeError kind;
};

} // namespace linnet

#endif // LINNET_SEMA_SHAPEEXPR_H
