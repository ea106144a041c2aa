//===- Rational.cpp - Exact rational numbers that report overflow --------===//
//
// Every intermediate value is computed in 128 bits and checked before it is
// narrowed back to 64.
//
//===----------------------------------------------------------------------===//

#include "linnet/Model/Rational.h"

#include <limits>
#include <utility>

using namespace linnet;

namespace {

using Wide = __int128;
using UWide = unsigned __int128;

UWide magnitude(Wide value) {
  return value < 0 ? -static_cast<UWide>(value) : static_cast<UWide>(value);
}

UWide gcd(UWide a, UWide b) {
  while (b != 0)
    a = std::exchange(b, a % b);
  return a;
}

bool fitsInt64(Wide value) {
  return value >= std::numeric_limits<int64_t>::min() &&
         value <= std::numeric_limits<int64_t>::max();
}

/// `numerator / denominator` reduced with a positive denominator, or
/// std::nullopt when the denominator is zero or the reduced pair does not fit
/// in 64 bits. Callers keep magnitudes below 2^127, so negation is safe.
std::optional<std::pair<int64_t, int64_t>> reduce(Wide numerator,
                                                  Wide denominator) {
  if (denominator == 0)
    return std::nullopt;
  if (denominator < 0) {
    numerator = -numerator;
    denominator = -denominator;
  }
  if (UWide divisor = gcd(magnitude(numerator), magnitude(denominator));
      divisor > 1) {
    numerator /= static_cast<Wide>(divisor);
    denominator /= static_cast<Wide>(divisor);
  }
  if (!fitsInt64(numerator) || !fitsInt64(denominator))
    return std::nullopt;
  return std::make_pair(static_cast<int64_t>(numerator),
                        static_cast<int64_t>(denominator));
}

std::optional<Rational> fromWide(Wide numerator, Wide denominator) {
  std::optional<std::pair<int64_t, int64_t>> reduced =
      reduce(numerator, denominator);
  if (!reduced)
    return std::nullopt;
  return Rational::get(reduced->first, reduced->second);
}

} // namespace

std::optional<Rational> Rational::get(int64_t numerator, int64_t denominator) {
  std::optional<std::pair<int64_t, int64_t>> reduced =
      reduce(numerator, denominator);
  if (!reduced)
    return std::nullopt;
  Rational result;
  result.num = reduced->first;
  result.den = reduced->second;
  return result;
}

std::optional<Rational> Rational::add(const Rational &rhs) const {
  return fromWide(Wide(num) * rhs.den + Wide(rhs.num) * den,
                  Wide(den) * rhs.den);
}

std::optional<Rational> Rational::multiply(const Rational &rhs) const {
  return fromWide(Wide(num) * rhs.num, Wide(den) * rhs.den);
}

std::optional<Rational> Rational::divide(const Rational &rhs) const {
  if (rhs.isZero())
    return std::nullopt;
  return fromWide(Wide(num) * rhs.den, Wide(den) * rhs.num);
}

std::optional<Rational> Rational::negate() const {
  if (num == std::numeric_limits<int64_t>::min())
    return std::nullopt;
  Rational result = *this;
  result.num = -num;
  return result;
}

bool Rational::operator<(const Rational &rhs) const {
  return Wide(num) * rhs.den < Wide(rhs.num) * den;
}

std::string Rational::str() const {
  std::string text = std::to_string(num);
  if (den != 1)
    text += "/" + std::to_string(den);
  return text;
}
