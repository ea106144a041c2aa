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
    `tensor.extract` inside generic bodies, one `scf.for` for the sequential
    scan of `linnet.delta_rule`, and one over blocks of
    `attention-key-block` keys for `linnet.attention` (flash-style: an
    online softmax that rescales the earlier blocks' sums, so its scores
    take a block of keys per query instead of the whole cache;
    `attention-prompt-key-block` sets the block where there are several
    queries, a prompt's, whose every block rescales all their sums).
    Afterwards
    no linnet operation is left; the pass fails if one cannot be lowered.

    With `expert-output-tile=N` a routed matmul with a product per slot
    (`linnet.expert_matmul` with few slots: a decode) splits each product
    into N outputs per iteration of its forall (an expert's output size a
    multiple of N), so that a GPU runs a decode's 8 slots as 8 x O / N
    blocks instead of 8; the grouped form's tiles likewise.

    With `expert-group-rows=N` the grouped form of a routed matmul (many
    slots: a prompt) sorts the slots into tiles of N rows of one expert
    (8 by default, the CPU's; a GPU's tensor cores want 64), and with
    `expert-output-tile` each tile's product is split into that many
    outputs per iteration of its forall as the per-slot form's is, so that
    a block holds a tile of the product, not an expert's whole output;
    `expert-group-output-tile` sets that split for tiles of
    `expert-group-rows` rows alone (a prompt's; a decode's of static
    slots few an expert, in smaller tiles, keep `expert-output-tile`).

    With `expert-grouped-slots=X` a routed matmul takes the grouped form
    from X slots an expert on average (4 by default, the CPU's: a prompt;
    a GPU's decode of 16 rows or more pays from 0.5), and with
    `expert-parallel-sort` that form sorts its slots with parallel linalg
    ops (each element a sum or search over a chunk of 256 slots, the
    chunks or the experts: kernels on a GPU, where the loops over slots
    would run on the host and wait for the device). Where the slots are
    static and fewer an expert than `expert-group-rows`, a tile has the
    power of two at or above the average slots an expert, at least 16.

    With `keep-slot-products` a routed matmul that takes a row per slot,
    of static sizes and few slots (a decode's down projection of its
    experts), is left where it is, so that the region of the combination
    that weighs its slots can take in a tile of it (each block the slots of
    its outputs); with `slot-loops-in-regions` such a product inside a region
    is lowered as loops over its rows and slots there, one product each.

    With `keep-tileable` the ops that are tiled as ops (those implementing
    TilingInterface: every linnet op) are left for a target's Codegen to put
    into dispatch regions first; the pass then lowers each tile where it is
    (and each op the target gave no region, where it is).

    With `attention-rounded-weights` a prompt's attention keeps its masked
    scores in the values' element type (as HF's bf16 product of q and k)
    and rounds its weights (the softmax's numerators) to it before they
    multiply the values, as HF rounds its softmax: with bf16 values a
    product of two bf16 operands, for a GPU's tensor cores (the block sums
    add the rounded weights), and half the bytes for the scores.

    With `keep-sequence-scans` every delta rule (a prompt's scan over a
    run-time number of tokens, a decode step's of one) is left as it is,
    for a target that runs its scan with code of its own (the CUDA target's
    warp scan, in its kernel's threads, after bufferization).

    With `keep-prompt-attention` an attention inside a dispatch region
    (an `scf.forall`) whose lowering configuration tiles its queries (a
    prompt's tile of queries, which a target tiles so only where it runs
    the tile with a kernel of its own: the CUDA target's tensor-core
    attention, after bufferization) is left as it is; any other is
    lowered.
  }];
  let options = [
    Option<"attentionKeyBlock", "attention-key-block", "int64_t", "256",
           "Keys per block of attention's online softmax">,
    Option<"attentionPromptKeyBlock", "attention-prompt-key-block",
           "int64_t", "0",
           "Keys per block where attention has several queries (a "
           "prompt's); 0: attention-key-block">,
    Option<"attentionRoundedWeights", "attention-rounded-weights", "bool",
           "false",
           "Keep a prompt's attention scores and weights in the values' "
           "element type">,
    Option<"keepTileable", "keep-tileable", "bool", "false",
           "Leave the linnet ops that implement TilingInterface">,
    Option<"expertOutputTile", "expert-output-tile", "int64_t", "0",
           "Outputs of a routed matmul's product per slot in one iteration "
           "of its forall (0: all of an expert's)">,
    Option<"expertGroupRows", "expert-group-rows", "int64_t", "8",
           "Rows of one tile of a routed matmul's grouped form (slots "
           "sorted by expert)">,
    Option<"expertGroupOutputTile", "expert-group-output-tile", "int64_t",
           "0",
           "Outputs of a grouped form's tile of expert-group-rows rows in "
           "one iteration of its forall (0: expert-output-tile)">,
    Option<"expertGroupedSlots", "expert-grouped-slots", "double", "4",
           "Slots an expert, on average, from which a routed matmul takes "
           "the grouped form">,
    Option<"expertParallelSort", "expert-parallel-sort", "bool", "false",
           "Sort the grouped form's slots with parallel linalg ops">,
    Option<"keepSlotProducts", "keep-slot-products", "bool", "false",
           "Leave a routed matmul of a row per slot, static and of few "
           "slots, for its consumer's region">,
    Option<"slotLoopsInRegions", "slot-loops-in-regions", "bool", "false",
           "Lower a routed matmul inside a region as loops over its slots">,
    Option<"keepSequenceScans", "keep-sequence-scans", "bool", "false",
           "Leave every delta rule for the target's own scan">,
    Option<"keepPromptAttention", "keep-prompt-attention", "bool", "false",
           "Leave a prompt's attention inside a dispatch region for the "
           "target's own kernel">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // LINNET_CONVERSION_PASSES_TD
