//===- ShapeConverter.h - Written sizes to normal form ----------*- C++ -*-===//
//
// Declarations and bodies both write sizes as shape expressions
// (`2 * Heads * HeadDim`); this is the one walk that turns the syntax into a
// ShapeExpr and reports what goes wrong on the way (division by zero or by
// a non-constant, overflow). Callers decide only what a name means.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_SHAPECONVERTER_H
#define LINNET_SEMA_SHAPECONVERTER_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Sema/Program.h"
#include "linnet/Sema/ShapeExpr.h"
#include "linnet/Syntax/AST.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace linnet {

class ShapeConverter {
public:
  /// The size a name stands for, or nothing after reporting why not.
  using NameToSize =
      llvm::function_ref<std::optional<ShapeExpr>(const ast::Identifier &)>;

  ShapeConverter(DiagnosticEngine &diags, NameToSize nameToSize)
      : diags(diags), nameToSize(nameToSize) {}

  std::optional<ShapeExpr> convert(const ast::ShapeSum &sum);

  /// A name as a size, given the generic it resolves to in scope (or
  /// null): the symbol of a `Dim` generic, or nothing after reporting why
  /// not (an element type, another kind, an unknown name).
  static std::optional<ShapeExpr> sizeOfGeneric(const ast::Identifier &name,
                                                const GenericDecl *generic,
                                                DiagnosticEngine &diags);

  /// The value of a shape computation over the expression `whole`, or
  /// nothing after reporting its error (at `divisor` for a division).
  static std::optional<ShapeExpr> check(llvm::Expected<ShapeExpr> result,
                                        llvm::SMRange whole,
                                        llvm::SMRange divisor,
                                        DiagnosticEngine &diags);

private:
  std::optional<ShapeExpr> product(const ast::ShapeProduct &product,
                                   const ast::ShapeSum &whole);
  std::optional<ShapeExpr> factor(const ast::ShapeFactor &factor,
                                  const ast::ShapeSum &whole);

  DiagnosticEngine &diags;
  NameToSize nameToSize;
};

} // namespace linnet

#endif // LINNET_SEMA_SHAPECONVERTER_H
