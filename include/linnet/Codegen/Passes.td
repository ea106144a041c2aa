//===- Passes.td - the target-neutral Codegen passes -------*- tablegen -*-===//
//
// From linalg on tensors to vectorized kernels on tensors, shared by the CPU
// and CUDA targets. Each reads the `#linnet.lowering_config` a target's
// selection pass attached (linnet-cpu-select-lowering-config), so each can
// be tested alone with configurations pinned in its input:
//
//   linnet-codegen-prepare               fuse, make contractions named ops
//   linnet-codegen-parallel-scatters     a loop of disjoint inserts a forall
//   linnet-codegen-write-states-in-place new states computed into their own
//                                        arguments
//   <target>-select-lowering-config      tile sizes per op (target policy)
//   linnet-codegen-form-dispatch-regions one scf.forall per root, producers in it
//   linnet-codegen-tile-and-vectorize    register tiles, vectors, accumulators
//   linnet-codegen-drop-in-place-results after bufferization: states stay in
//                                        the buffers their callers passed
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_PASSES
#define LINNET_CODEGEN_PASSES

include "mlir/Pass/PassBase.td"

def LinnetCodegenPrepare
    : Pass<"linnet-codegen-prepare", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise producers into consumers and give "
                "contractions their named form";
  let description = [{
    Every linalg op is made a `linalg.generic`; an elementwise producer with
    one use is fused into its consumer where the consumer reads each of its
    elements once (a permutation map), or where it only moves data (a
    transpose or broadcast, which then reads its source in place): through a
    broadcasting or reducing map a computing producer would be recomputed
    for every element of the loops the map leaves out. Contractions then
    become named ops (`linalg.matmul`, ...) where that keeps their indexing
    maps; MLIR 22's specialization would drop a transposed operand's map.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def LinnetCodegenInlineCalls
    : Pass<"linnet-codegen-inline-calls", "mlir::ModuleOp"> {
  let summary = "Inline the calls that would keep a caller's kernels and its "
                "callee's apart";
  let description = [{
    A call of a private function some of whose operands are `tensor.cast`s
    from a more static type (a decode step's [1, 1, H] passed as [?, ?, H])
    is inlined: the callee's shapes become static where it is called so,
    the branches on them fold, and its dispatch regions fuse with the
    caller's. Then the only call of a private function of static shapes (a
    function nothing else refers to) is inlined, which duplicates no
    kernel: a decode layer's DeltaNet, whose projections then compute the
    layer's norm themselves. (A prompt's, of a run-time length, stays a
    call: its body would be copied into both forms of a caller versioned on
    the row count.)
    Other calls stay calls (one body for every call); a callee left without
    calls is dropped.
  }];
  let dependentDialects = [
    "mlir::func::FuncDialect", "mlir::tensor::TensorDialect"
  ];
}

def LinnetCodegenFormDispatchRegions
    : Pass<"linnet-codegen-form-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Tile each root op with an scf.forall of its lowering "
                "configuration's thread tile and fuse its producers";
  let description = [{
    Consumers first, each linalg op with a `linnet.lowering_config` that is
    not inside an `scf.forall` yet (one the lowering made, or a region formed
    here) becomes the root of a dispatch region: it is tiled with an
    `scf.forall` of its configuration's `thread` sizes and its producers are
    fused into the tile (only the accumulator's initialisation for a
    contraction; for other roots every non-contraction producer whose users
    all join). A constant fill joins every region that reads it, shared or
    not: a tile of it is free to compute again, and left alone it would be
    a region of its own and, shared, copied. So does an elementwise op whose
    inputs are all in memory (a block's residual sum, which the next norm
    and the block's last sum read): each region computes its tile again,
    and one left without users is erased, not made a region. A root whose
    `thread` sizes
    are all 0 stays as it is. With `map-to-blocks` each forall carries GPU
    block mappings: canonicalization folds away a forall of one iteration
    unless it is mapped, and on a GPU a region of one tile is still a kernel
    of its own, its producers fused into it. With `max-fused-tile-bytes`
    a producer whose tile may hold more than that stays out.
  }];
  let options = [
    Option<"fuseReductions", "fuse-reductions", "bool", "false",
           "Fuse a producer with reduction loops (a GEMV, a norm's sum) into "
           "its consumers' tiles too, where all its users join: a GPU's "
           "reduction then shares a kernel with its elementwise consumer; "
           "not where a block would compute more of its outputs than one of "
           "its own tiles (a GEMV of 8 outputs a block under a softmax's "
           "row), nor where the tiles reading alike would compute it again "
           "in more than 2^20 iterations">,
    Option<"mapToBlocks", "map-to-blocks", "bool", "false",
           "Map each region's scf.forall to GPU blocks "
           "(#gpu.block<linear_dim_N>), so that a region of one tile stays a "
           "region (a kernel) instead of being folded into its function">,
    Option<"fuseIntoLoweredRegions", "fuse-into-lowered-regions", "bool",
           "false",
           "First fuse into each scf.forall already in the function (a region "
           "a special op was lowered in) the producers of the slices its body "
           "takes, as a root's region takes them: a GPU's delta rule kernel "
           "then normalises its head's q and k itself">,
    Option<"fuseThroughReshapes", "fuse-through-reshapes", "bool", "false",
           "Let a region (one lowered, or of a root that is not a "
           "contraction) take in the producer of a slice of a reshape too, "
           "where the slice is a box of the reshape's source: o_proj's GEMV "
           "then gathers an attention's heads itself, the delta rule its "
           "head's channels of the causal convolution">,
    Option<"fuseTileableProducers", "fuse-tileable-producers", "bool",
           "false",
           "Let a root's region take in a producer that is no linalg op but "
           "tiles (a routed product of a row per slot the lowering left: a "
           "decode's experts' down projection under the combination that "
           "weighs them), where no two of the region's tiles read the same "
           "part of it; it is lowered inside the region afterwards">,
    Option<"maxFusedTileBytes", "max-fused-tile-bytes", "int64_t", "0",
           "A producer whose tile has a constant bound above this many bytes "
           "stays out of the region (0: no limit): a GPU keeps a fused "
           "producer's tile in its block's shared memory, and a tensor-core "
           "product's 64 rows of a 4096-wide input would not fit">,
  ];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::gpu::GPUDialect",
    "mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"
  ];
}

