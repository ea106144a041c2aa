//===- Passes.td - the CUDA target's own passes -------------*- tablegen -*-===//
//
// The CUDA target's own passes: its choice of tile sizes for the shared
// Codegen passes (Codegen/Passes.td), and the mapping of the bufferized
// dispatch regions onto GPU blocks and threads.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CUDA_PASSES
#define LINNET_TARGET_CUDA_PASSES

include "mlir/Pass/PassBase.td"

def LinnetCudaSelectLoweringConfig
    : Pass<"linnet-cuda-select-lowering-config", "mlir::func::FuncOp"> {
  let summary = "Choose the GPU's block tiles: a #linnet.lowering_config on "
                "every linalg op";
  let description = [{
    The CUDA target's policy for the Codegen passes: the `thread` level of
    an op's configuration is the tile of one GPU block. It takes up to
    `threads-per-block` parallel iterations, innermost loop first (where
    consecutive threads read consecutive elements), then the loops outside
    it; reduction loops stay whole, summed by one thread per output, except
    in a warp reduction (WarpReduction.h: an f32 sum, min or max of an input
    laid out along the reduced axis), whose block takes an output per warp.
    An elementwise op that reads a warp reduction's result element for
    element, its only user, takes the same tile (the reduction joins its
    region). The delta rule and attention, where all their shapes are
    static (a decode step), are tiled as ops: a row and a (key) head a
    block. A configuration already
    present is kept.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Parallel iterations in one block's tile">,
  ];
  let dependentDialects = ["::linnet::LinnetDialect"];
}

def LinnetCudaCheckTarget : Pass<"linnet-cuda-check-target", "mlir::ModuleOp"> {
  let summary = "Check that the GPU and PTX version asked for can be compiled";
  let description = [{
    Fails with an error naming the option when `chip` is not a GPU the
    pipeline knows, or `features` asks for a PTX version that chip cannot be
    written in (LLVM 22 aborts the process on, say, sm_90a in PTX 6.0) or
    one past what LLVM 22 and CUDA 13's ptxas take (+ptx90).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "The GPU">,
    Option<"features", "features", "std::string", "\"+ptx80\"",
           "The PTX version, as +ptxNN">,
  ];
}

def LinnetCudaEmulateLaunches
    : Pass<"linnet-cuda-emulate-launches", "mlir::func::FuncOp"> {
  let summary = "Run each gpu.launch on the host: the emulated device";
  let description = [{
    What linnet-cuda-map-dispatch-regions made, executed on the CPU with a
    GPU's semantics: the blocks in a parallel loop (they are independent;
    the CPU's lowering gives it to OpenMP), and in a block each stretch of
    work between barriers run for every thread before the next begins (a
    barrier's meaning), thread by thread; workgroup buffers are host
    buffers of the block; a value a thread keeps across a barrier is kept in
    a buffer of a value per thread, and a `gpu.shuffle` (xor, a whole warp)
    is an exchange through a buffer between two barriers. Only the
    mapping's own forms are taken: a grid and a block in x, barriers and
    shuffles only in code every thread runs alike, scalars alone kept across
    barriers.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::ub::UBDialect",
  ];
}

def LinnetCudaMapDispatchRegions
    : Pass<"linnet-cuda-map-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Turn each bufferized dispatch region into a gpu.launch";
  let description = [{
    A dispatch region (a top-level `scf.forall` without results, after
    bufferization) becomes a `gpu.launch` with one block per iteration of the
    forall (one grid dimension; the forall's induction variables are the
    block id delinearized). Inside the block every linalg op's parallel
    iterations are dealt out to the `threads-per-block` threads (a loop from
    the thread id in steps of the block size over their linearized index;
    the reduction loops of one iteration run in one thread; a warp
    reduction's outputs go to the warps instead, the lanes sharing the
    reduced axis in 16-byte vectors and combining by shuffles), with a
    `gpu.barrier` after each op, since the next one may read what it wrote.
    Other writes in a region run in thread 0. A buffer a region allocates
    (the tile of a fused producer) of static shape becomes workgroup memory
    of its block; one of dynamic shape is an error: on a GPU it would be a
    per-thread `malloc`. A linalg op outside every region is a kernel of one
    block.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Threads of each block">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def LinnetCudaPlanHost : Pass<"linnet-cuda-plan-host", "mlir::ModuleOp"> {
  let summary = "Make the host side of mapped functions a plan a GPU runs";
  let description = [{
    After linnet-cuda-map-dispatch-regions: every `memref.copy` outside a
    kernel becomes a `gpu.launch` of one thread per element (the bytes are
    device memory); a buffer of static size, at most 64 KiB, in a function's
    body that only the host uses (loads, stores, pointer reads, calls without
    buffer results) becomes a stack buffer; and with `synchronize`, a call of
    `linnet_device_synchronize` (the runtime's wait for the device) goes
    before the first host access to a buffer that is not a stack buffer
    after a launch, or after a call of a function that launches. A function
    that launches assumes a launch may be running when it is called; a
    function that does not is called with its buffers after a wait.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Threads of each block of a copy kernel">,
    Option<"synchronize", "synchronize", "bool", "true",
           "Wait for the device before host accesses (off for the emulated "
           "device, where launches run in order on the host)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // LINNET_TARGET_CUDA_PASSES
