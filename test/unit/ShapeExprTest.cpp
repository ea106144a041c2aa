//===- ShapeExprTest.cpp - Tests for symbolic sizes -----------------------===//
//
// Shape equality is structural comparison of normal forms, so these tests
// pin down the algebra (equal polynomials must compare equal however they
// were built), the overflow and division errors, and the exact canonical
// text, which must also parse back to the polynomial it came from.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/ShapeExpr.h"

#include "gtest/gtest.h"

#include <cctype>
#include <cstdint>
#include <limits>

using namespace linnet;

namespace linnet {
// Readable values in assertion failures.
void PrintTo(const Rational &value, std::ostream *os) { *os << value.str(); }
void PrintTo(const ShapeExpr &value, std::ostream *os) { *os << value.str(); }
void PrintTo(ShapeError kind, std::ostream *os) {
  *os << llvm::toString(llvm::make_error<ShapeErrorInfo>(kind));
}
} // namespace linnet

namespace {

constexpr int64_t Max = std::numeric_limits<int64_t>::max();
constexpr int64_t Min = std::numeric_limits<int64_t>::min();

const std::map<std::string, unsigned> &ranks() {
  static const std::map<std::string, unsigned> table = {
      {"A", 0},        {"B", 1},        {"C", 2},          {"H", 0},
      {"K", 1},        {"Heads", 1},    {"KvHeads", 2},    {"HeadDim", 3},
      {"Width", 4},    {"KeyHeads", 1}, {"ValueHeads", 2}, {"KeyDim", 3},
      {"ValueDim", 4},
  };
  return table;
}

ShapeExpr sym(const std::string &name) {
  return ShapeExpr::symbol({ranks().at(name), name});
}

ShapeExpr num(int64_t value) { return ShapeExpr::constant(Rational(value)); }

ShapeExpr unwrap(llvm::Expected<ShapeExpr> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return ShapeExpr();
  }
  return std::move(*value);
}

std::optional<ShapeError> failure(llvm::Expected<ShapeExpr> value) {
  if (value)
    return std::nullopt;
  std::optional<ShapeError> kind;
  llvm::handleAllErrors(value.takeError(), [&](const ShapeErrorInfo &info) {
    kind = info.getKind();
  });
  return kind;
}

ShapeExpr operator+(const ShapeExpr &lhs, const ShapeExpr &rhs) {
  return unwrap(ShapeExpr::add(lhs, rhs));
}
ShapeExpr operator-(const ShapeExpr &lhs, const ShapeExpr &rhs) {
  return unwrap(ShapeExpr::subtract(lhs, rhs));
}
ShapeExpr operator*(const ShapeExpr &lhs, const ShapeExpr &rhs) {
  return unwrap(ShapeExpr::multiply(lhs, rhs));
}
ShapeExpr operator/(const ShapeExpr &lhs, const ShapeExpr &rhs) {
  return unwrap(ShapeExpr::divide(lhs, rhs));
}
ShapeExpr operator-(const ShapeExpr &value) {
  return unwrap(ShapeExpr::negate(value));
}

/// Just enough of the shape grammar to read printed forms back: integers,
/// names from ranks(), `+ - * /`, unary minus and parentheses, with `*` and
/// `/` binding tighter than `+` and `-`, all left-associative.
class Parser {
public:
  explicit Parser(std::string text) : text(std::move(text)) {}

  llvm::Expected<ShapeExpr> parse() {
    llvm::Expected<ShapeExpr> result = parseSum();
    if (result && (skipSpace(), pos != text.size()))
      return syntaxError();
    return result;
  }

private:
  std::string text;
  size_t pos = 0;

