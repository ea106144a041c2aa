//===- Rational.h - Exact rational numbers that report overflow --*- C++
//-*-===//
//
// Sizes are exact: `Groups = num_hidden_layers / 4` must be an integer, and
// a product that overflows 64 bits must be an error, never a wrapped,
// plausible-looking size. The shape algebra (Sema) and the config rules'
// expressions (FieldExpression) compute with this one number type.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_MODEL_RATIONAL_H
#define LINNET_MODEL_RATIONAL_H

#include <cstdint>
#include <optional>
#include <string>

namespace linnet {

/// An exact rational number with 64-bit numerator and positive denominator,
/// always reduced. Every operation reports overflow instead of wrapping.
class Rational {
public:
  Rational() = default;
  Rational(int64_t value) : num(value) {}

  /// Builds `numerator / denominator` reduced; fails on a zero denominator.
  static std::optional<Rational> get(int64_t numerator, int64_t denominator);

  int64_t numerator() const { return num; }
  int64_t denominator() const { return den; }
  bool isInteger() const { return den == 1; }
  bool isZero() const { return num == 0; }

  /// Each returns std::nullopt when the exact result does not fit in 64 bits
  /// (or, for divide, when `rhs` is zero).
  std::optional<Rational> add(const Rational &rhs) const;
  std::optional<Rational> multiply(const Rational &rhs) const;
  std::optional<Rational> divide(const Rational &rhs) const;
  std::optional<Rational> negate() const;

  bool operator==(const Rational &rhs) const {
    return num == rhs.num && den == rhs.den;
  }
  bool operator!=(const Rational &rhs) const { return !(*this == rhs); }
  bool operator<(const Rational &rhs) const;

  /// `7`, `-3`, `1/4`.
  std::string str() const;

private:
  int64_t num = 0;
  int64_t den = 1;
};

} // namespace linnet

#endif // LINNET_MODEL_RATIONAL_H
