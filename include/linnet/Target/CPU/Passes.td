//===- Passes.td - the CPU target's own passes --------------*- tablegen -*-===//
//
// The CPU target's own passes: its choice of tile sizes for the shared
// Codegen passes (Codegen/Passes.td), and the lowering of the resulting
// vector code to 1-D vectors after bufferization.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CPU_PASSES
#define LINNET_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def LinnetCpuSelectLoweringConfig
    : Pass<"linnet-cpu-select-lowering-config", "mlir::func::FuncOp"> {
  let summary = "Choose the CPU's tile sizes: a #linnet.lowering_config on "
                "every linalg op";
  let description = [{
    The CPU target's policy for the Codegen passes (Codegen/Passes.td):
    a contraction's thread tile splits its output rows and columns
    (`contraction-thread-tile`), its register tile is an accumulator that
    stays in vector registers across the reduction loop
    (`contraction-register-tile`), and its reduction loop is blocked
    (`contraction-reduction-tile`); a contraction whose operands both run
    along k (x @ transpose(w)) is a dot product per output with lanes along
    k, `dot-product-register-tile` (rows, columns, lanes) outputs at once
    (one output with `vector-length` lanes for a single row); any other op gets `vector-length` lanes
    along its innermost loop and splits its outermost non-unit parallel loop
    into about 16 thread tiles. With `bf16-dot-products` a dot product
    whose operands are both bf16 has twice the lanes along k, so that after
    linnet-cpu-use-bf16-dot-products its f32 accumulators have the width
    they would have had. A configuration already present is kept.
  }];
  let options = [
    ListOption<"contractionThreadTile", "contraction-thread-tile", "int64_t",
               "Rows and columns of a contraction's tile per thread">,
    ListOption<"contractionRegisterTile", "contraction-register-tile",
               "int64_t", "Rows and columns of a contraction's register tile">,
    ListOption<"dotProductRegisterTile", "dot-product-register-tile",
               "int64_t", "Rows, columns and lanes along k of the outputs a "
               "dot-product contraction of several rows computes at once">,
    Option<"contractionReductionTile", "contraction-reduction-tile", "int64_t",
           "256", "Block of a contraction's reduction dimensions">,
    Option<"vectorLength", "vector-length", "int64_t", "32",
           "Vector length along the innermost dimension of other operations">,
    Option<"bf16DotProducts", "bf16-dot-products", "bool", "false",
           "The target multiplies and adds pairs of bf16 lanes in one "
           "instruction (linnet-cpu-use-bf16-dot-products): dot products of "
           "bf16 operands get twice the lanes along k">,
  ];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "::linnet::LinnetDialect"
  ];
}

def LinnetCpuUseBf16DotProducts
    : Pass<"linnet-cpu-use-bf16-dot-products", "mlir::func::FuncOp"> {
  let summary = "Multiply and add pairs of bf16 lanes in one instruction "
                "(AVX512-BF16) in dot products along k";
  let description = [{
    Runs on the vectorized tiles, before bufferization, for a CPU with
    AVX512-BF16. A reduction loop that carries f32 lanes updated by
    `vector.fma(arith.extf(a), arith.extf(b), acc)` with bf16 `a` and `b`
    of shape [..., L] (carryUnreducedLanes makes them), starting at zero
    and only summed along the lanes after the loop, carries [..., L / 2]
    lanes instead, each updated by `x86vector.avx512.dot` of a pair of bf16
    lanes of `a` and `b` (`vdpbf16ps`: no widening, twice the products per
    instruction). L is 8, 16 or a multiple of 32.
  }];
  let dependentDialects = [
    "mlir::vector::VectorDialect", "mlir::x86vector::X86VectorDialect"
  ];
}

def LinnetCpuKeepF32InKernels
    : Pass<"linnet-cpu-keep-f32-in-kernels", "mlir::func::FuncOp"> {
  let summary = "Read a bf16 result that is widened again as the f32 value "
                "it was rounded from";
  let description = [{
    Runs after arith-emulate-unsupported-floats, which computes each bf16
    operation in f32 and rounds its result back to bf16. Where that result
    is widened again right away, `arith.extf(arith.truncf(x))` with `x` f32,
    the pair is replaced by `x`: a kernel keeps f32 between the operations
    it fuses, and bf16 rounding happens only where a value is stored.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def LinnetCpuApproximateMath
    : Pass<"linnet-cpu-approximate-math", "mlir::func::FuncOp"> {
  let summary = "Compute exp, expm1, log, log1p and log2 of f32 with "
                "arithmetic instead of library calls";
  let description = [{
    Rewrites `math.exp`, `math.expm1`, `math.log`, `math.log1p` and
    `math.log2` on f32 scalars and vectors into MLIR's polynomial
    approximations (range reduction, then a polynomial), so that a vector
    op stays a vector op: LLVM lowers a vector `exp` to one libm call per
    lane. Runs after bf16 math is widened to f32.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect"];
}

def LinnetCpuMoveBf16AsI16 : Pass<"linnet-cpu-move-bf16-as-i16"> {
  let summary = "Load, store, gather and scatter bf16 vectors as i16 vectors "
                "in the LLVM dialect";
  let description = [{
    Runs on the LLVM dialect. Every `llvm.load`, `llvm.store` and masked
    load, store, gather or scatter of a vector of bf16 moves the same bits as
    a vector of i16 instead, with `llvm.bitcast`s around it: LLVM legalizes
    a bf16 vector op it must split or scalarize on a CPU without
    AVX512-BF16 through f32 and one `__truncsfbf2` call per lane.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def LinnetCpuSerializeSingleTileRegions
    : Pass<"linnet-cpu-serialize-single-tile-regions", "mlir::func::FuncOp"> {
  let summary = "Run a parallel region whose loop has one iteration on the "
                "calling thread";
  let description = [{
    Runs after scf → OpenMP. Gives each `omp.parallel` around an
    `omp.wsloop` an `if` clause that is true only when the loop nest has more
    than one iteration: with dynamic sizes (a decode's single row) a
    dispatch region often has one tile, and forking a thread team for it
    costs more than the tile. The region then runs serialized, on the
    calling thread, with the same code.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::omp::OpenMPDialect"
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

def LinnetCpuDropForeignArgumentAttributes
    : Pass<"linnet-cpu-drop-foreign-argument-attributes", "mlir::ModuleOp"> {
  let summary = "Drop the argument and result attributes of llvm.func that "
                "are not llvm.* ones";
  let description = [{
    The last pass of the LLVM stage. IR generation's `linnet.parameter`,
    `linnet.state` and `bufferization.writable` argument attributes survive
    to the LLVM dialect, where nothing reads them, and MLIR 22's translation
    to LLVM IR warns about each one, printing the whole function into the
    warning (76 s of a full-size build). Attributes named `llvm.*` are kept.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // LINNET_TARGET_CPU_PASSES
