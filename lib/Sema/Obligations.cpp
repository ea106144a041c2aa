//===- Obligations.cpp - Deciding obligations once sizes are bound --------===//
//
// An obligation is a condition on sizes that holds for some sizes and not
// others (`H == Heads * HeadDim`). It is decided for each distinct instance
// of its block in the bound model; the function's own generics (`B`, `S`)
// stay symbolic, so what remains must hold for every value of them.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/BodyChecker.h"

using namespace linnet;

namespace {

/// `H = 8, Heads = 4`: the bound generics the obligation mentions, in
/// declaration order.
std::string valuesText(const Obligation &ob,
                       const std::map<std::string, ShapeExpr> &sizes) {
  std::vector<ShapeSymbol> symbols;
  auto collect = [&](const ShapeExpr &size) {
    for (const ShapeSymbol &symbol : size.symbols())
      if (std::find(symbols.begin(), symbols.end(), symbol) == symbols.end())
        symbols.push_back(symbol);
  };
  collect(ob.lhs);
  collect(ob.rhs);
  for (const auto &[name, parts] : ob.quotients) {
    collect(parts.first);
    collect(parts.second);
  }
  std::sort(symbols.begin(), symbols.end());
  std::string text;
  for (const ShapeSymbol &symbol : symbols)
    if (auto it = sizes.find(symbol.name); it != sizes.end())
      text +=
          (text.empty() ? "" : ", ") + symbol.name + " = " + it->second.str();
  return text.empty() ? "no generics bound" : text;
}

ShapeExpr bindSizes(const ShapeExpr &size,
                    const std::map<std::string, ShapeExpr> &sizes) {
  auto value = size.substitute(sizes);
  if (!value) {
    llvm::consumeError(value.takeError());
    return size;
  }
  return *value;
}

/// The instance's sizes, plus the value of each quotient of sizes the
/// obligation mentions (`Heads / KvHeads` is 2 with Heads = 4, KvHeads =
/// 2), quotients of quotients included.
std::map<std::string, ShapeExpr>
boundSizes(const Obligation &ob, const BlockInstanceSizes &instance) {
  std::map<std::string, ShapeExpr> sizes = instance.sizes;
  for (size_t round = 0; round <= ob.quotients.size(); ++round)
    for (const auto &[name, parts] : ob.quotients) {
      if (sizes.count(name))
        continue;
      ShapeExpr dividend = bindSizes(parts.first, sizes);
      auto divisor = bindSizes(parts.second, sizes).constantValue();
      if (!divisor || divisor->isZero() || !dividend.constantValue())
        continue;
      auto value = ShapeExpr::divide(dividend, ShapeExpr::constant(*divisor));
      if (!value) {
        llvm::consumeError(value.takeError());
        continue;
      }
      sizes[name] = *value;
    }
  return sizes;
}

/// A bound size as a message shows it: `12`, `3/2`, or `8 * B` when the
/// function's generics remain.
std::string valueText(const ShapeExpr &size) {
  if (auto constant = size.constantValue())
    return constant->str();
  return "`" + size.str() + "`";
}

} // namespace

bool linnet::proveObligations(CheckedProgram &program, const BoundModel &model,
                              DiagnosticEngine &diags) {
  bool ok = true;
  for (Obligation &ob : program.obligations) {
    if (ob.status == Obligation::Refuted) {
      ok = false;
      continue;
    }
    if (ob.status == Obligation::Proven)
      continue;
    for (const BlockInstanceSizes &instance : model.instances) {
      if (instance.block != ob.block)
        continue;
      std::map<std::string, ShapeExpr> sizes = boundSizes(ob, instance);
      ShapeExpr lhs = bindSizes(ob.lhs, sizes);
      ShapeExpr rhs = bindSizes(ob.rhs, sizes);
      bool holds;
      if (ob.kind == Obligation::Integral) {
        holds = true;
        for (const ShapeExpr::Term &term : lhs.getTerms())
          holds &= term.coefficient.isInteger();
      } else if (ob.kind == Obligation::AtMost) {
        auto difference = ShapeExpr::subtract(lhs, rhs);
        std::optional<Rational> constant;
        if (difference)
          constant = difference->constantValue();
        else
          llvm::consumeError(difference.takeError());
        holds = constant && constant->numerator() <= 0;
      } else if (ob.kind == Obligation::Divides) {
        auto divisor = lhs.constantValue(), dividend = rhs.constantValue();
        auto ratio = divisor && dividend && !divisor->isZero()
                         ? dividend->divide(*divisor)
                         : std::nullopt;
        holds = ratio && ratio->isInteger();
      } else {
        holds = lhs == rhs;
      }
      if (holds) {
        ++ob.provenInstances;
        continue;
      }
      ob.refutedWith = valuesText(ob, instance.sizes);
      ob.status = Obligation::Refuted;
      ok = false;
      // Sizes that must be integers read like binding's NonIntegralShape;
      // comparisons lead with what failed and end with the rule.
      std::string observed;
      std::string rule = ob.what;
      if (ob.kind == Obligation::Divides) {
        auto quotient = ShapeExpr::divide(rhs, lhs);
        std::string value = "not a whole number";
        if (quotient)
          value = valueText(*quotient);
        else
          llvm::consumeError(quotient.takeError());
        observed = "`" + ob.rhs.str() + " / " + ob.lhs.str() + "` is " + value;
        rule = "a size must be an integer";
      } else if (ob.kind == Obligation::Integral) {
        observed = "`" + ob.lhs.str() + "` is " + valueText(lhs);
        rule = "a size must be an integer";
      } else {
        observed = "`" + ob.lhs.str() + "` is " + valueText(lhs) + " and `" +
                   ob.rhs.str() + "` is " + valueText(rhs);
      }
      if (!ob.context.empty())
        observed = ob.context + ": " + observed;
      diags.report(ob.loc, diag::ObligationRefutedBound, observed,
                   ob.refutedWith, rule);
      break;
    }
    if (ob.status == Obligation::Pending && ob.provenInstances > 0)
      ob.status = Obligation::Proven;
  }
  return ok;
}

std::string linnet::obligationStatus(const Obligation &ob, bool bound) {
  switch (ob.status) {
  case Obligation::Proven:
    if (bound && ob.provenInstances > 0)
      return "proven in " + std::to_string(ob.provenInstances) +
             (ob.provenInstances == 1 ? " instance" : " instances");
    return "proven for all sizes";
  case Obligation::Refuted:
    return ob.refutedWith.empty() ? "refuted for all positive sizes"
                                  : "refuted with " + ob.refutedWith;
  case Obligation::Pending:
    return bound ? "not reached from the root" : "pending until bound";
  }
  return "";
}