def LinnetCodegenTileAndVectorize
    : Pass<"linnet-codegen-tile-and-vectorize", "mlir::func::FuncOp"> {
  let summary = "Tile each op to its configuration's reduction and vector "
                "tiles and vectorize it";
  let description = [{
    Every linalg op with a `linnet.lowering_config` is tiled with `scf.for`
    to its `reduction` sizes, then to its `vector` sizes (reduction loops
    innermost, so an accumulator stays in registers) and vectorized, masked
    where a size is dynamic. Then masks move into the transfers, multiply +
    reduce becomes `vector.contract`, accumulators are carried through their
    reduction loops, and a loop that folds every iteration's lanes into its
    accumulator (a dot product along a contiguous k) carries the unreduced
    lanes instead (FMAs) and reduces them once after the loop. The
    configurations are removed.
  }];
  let options = [
    Option<"vectorize", "vectorize", "bool", "true",
           "Vectorize the tiled operations (else they stay scalar loops)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::affine::AffineDialect",
    "mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "mlir::vector::VectorDialect"
  ];
}

def LinnetCodegenWriteStatesInPlace
    : Pass<"linnet-codegen-write-states-in-place", "mlir::func::FuncOp"> {
  let summary = "Compute a function's new states into the states' own "
                "arguments";
  let description = [{
    Runs after linnet-codegen-prepare. A result marked `linnet.state =
    "path"` (IR generation marks every state result) computed by a linalg op
    whose destination is a `tensor.empty` that its body does not read (as
    elementwise fusion leaves a state update written in destination-passing
    style) gets the argument marked with the same path as its destination
    instead, so that bufferization can update the state's buffer in place
    rather than compute a new one to be copied back on every call.

    With `copy-concatenations` a state updated by inserting a concatenation
    (pieces inserted into a `tensor.empty`: a key's rotated quarter and the
    rest, into its cache row at the position) gets the concatenation copied
    into the state's slice by an element-for-element `linalg.generic`, whose
    region (a target's, reading through concatenations) then computes the
    pieces itself, into the state; without it the concatenation is built in
    a buffer of its own and copied.
  }];
  let options = [
    Option<"copyConcatenations", "copy-concatenations", "bool", "false",
           "Copy a concatenation inserted into a state with a linalg op "
           "whose region computes its pieces into the state">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def LinnetCodegenParallelScatters
    : Pass<"linnet-codegen-parallel-scatters", "mlir::func::FuncOp"> {
  let summary = "Make a loop of inserts into places that differ in every "
                "iteration an scf.forall";
  let description = [{
    A write through index tensors is an `scf.for` over the indices with one
    `tensor.insert_slice` each, in order (two indices may name the same
    place). Where one offset of the insert is the loop's own index, with
    one element along that axis (an `arange` index: `index_cast` of an
    element of an `arange` generic is first read as the index itself), the
    places differ from one iteration to the next, and the loop, its body
    free of other memory effects, becomes an `scf.forall` of `shared_outs`
    the carried tensor: each iteration copies its slice into its place with
    a `linalg.copy` and inserts it with `tensor.parallel_insert_slice`. The
    forall is then a dispatch region as a lowering's are (a decode step's
    keys, each row at its own position: one kernel, not one a row).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def LinnetCodegenSliceProducers
    : Pass<"linnet-codegen-slice-producers", "mlir::func::FuncOp"> {
  let summary = "Compute each slice of a gather that its readers only slice "
                "as an op of its own";
  let description = [{
    A gather (a linalg op of parallel loops only whose body extracts
    elements of a tensor) whose every reader in its block takes a
    `tensor.extract_slice` of its result becomes one op a slice, each
    computing that slice alone (its tile by the op's TilingInterface, as
    fusion computes a producer's tile). What reads a slice then reads an op:
    the split of a prompt's routed gate and up products into halves no
    longer stands between their gather back into slot order and the SiLU
    product that reads both, so that dispatch regions fuse the gathers into
    its region. Other ops keep their slices, which regions read through
    where they may.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def LinnetCodegenVersionTails
    : Pass<"linnet-codegen-version-tails", "mlir::func::FuncOp"> {
  let summary = "Give the rest of a block both forms of a run-time choice";
  let description = [{
    A lowering that chooses between two forms of an op at run time (a
    routed product's grouped or per-slot form, by its slot count) marks its
    `scf.if` `linnet.form_choice`. The ops after such a choice, to its
    block's terminator, then go into both of its branches (moved into the
    first, copied into the second), the if yielding what the terminator
    took, and within each branch the choice's condition becomes the constant
    it is there. A later choice on the same condition (the mixture of
    experts' down projection after its gate and up projection) then folds,
    and what reads a form's result (the activation between the two
    products, the weighted sum of the slots) is in the same block as it,
    where dispatch regions fuse it and CSE shares the two products' sort.
    A choice whose condition is a constant is left to the canonicalizer.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def LinnetCodegenDropInPlaceResults
    : Pass<"linnet-codegen-drop-in-place-results", "mlir::ModuleOp"> {
  let summary = "Drop results that are their function's own arguments, "
                "updated in place, and write an entry's states into theirs";
  let description = [{
    Runs after bufferization, before the deallocation pipeline. A block
    function that writes a state (a KV cache, a recurrent state) returns the
    buffer it was given; the deallocation pipeline would copy such a result
    on every call, since the callee does not own it (a whole cache per
    token). Each such result of a private function (also through
    `memref.cast`) is dropped and its callers use the argument they passed;
    repeated until nothing changes, so that a chain of callees passing a
    state up loses it at every level. A public function's result marked
    `linnet.state = "path"` (an entry's new state, as IR generation marks
    it) is copied into the argument marked with the same path unless it is
    that buffer already, and dropped: entries update the state buffers they
    are given and return their other results only (the runtime's calling
    convention). Other results of public functions stay.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

#endif // LINNET_CODEGEN_PASSES
