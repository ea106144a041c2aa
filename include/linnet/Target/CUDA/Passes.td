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
    present is kept. With `special-ops-only`, only those get one: the
    pipeline's first selection, before they are lowered inside their
    regions, leaves every other op to the second, after the other linnet
    ops are lowered, so that their linalg neighbours (a conv's SiLU) share
    their regions.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Parallel iterations in one block's tile">,
    Option<"specialOpsOnly", "special-ops-only", "bool", "false",
           "Configure only the ops tiled as ops (the delta rule, attention)">,
  ];
  let dependentDialects = ["::linnet::LinnetDialect"];
}

def LinnetCudaVersionProducts
    : Pass<"linnet-cuda-version-products", "mlir::func::FuncOp"> {
  let summary = "Give a function's work from its first tensor-core product "
                "of a run-time row count a second form for few rows";
  let description = [{
    Where a function's body holds a bf16 product the tensor cores would take
    (TensorCoreMatmul.h) whose rows are a run-time count (a function every
    entry calls, such as the mixture of experts', sees a prompt's tokens and
    a decode step's one row), the ops from the first such product to the
    return (with the fill of the product's accumulator) go into an
    `scf.if` on that count: below 16 rows a copy in which every product of
    a run-time row count is marked `linnet.few_rows`, which the tile
    selection gives a warp reduction's tile (a decode step's GEMV at full
    bandwidth; a prompt of a few tokens is served as well by them); else
    the ops as they were, for the tensor cores. The rest of the body, not each product, is
    versioned, so that what fuses with a product stays in its branch.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Threads of each block (the tensor cores' tile needs 4 warps)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LinnetCudaFoldKeepdimReshapes
    : Pass<"linnet-cuda-fold-keepdim-reshapes", "mlir::func::FuncOp"> {
  let summary = "Read through reshapes of unit axes; fold a kept axis's "
                "reshape into its reduction";
  let description = [{
    A reduction that keeps its axis (`keepdim = true`: a norm's mean, a
    softmax's max and sum) is a linalg reduction to [R] and a
    `tensor.expand_shape` to [R, 1]. Each linalg.generic reading a reshape
    that only adds or drops axes of size 1 reads the reshape's source
    instead (its indexing map reads such an axis at 0), so the reduction
    stands next to its reader and the reader's dispatch region takes it
    (fuse-reductions), a kernel fewer; an elementwise producer of the
    reduction's input joins it too (a norm's `extf` and sum of squares, one
    kernel with the scaling). A kept axis's reshape that another op reads is
    folded into the reduction by linalg's fold-reshape-by-expansion
    patterns (the unit axis a loop of the reduction).
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LinnetCudaReduceTrigonometric
    : Pass<"linnet-cuda-reduce-trigonometric", "mlir::func::FuncOp"> {
  let summary = "Reduce a sine's or cosine's f32 argument to [-pi, pi] in "
                "f64, then take the hardware's approximation";
  let description = [{
    libdevice's `__nv_sinf` and `__nv_cosf` reduce a large argument (a
    rotary angle: a position up to 2^18 times a frequency) in a local array,
    which ptxas keeps in registers only in a kernel of that loop alone: such
    an op was a kernel of its own. Here each `math.sin` and `math.cos` of an
    f32 becomes the same function of `x - k * 2 pi`, `k = roundeven(x / (2
    pi))`, computed in f64 with two fused multiply-adds (2 pi in two parts),
    rounded to f32 and taken with `afn` (`__nv_fast_sinf`: `sin.approx.f32`,
    an absolute error under 2^-20.9 on [-pi, pi]); the argument reduction
    loses nothing that f32 keeps. The op then fuses with its readers like any
    other (a rope's tables, computed in each block that rotates).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
  ];
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
    Option<"features", "features", "std::string", "\"+ptx81\"",
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
    a buffer of a value per thread (so is a value a loop with barriers
    carries from one iteration to the next), a `gpu.shuffle` (xor, a whole
    warp) is an exchange through a buffer between two barriers, and so is
    an `nvgpu.mma.sync` (m16n8k16, bf16 or f16 in, f32 sums): every lane's
    fragments go to buffers of the block, and each lane computes its
    accumulators from the fragments of the lanes that hold its rows of A
    and its columns of B. Only the mapping's own forms are taken: a grid
    and a block in x, barriers, shuffles and mma.sync only in code every
    thread runs alike, scalars and vectors alone kept across barriers.
    A chained kernel (linnet-cuda-chain-launches) runs as a launch per
    phase, one after the other (what a `linnet.grid_wait` means), each of
    at most `resident-blocks` blocks, as on a GPU that holds fewer blocks
    at once than its largest phase has.
  }];
  let options = [
    Option<"residentBlocks", "resident-blocks", "int64_t", "3",
           "The most blocks of a chained kernel the emulated device runs "
           "at once">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect",
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
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def LinnetCudaLowerBf16Mma : Pass<"linnet-cuda-lower-bf16-mma"> {
  let summary = "Lower nvgpu.mma.sync on bf16 to nvvm.mma.sync";
  let description = [{
    MLIR 22's convert-nvgpu-to-nvvm takes `nvgpu.mma.sync` on f16, tf32,
    i8 and f64 but fails on bf16 ("failed to deduce operand PTX types"),
    which nvvm.mma.sync and PTX have. Here an m16n8k16 one with bf16
    fragments (A vector<4x2xbf16>, B vector<2x2xbf16>, f32 accumulators)
    becomes `nvvm.mma.sync` with each pair of bf16 packed in an i32
    register, the first element in the low half, as PTX's mma takes them.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def LinnetCudaPlanHost : Pass<"linnet-cuda-plan-host", "mlir::ModuleOp"> {
  let summary = "Make the host side of mapped functions a plan a GPU runs";
  let description = [{
    After linnet-cuda-map-dispatch-regions: every `memref.copy` outside a
    kernel becomes a `gpu.launch` of one thread per element (the bytes are
    device memory), a run of copies with only ops free of memory effects
    and allocations between them, none reading or writing what another
    writes, one launch (up to 3 KiB of buffer descriptors, within PTX 8.0's
    4352 bytes of kernel parameters; a private function's arguments count as
    distinct buffers where every call passes distinct ones); a buffer of
    static size, at most 64 KiB, in a function's
    body that only the host uses (loads, stores, pointer reads, calls without
    buffer results) becomes a stack buffer (in the body or a branch, not in
    a loop); a host load of device memory whose value reaches only kernels,
    through ops free of memory effects (a decode step's position, through a
    subview of the cache slot it writes), is loaded by those kernels
    instead, where nothing between the load and them writes what it reads;
    and with `synchronize`, a call of
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

def LinnetCudaMergeLaunches
    : Pass<"linnet-cuda-merge-launches", "mlir::ModuleOp"> {
  let summary = "Make independent launches of a block of host code one";
  let description = [{
    After linnet-cuda-plan-host: a `gpu.launch` moves up to an earlier one
    of the same block of host code, past launches and past ops free of
    memory effects, allocations and deallocations (taking along the ones it
    uses), where it reads nothing the launches it passes or joins write and
    writes nothing they read or write (by buffer, ValueBounds' disjoint
    slices, and a function's distinct arguments: an entry's, or a private
    function's that every call passes distinct buffers). Launches that joined are one
    launch of the sum of their grids: each part's body in an `scf.if` on
    the block id, marked `linnet.launch_part` with its block count, sees its
    own block ids and grid size. Parts share a block size; together they
    keep within 48 KiB of workgroup memory and 3 KiB of kernel parameters.
    The kernel is named after the first part: `<first>_and_<others>`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def LinnetCudaChainLaunches
    : Pass<"linnet-cuda-chain-launches", "mlir::ModuleOp"> {
  let summary = "Make consecutive dependent launches one chained kernel";
  let description = [{
    After linnet-cuda-merge-launches: launches of one block of host code
    with nothing between them but host ops free of memory effects,
    allocations and deallocations become one launch at the last one's place
    (the deallocations between them move after it). Each launch is a phase:
    an `scf.for` from the block id to the phase's block count in steps of
    the grid size, marked `linnet.launch_part` with that count, its body
    seeing the loop's value as its block id; a `linnet.grid_wait` separates
    one phase from the next. The grid is the largest phase's. A phase has a
    constant grid, the others' block size, no full-range trigonometry;
    together they keep within 48 KiB of workgroup memory (shared between
    phases) and `parameter-bytes` of kernel parameters (PTX 8.1 and later
    allow 32 KiB, PTX 8.0 4 KiB). The kernel is named after the first
    phase: `<first>_then_<others>`.
  }];
  let options = [
    Option<"parameterBytes", "parameter-bytes", "int64_t", "3072",
           "The most bytes of parameters a chained kernel takes">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
    "::linnet::LinnetDialect",
  ];
}

def LinnetCudaAlignWorkgroupBuffers
    : Pass<"linnet-cuda-align-workgroup-buffers", "mlir::ModuleOp"> {
  let summary = "Align every kernel's workgroup buffers to 16 bytes";
  let description = [{
    After kernel outlining: each workgroup attribution of each `gpu.func`
    gets `llvm.align = 16` (one that has 16 or more keeps it), since kernels
    store and load their staged tiles and views in 16-byte vectors, and the
    NVVM lowering would otherwise align a buffer to its element type alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LinnetCudaLowerGridWaits
    : Pass<"linnet-cuda-lower-grid-waits", "mlir::ModuleOp"> {
  let summary = "Make each linnet.grid_wait an arrival on a counter and a poll";
  let description = [{
    After kernel outlining: a kernel with grid waits gets a counter of its
    own, `<kernel>_grid_arrivals` (a public i64 in global memory, zero when
    the module loads, which the runtime looks for to launch the kernel
    cooperatively: every block resident at once). At each wait every
    thread of the block meets at a barrier; the first thread adds one to the
    counter (an atomic of acquire-release order, which also publishes what
    the block wrote before the barrier) and polls it until it reaches the
    next multiple of the grid size, so that the counter needs no reset
    between waits or launches (each launch adds a multiple of its grid, the
    same for every launch of the kernel); a second barrier lets the block
    go on.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // LINNET_TARGET_CUDA_PASSES