  llvm::Error syntaxError() const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "syntax error at %zu in '%s'", pos,
                                   text.c_str());
  }

  void skipSpace() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  llvm::Expected<ShapeExpr> parseSum() {
    llvm::Expected<ShapeExpr> lhs = parseProduct();
    while (lhs) {
      bool plus = consume('+');
      if (!plus && !consume('-'))
        break;
      llvm::Expected<ShapeExpr> rhs = parseProduct();
      if (!rhs)
        return rhs.takeError();
      lhs = plus ? ShapeExpr::add(*lhs, *rhs) : ShapeExpr::subtract(*lhs, *rhs);
    }
    return lhs;
  }

  llvm::Expected<ShapeExpr> parseProduct() {
    llvm::Expected<ShapeExpr> lhs = parseUnary();
    while (lhs) {
      bool times = consume('*');
      if (!times && !consume('/'))
        break;
      llvm::Expected<ShapeExpr> rhs = parseUnary();
      if (!rhs)
        return rhs.takeError();
      lhs = times ? ShapeExpr::multiply(*lhs, *rhs)
                  : ShapeExpr::divide(*lhs, *rhs);
    }
    return lhs;
  }

  llvm::Expected<ShapeExpr> parseUnary() {
    if (!consume('-'))
      return parsePrimary();
    llvm::Expected<ShapeExpr> operand = parseUnary();
    if (!operand)
      return operand.takeError();
    return ShapeExpr::negate(*operand);
  }

  llvm::Expected<ShapeExpr> parsePrimary() {
    if (consume('(')) {
      llvm::Expected<ShapeExpr> inner = parseSum();
      if (inner && !consume(')'))
        return syntaxError();
      return inner;
    }
    skipSpace();
    size_t start = pos;
    if (pos < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[pos]))) {
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      return num(std::stoll(text.substr(start, pos - start)));
    }
    while (pos < text.size() &&
           std::isalpha(static_cast<unsigned char>(text[pos])))
      ++pos;
    auto rank = ranks().find(text.substr(start, pos - start));
    if (rank == ranks().end())
      return syntaxError();
    return ShapeExpr::symbol({rank->second, rank->first});
  }
};

ShapeExpr parse(const std::string &text) {
  return unwrap(Parser(text).parse());
}

//===----------------------------------------------------------------------===//
// Rational
//===----------------------------------------------------------------------===//

TEST(RationalTest, ReducesAndNormalizesSign) {
  std::optional<Rational> value = Rational::get(6, -4);
  ASSERT_TRUE(value);
  EXPECT_EQ(value->numerator(), -3);
  EXPECT_EQ(value->denominator(), 2);
  EXPECT_EQ(value->str(), "-3/2");

  EXPECT_EQ(Rational::get(0, -5), Rational(0));
  EXPECT_EQ(Rational::get(0, -5)->denominator(), 1);
  EXPECT_EQ(Rational::get(8, 2), Rational(4));
  EXPECT_TRUE(Rational::get(8, 2)->isInteger());
  EXPECT_EQ(Rational::get(Min, Min), Rational(1));
  EXPECT_EQ(Rational::get(Min, 2), Rational(Min / 2));
  EXPECT_EQ(Rational::get(1, 4)->str(), "1/4");
  EXPECT_EQ(Rational(7).str(), "7");
}

TEST(RationalTest, RejectsZeroDenominatorAndUnrepresentableSign) {
  EXPECT_FALSE(Rational::get(1, 0));
  EXPECT_FALSE(Rational::get(Min, -1));
  EXPECT_FALSE(Rational::get(1, Min));
  EXPECT_EQ(Rational::get(2, Min), Rational::get(-1, Max / 2 + 1));
}

TEST(RationalTest, Arithmetic) {
  Rational half = *Rational::get(1, 2);
  Rational third = *Rational::get(1, 3);
  EXPECT_EQ(half.add(third), Rational::get(5, 6));
  EXPECT_EQ(half.add(half), Rational(1));
  EXPECT_EQ(half.multiply(third), Rational::get(1, 6));
  EXPECT_EQ(half.divide(third), Rational::get(3, 2));
  EXPECT_EQ(half.negate(), Rational::get(-1, 2));
  EXPECT_FALSE(half.divide(Rational(0)));
  EXPECT_TRUE(third < half);
  EXPECT_FALSE(half < third);
  EXPECT_TRUE(Rational(-1) < third);
  EXPECT_TRUE(Rational(Min) < Rational(Max));
}

