//===- Passes.td - conversions out of the linnet dialect ---*- tablegen -*-===//
//
// Pass records for the conversions that lower linnet operations to upstream
// dialects.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CONVERSION_PASSES_TD
#define LINNET_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinnetLowerToLinalg : Pass<"linnet-lower-to-linalg"> {
  let summary = "Lower linnet operations to linalg, tensor and scf on tensors";
  let description = [{
    Rewrites every linnet operation into loop nests on tensors: mostly
    `linalg.generic` with parallel iterators over the independent dimensions
    (ready for tiling, vectorization and OpenMP), `linalg.fill`,
    `tensor.empty`/`extract_slice`/`insert_slice`/`concat`, gathers through
    `tensor.extract` inside generic bodies, and one `scf.for` for the
    sequential scan of `linnet.delta_rule`. Afterwards no linnet operation is
    left; the pass fails if one cannot be lowered.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // LINNET_CONVERSION_PASSES_TD
