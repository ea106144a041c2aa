//===- Passes.td - the CPU target's own passes --------------*- tablegen -*-===//
//
// The two steps of the CPU pipeline that upstream MLIR has no pass for: the
// formation, tiling and vectorization of dispatch regions on tensors, and the
// lowering of the resulting vector code to 1-D vectors after bufferization.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CPU_PASSES
#define LINNET_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def LinnetCpuTileAndVectorize
    : Pass<"linnet-cpu-tile-and-vectorize", "mlir::func::FuncOp"> {
  let summary = "Form dispatch regions, tile them over threads and registers, "
                "and vectorize them";
  let description = [{
    Each linalg operation that is not fused into a consumer is the root of a
    dispatch region: it is tiled with an `scf.forall` over its outer parallel
    dimensions (one tile per thread) and its producers are fused into the
    tile (only `linalg.fill`-like destinations for contractions; every
    producer used only inside the region for other roots). Every operation of
    the region is then tiled with `scf.for` to register-sized tiles and
    vectorized, with masks where the shapes are dynamic.

    Example: `linalg.fill` + `linalg.matmul` on `tensor<?x?xf32>` becomes one
    `scf.forall` whose body holds a `scf.for` nest around `vector.contract`.
  }];
  let options = [
    Option<"vectorize", "vectorize", "bool", "true",
           "Vectorize the tiled operations">,
    ListOption<"contractionThreadTile", "contraction-thread-tile", "int64_t",
               "Rows and columns of a contraction's tile per thread">,
    ListOption<"contractionRegisterTile", "contraction-register-tile",
               "int64_t", "Rows and columns of a contraction's register tile">,
    Option<"contractionReductionTile", "contraction-reduction-tile", "int64_t",
           "256", "Block of a contraction's reduction dimensions">,
    Option<"vectorLength", "vector-length", "int64_t", "32",
           "Vector length along the innermost dimension of other operations">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::affine::AffineDialect",
    "mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "mlir::vector::VectorDialect"
  ];
}

def LinnetCpuLowerVectors
    : Pass<"linnet-cpu-lower-vectors", "mlir::func::FuncOp"> {
  let summary = "Hoist accumulators out of reduction loops and lower vector "
                "ops to 1-D vectors on memrefs";
  let description = [{
    Runs after bufferization. Moves the load and store of a contraction's
    accumulator out of the reduction loop (so it lives in registers), lowers
    `vector.mask`, `vector.contract` (to outer products, i.e. broadcasts and
    FMAs), `vector.multi_reduction`, transposes and n-D transfers to 1-D
    vector operations, and turns copies between non-contiguous memrefs into
    `linalg.copy` so that no runtime library call is needed.
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"
  ];
}

#endif // LINNET_TARGET_CPU_PASSES