TEST(RationalTest, Overflow) {
  EXPECT_FALSE(Rational(Max).add(Rational(1)));
  EXPECT_FALSE(Rational(Min).add(Rational(-1)));
  EXPECT_FALSE(Rational(Max).multiply(Rational(2)));
  EXPECT_FALSE(Rational(int64_t(1) << 32).multiply(Rational(int64_t(1) << 31)));
  EXPECT_FALSE(Rational(Min).negate());
  EXPECT_FALSE(Rational(Min).divide(Rational(-1)));
  EXPECT_FALSE(Rational(1).divide(Rational(Min)));
  EXPECT_FALSE(Rational::get(1, Max)->add(*Rational::get(1, Max - 1)));
  EXPECT_EQ(Rational(Max).add(Rational(Min)), Rational(-1));
  EXPECT_EQ(Rational(Min).add(Rational(Max)), Rational(-1));
}

TEST(RationalTest, ExactWhenOnlyIntermediatesAreWide) {
  // Max = 7^2 * 73 * 127 * 337 * 92737 * 649657.
  EXPECT_EQ(Rational(Max).multiply(*Rational::get(1, 7)), Rational(Max / 7));
  EXPECT_EQ(Rational::get(Max, 2)->multiply(Rational(2)), Rational(Max));
  EXPECT_EQ(Rational::get(Max, 2)->add(*Rational::get(Max, 2)), Rational(Max));
  EXPECT_FALSE(Rational::get(Max, 3)->add(*Rational::get(Max, 3)));
}

//===----------------------------------------------------------------------===//
// ShapeExpr algebra
//===----------------------------------------------------------------------===//

TEST(ShapeExprTest, Commutativity) {
  ShapeExpr a = sym("A"), b = sym("B");
  EXPECT_EQ(a + b, b + a);
  EXPECT_EQ(a * b, b * a);
  EXPECT_EQ(sym("Heads") * sym("HeadDim"), sym("HeadDim") * sym("Heads"));
  EXPECT_EQ((a + num(3)) * (b - num(2)), (b - num(2)) * (a + num(3)));
}

TEST(ShapeExprTest, Associativity) {
  ShapeExpr a = sym("A"), b = sym("B"), c = sym("C");
  EXPECT_EQ((a + b) + c, a + (b + c));
  EXPECT_EQ((a * b) * c, a * (b * c));
  EXPECT_EQ((a - b) - c, a - (b + c));
  EXPECT_EQ(((a + num(1)) * (b + num(2))) * c,
            (a + num(1)) * ((b + num(2)) * c));
}

TEST(ShapeExprTest, Distribution) {
  ShapeExpr a = sym("A"), b = sym("B");
  EXPECT_EQ(num(2) * (a + b), num(2) * a + num(2) * b);
  EXPECT_EQ((a + b) * (a - b), a * a - b * b);
  EXPECT_EQ(((a + b) * (a - b)).str(), "A * A - B * B");
  EXPECT_EQ(((a + b) * (a + b)).str(), "A * A + 2 * A * B + B * B");
  EXPECT_EQ((a + num(1)) * (a - num(1)), a * a - num(1));
}

TEST(ShapeExprTest, Cancellation) {
  ShapeExpr a = sym("A");
  ShapeExpr one = a - a + num(1);
  EXPECT_EQ(one, num(1));
  EXPECT_EQ(one.constantValue(), Rational(1));
  EXPECT_TRUE(one.isConstant());

  ShapeExpr zero = a * sym("B") - sym("B") * a;
  EXPECT_EQ(zero, ShapeExpr());
  EXPECT_TRUE(zero.getTerms().empty());
  EXPECT_EQ(zero.constantValue(), Rational(0));
  EXPECT_EQ(zero.str(), "0");
  EXPECT_EQ(num(0), ShapeExpr());
  EXPECT_EQ(num(0) * a, ShapeExpr());
}

TEST(ShapeExprTest, ConstantDivision) {
  ShapeExpr headDim = sym("HeadDim");
  ShapeExpr quarter = headDim / num(4);
  EXPECT_EQ(quarter * num(4), headDim);
  EXPECT_EQ(quarter + quarter, headDim / num(2));
  EXPECT_EQ((num(6) * headDim) / num(4), num(3) * headDim / num(2));
  EXPECT_EQ(quarter.getTerms().front().coefficient, Rational::get(1, 4));
  EXPECT_EQ(num(3) / num(6), ShapeExpr::constant(*Rational::get(1, 2)));
  EXPECT_EQ(headDim / num(-1), -headDim);
}

