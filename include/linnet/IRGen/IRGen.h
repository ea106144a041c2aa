//===- IRGen.h - MLIR from a checked, bound program --------------*- C++
//-*-===//
//
// IR generation turns the entries of a bound model into MLIR functions: the
// model's parameters (in listParameters order) come first as tensor
// arguments, then the entry's own arguments. Functions of blocks that have
// sub-blocks (layers, mixers) become private functions generated once per
// block instance and called by every layer; other calls are inlined and
// every `for` over sub-blocks is unrolled. Operations are func, linalg,
// tensor, arith, math, and the linnet dialect for attention, the delta rule,
// the causal conv and expert matmuls. Generics bound by the checkpoint are
// static sizes; the entry's own generics (B, S, M) are dynamic. Every
// operation carries the Linnet source location that produced it, with call
// sites for inlined calls.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_IRGEN_IRGEN_H
#define LINNET_IRGEN_IRGEN_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/BodyChecker.h"
#include "linnet/Sema/ModelParameters.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace linnet {

/// The dialects generated IR uses.
void registerIRGenDialects(mlir::DialectRegistry &registry);

/// Generates one function per entry in `entries` (all entries when empty).
/// Reports through `diags` what cannot be generated; returns null then.
mlir::OwningOpRef<mlir::ModuleOp>
generateIR(mlir::MLIRContext &context, const Program &program,
           const CheckedProgram &checked, const BoundModel &model,
           llvm::ArrayRef<ModelParameter> parameters,
           llvm::ArrayRef<std::string> entries, DiagnosticEngine &diags);

} // namespace linnet

#endif // LINNET_IRGEN_IRGEN_H
