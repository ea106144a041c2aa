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

std::string valuesText(const Obligation &ob,
                       const std::map<std::string, ShapeExpr> &sizes) {
  std::string text;
  std::vector<ShapeSymbol> symbols = ob.lhs.symbols();
  for (const ShapeSymbol &symbol : ob.rhs.symbols())
    if (std::find(symbols.begin(), symbols.end(), symbol) == symbols.end())
      symbols.push_back(symbol);
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
      ShapeExpr lhs = bindSizes(ob.lhs, instance.sizes);
      ShapeExpr rhs = bindSizes(ob.rhs, instance.sizes);
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
      if (ob.kind == Obligation::Divides)
        diags.report(ob.loc, diag::ObligationRefutedBound, ob.what,
                     ob.rhs.str(), "`" + rhs.str() + "`", ob.lhs.str(),
                     "`" + lhs.str() + "`", ob.refutedWith);
      else if (ob.kind == Obligation::Integral)
        diags.report(ob.loc, diag::ObligationRefutedBound, ob.what,
                     ob.lhs.str(), "`" + lhs.str() + "`", "an integer", "not",
                     ob.refutedWith);
      else
        diags.report(ob.loc, diag::ObligationRefutedBound, ob.what,
                     ob.lhs.str(), "`" + lhs.str() + "`", ob.rhs.str(),
                     "`" + rhs.str() + "`", ob.refutedWith);
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