TEST(ShapeExprTest, DivisionByZero) {
  llvm::Expected<ShapeExpr> result = ShapeExpr::divide(sym("HeadDim"), num(0));
  ASSERT_FALSE(result);
  llvm::Error error = result.takeError();
  EXPECT_TRUE(error.isA<ShapeErrorInfo>());
  EXPECT_EQ(llvm::toString(std::move(error)), "division by zero");

  EXPECT_EQ(failure(ShapeExpr::divide(num(1), sym("A") - sym("A"))),
            ShapeError::DivisionByZero);
}

TEST(ShapeExprTest, NonConstantDivisor) {
  EXPECT_EQ(failure(ShapeExpr::divide(sym("A"), sym("B"))),
            ShapeError::NonConstantDivisor);
  EXPECT_EQ(failure(ShapeExpr::divide(num(4), sym("A") + num(1))),
            ShapeError::NonConstantDivisor);
  EXPECT_EQ(failure(ShapeExpr::divide(sym("A"), sym("A"))),
            ShapeError::NonConstantDivisor);
  EXPECT_EQ(llvm::toString(ShapeExpr::divide(sym("A"), sym("B")).takeError()),
            "division by a non-constant shape expression");
}

TEST(ShapeExprTest, Overflow) {
  EXPECT_EQ(failure(ShapeExpr::add(num(Max), num(1))), ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::subtract(num(Min), num(1))),
            ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::multiply(num(Max), num(2))),
            ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::negate(num(Min))), ShapeError::Overflow);
  EXPECT_EQ(llvm::toString(ShapeExpr::add(num(Max), num(1)).takeError()),
            "shape arithmetic overflows 64 bits");

  // Coefficients overflow when like terms combine, not only constants.
  ShapeExpr a = sym("A"), b = sym("B");
  ShapeExpr big = num(Max) * a;
  EXPECT_EQ(failure(ShapeExpr::add(big, a)), ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::add(big * b, b * a)), ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::multiply(num(int64_t(1) << 32) * a,
                                        num(int64_t(1) << 32) * b)),
            ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::multiply(big + num(1), a + num(2))),
            ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::divide(a / num(Max), num(Max))),
            ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::negate(a + num(Min) * b)), ShapeError::Overflow);
  EXPECT_EQ(failure(ShapeExpr::divide(num(Min) * a, num(-1))),
            ShapeError::Overflow);

  // Cross terms that overflow alone may still cancel exactly.
  EXPECT_EQ(big - big, ShapeExpr());
  EXPECT_EQ(num(Min) * a / num(Min), a);
}

TEST(ShapeExprTest, SymbolsOrderedByRankNotName) {
  ShapeExpr product = sym("HeadDim") * sym("Heads");
  ASSERT_EQ(product.getTerms().size(), 1u);
  const ShapeExpr::Monomial &monomial = product.getTerms().front().monomial;
  ASSERT_EQ(monomial.size(), 2u);
  EXPECT_EQ(monomial[0].name, "Heads");
  EXPECT_EQ(monomial[1].name, "HeadDim");

  ShapeExpr sum = sym("HeadDim") + sym("Heads");
  EXPECT_EQ(sum.str(), "Heads + HeadDim");

  // Equal ranks fall back to the name.
  EXPECT_EQ((ShapeExpr::symbol({5, "Y"}) * ShapeExpr::symbol({5, "X"})).str(),
            "X * Y");
}

TEST(ShapeExprTest, TermsOrderedByDegreeThenMonomial) {
  ShapeExpr a = sym("A"), b = sym("B");
  ShapeExpr value = b * b * a + b + num(5) + a * b + a;
  EXPECT_EQ(value.str(), "5 + A + B + A * B + A * B * B");
  const std::vector<ShapeExpr::Term> &terms = value.getTerms();
  ASSERT_EQ(terms.size(), 5u);
  for (size_t i = 1; i < terms.size(); ++i)
    EXPECT_LE(terms[i - 1].monomial.size(), terms[i].monomial.size());
}

TEST(ShapeExprTest, Symbols) {
  EXPECT_TRUE(ShapeExpr().symbols().empty());
  EXPECT_TRUE(num(3).symbols().empty());
  ShapeExpr value = sym("Width") * sym("HeadDim") +
                    sym("HeadDim") * sym("HeadDim") + sym("Heads") - num(1);
  std::vector<ShapeSymbol> symbols = value.symbols();
  ASSERT_EQ(symbols.size(), 3u);
  EXPECT_EQ(symbols[0], (ShapeSymbol{1, "Heads"}));
  EXPECT_EQ(symbols[1], (ShapeSymbol{3, "HeadDim"}));
  EXPECT_EQ(symbols[2], (ShapeSymbol{4, "Width"}));
}

TEST(ShapeExprTest, ConstantValue) {
  EXPECT_EQ(num(7).constantValue(), Rational(7));
  EXPECT_EQ((num(1) / num(2)).constantValue(), Rational::get(1, 2));
  EXPECT_FALSE(sym("A").constantValue());
  EXPECT_FALSE((sym("A") + num(1)).isConstant());
  EXPECT_TRUE(ShapeExpr().isConstant());
}

//===----------------------------------------------------------------------===//
// Substitution
//===----------------------------------------------------------------------===//

TEST(ShapeExprTest, SubstituteSymbolByPolynomial) {
  // A sub-block's Dim D instantiated with its parent's `2 * Heads`.
  ShapeExpr d = ShapeExpr::symbol({0, "D"});
  ShapeExpr size = d * sym("HeadDim") + d;
  ShapeExpr result = unwrap(size.substitute({{"D", num(2) * sym("Heads")}}));
  EXPECT_EQ(result,
            num(2) * sym("Heads") * sym("HeadDim") + num(2) * sym("Heads"));
  EXPECT_EQ(result.str(), "2 * Heads + 2 * Heads * HeadDim");

  ShapeExpr square = unwrap((d * d).substitute({{"D", sym("A") + num(1)}}));
  EXPECT_EQ(square.str(), "1 + 2 * A + A * A");
}

TEST(ShapeExprTest, SubstituteResortsByNewRank) {
  // X has rank 0 before and becomes Width (rank 4): its term must move
  // behind the one in HeadDim.
  ShapeExpr x = ShapeExpr::symbol({0, "X"});
  ShapeExpr value = x * sym("Heads") + sym("HeadDim") * sym("Heads");
  EXPECT_EQ(value.str(), "X * Heads + Heads * HeadDim");
  ShapeExpr result = unwrap(value.substitute({{"X", sym("Width")}}));
  EXPECT_EQ(result.str(), "Heads * HeadDim + Heads * Width");
  EXPECT_EQ(result,
            sym("Width") * sym("Heads") + sym("Heads") * sym("HeadDim"));

  // Substitution can make terms combine or cancel.
  ShapeExpr merged = unwrap((x + sym("A")).substitute({{"X", sym("A")}}));
  EXPECT_EQ(merged, num(2) * sym("A"));
  ShapeExpr cancelled = unwrap((x - sym("A")).substitute({{"X", sym("A")}}));
  EXPECT_EQ(cancelled, ShapeExpr());
}

TEST(ShapeExprTest, SubstituteIntegers) {
  ShapeExpr value = num(2) * sym("Heads") * sym("HeadDim") - num(1);
  ShapeExpr result =
      unwrap(value.substitute({{"Heads", num(8)}, {"HeadDim", num(64)}}));
  EXPECT_EQ(result.constantValue(), Rational(1023));

  ShapeExpr quarter = sym("HeadDim") / num(4);
  EXPECT_EQ(unwrap(quarter.substitute({{"HeadDim", num(64)}})).constantValue(),
            Rational(16));
  EXPECT_EQ(unwrap(quarter.substitute({{"HeadDim", num(6)}})).constantValue(),
            Rational::get(3, 2));
}

TEST(ShapeExprTest, SubstitutePartial) {
  ShapeExpr value = sym("Heads") * sym("HeadDim") + sym("Width");
  ShapeExpr result =
      unwrap(value.substitute({{"Heads", num(4)}, {"Unused", num(9)}}));
  EXPECT_EQ(result.str(), "4 * HeadDim + Width");
  EXPECT_EQ(unwrap(value.substitute({})), value);
}

TEST(ShapeExprTest, SubstituteOverflow) {
  ShapeExpr a = sym("A");
  EXPECT_EQ(failure((a * a).substitute({{"A", num(int64_t(1) << 32)}})),
            ShapeError::Overflow);
  EXPECT_EQ(failure((a + num(1)).substitute({{"A", num(Max)}})),
            ShapeError::Overflow);
  EXPECT_EQ(unwrap((a - num(1)).substitute({{"A", num(Max)}})), num(Max - 1));
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

TEST(ShapeExprTest, PrintsDocumentedExamples) {
  ShapeExpr heads = sym("Heads"), headDim = sym("HeadDim");
  EXPECT_EQ((heads * headDim * num(2)).str(), "2 * Heads * HeadDim");
  EXPECT_EQ((sym("Width") - num(1)).str(), "-1 + Width");
  EXPECT_EQ((headDim / num(4)).str(), "HeadDim / 4");
  EXPECT_EQ((num(3) * headDim / num(4)).str(), "3 * HeadDim / 4");
  EXPECT_EQ((-headDim / num(4)).str(), "-HeadDim / 4");
  EXPECT_EQ((headDim * sym("KvHeads")).str(), "KvHeads * HeadDim");
  EXPECT_EQ((sym("ValueHeads") * sym("ValueDim") +
             num(2) * sym("KeyDim") * sym("KeyHeads"))
                .str(),
            "2 * KeyHeads * KeyDim + ValueHeads * ValueDim");
  EXPECT_EQ((headDim * headDim).str(), "HeadDim * HeadDim");
}

TEST(ShapeExprTest, PrintsSignsAndFractions) {
  ShapeExpr h = sym("H"), k = sym("K");
  EXPECT_EQ(ShapeExpr().str(), "0");
  EXPECT_EQ(num(7).str(), "7");
  EXPECT_EQ(num(-7).str(), "-7");
  EXPECT_EQ((num(1) / num(2)).str(), "1 / 2");
  EXPECT_EQ((num(-3) / num(4)).str(), "-3 / 4");
  EXPECT_EQ((-h).str(), "-H");
  EXPECT_EQ((h - num(2) * k).str(), "H - 2 * K");
  EXPECT_EQ((h - k).str(), "H - K");
  EXPECT_EQ((num(1) - h / num(4)).str(), "1 - H / 4");
  EXPECT_EQ((h - num(3) * k / num(4)).str(), "H - 3 * K / 4");
  EXPECT_EQ((num(-1) / num(2) - h * k / num(3)).str(), "-1 / 2 - H * K / 3");
  EXPECT_EQ((num(Min) * h).str(), "-9223372036854775808 * H");
  EXPECT_EQ((k + num(Min) * h * k).str(), "K - 9223372036854775808 * H * K");
}

TEST(ShapeExprTest, PrintingRoundTrips) {
  ShapeExpr h = sym("H"), k = sym("K"), headDim = sym("HeadDim");
  std::vector<ShapeExpr> values = {
      ShapeExpr(),
      num(42),
      num(-42),
      num(5) / num(-10),
      -headDim / num(4),
      num(3) * headDim / num(4),
      num(-3) * headDim / num(4),
      h - num(2) * k,
      num(-1) - h * k / num(3) + k * k * num(7) / num(2),
      num(2) * sym("Heads") * headDim,
      sym("Width") - num(1),
      num(2) * sym("KeyHeads") * sym("KeyDim") +
          sym("ValueHeads") * sym("ValueDim"),
      (h - k) * (h - k) * (h + num(1)) / num(6),
      num(Max) * h - num(Max) * k,
  };
  for (const ShapeExpr &value : values) {
    std::string text = value.str();
    SCOPED_TRACE(text);
    ShapeExpr reparsed = parse(text);
    EXPECT_EQ(reparsed, value);
    EXPECT_EQ(reparsed.str(), text);
  }
}

TEST(ShapeExprTest, ParsedSourcesPrintCanonically) {
  EXPECT_EQ(parse("Heads * HeadDim * 2").str(), "2 * Heads * HeadDim");
  EXPECT_EQ(parse("Width - 1").str(), "-1 + Width");
  EXPECT_EQ(parse("2 * (A + B)").str(), "2 * A + 2 * B");
  EXPECT_EQ(parse("A - A + 1").str(), "1");
  EXPECT_EQ(parse("HeadDim * (3 / 4)").str(), "3 * HeadDim / 4");
  EXPECT_EQ(parse("-(HeadDim / 4)").str(), "-HeadDim / 4");
  EXPECT_EQ(parse("12 / 8 / 3").str(), "1 / 2");
}

} // namespace
