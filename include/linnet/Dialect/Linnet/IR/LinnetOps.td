//===- LinnetOps.td - linnet operation definitions ---------*- tablegen -*-===//
//
// The operations of the linnet dialect. Each works on ranked tensors, does its
// arithmetic in f32 and rounds once to the element type; the verifiers compare
// the static dimensions that the typing rules of docs/language.md relate.
// The ops a target gives a kernel of its own (attention, the delta rule, the
// causal convolution) are tiled as ops: their TilingInterface splits the independent dimensions (rows,
// heads, value columns) and leaves each tile one op of the same kind.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_LINNET_IR_LINNETOPS_TD
#define LINNET_DIALECT_LINNET_IR_LINNETOPS_TD

include "linnet/Dialect/Linnet/IR/LinnetDialect.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/TilingInterface.td"

def Linnet_FloatTensor : RankedTensorOf<[Linnet_Float]>;
def Linnet_F32Tensor : RankedTensorOf<[F32]>;
def Linnet_I32Vector : TensorRankOf<[I32], [1]>;
// An op that bufferizes as an op (the delta rule, attention) takes buffers
// too.
def Linnet_FloatShaped : AnyTypeOf<[RankedTensorOf<[Linnet_Float]>,
                                    MemRefOf<[Linnet_Float]>]>;
def Linnet_F32Shaped : AnyTypeOf<[RankedTensorOf<[F32]>, MemRefOf<[F32]>]>;
def Linnet_I32VectorOrBuffer : AnyTypeOf<[TensorRankOf<[I32], [1]>,
                                          MemRefRankOf<[I32], [1]>]>;

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// TilingInterface methods the tileable ops implement.
defvar Linnet_TilingMethods = ["getLoopIteratorTypes", "getIterationDomain",
    "getTiledImplementation", "getResultTilePosition"];

def Linnet_AttentionOp : Linnet_Op<"attention", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<ConditionallySpeculatable>,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<TilingInterface, Linnet_TilingMethods>]> {
  let summary = "causal grouped-query softmax attention";
  let description = [{
    Computes causal softmax attention for a batch of rows. `query` is
    `[B, Hq, S, D]`, `key` is `[B, Hk, L, D]`, `value` is `[B, Hk, L, Dv]`;
    the result, written into the destination `init` (its values unread), is
    `[B, Hq, S, Dv]`, all of one float element type. Query `i` of row `b`
    sits at position `offset[b] + start + i` (`start`, 0 when absent, is
    where a tile of queries begins) and attends to the keys `j` with
    `j <= offset[b] + start + i`, `j < L` and, when `lengths` is given,
    `j < lengths[b]`. Query head `h` reads key/value head `h / (Hq / Hk)`.

    Scores `scale * sum_d q * k`, the softmax (the maximum over the allowed
    keys is subtracted) and the weighted sum of values are computed in f32;
    the result is rounded once to the element type. A query without any
    allowed key yields zeros.

    On tensors the op is pure and has one result. Bufferized (the CUDA
    target keeps a prompt's attention an op until its kernel's warps run
    it: `linnet-lower-to-linalg{keep-prompt-attention}`) its operands are
    buffers, it has no result and writes `init`.

    Tiling: the loops are `[B, Hq, S]`, all parallel. A tile of `h` query
    heads takes the key/value heads they read, so `h` must divide or be a
    multiple of the group `Hq / Hk`; a tile of queries takes every key and
    its `start`.

    Example:

    ```mlir
    %o = linnet.attention %q, %k, %v, %offset, %scale lengths %len
        into %init
        : (tensor<2x4x3x8xbf16>, tensor<2x2x5x8xbf16>, tensor<2x2x5x8xbf16>,
           tensor<2xi32>, f32, tensor<2xi32>, tensor<2x4x3x8xbf16>)
        -> tensor<2x4x3x8xbf16>
    ```
  }];
  let arguments = (ins Linnet_FloatShaped:$query, Linnet_FloatShaped:$key,
      Linnet_FloatShaped:$value, Linnet_I32VectorOrBuffer:$offset, F32:$scale,
      Optional<Linnet_I32VectorOrBuffer>:$lengths, Optional<Index>:$start,
      Linnet_FloatShaped:$init);
  let results = (outs Variadic<Linnet_FloatTensor>:$results);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $offset `,` $scale (`lengths` $lengths^)?
    (`from` $start^)? `into` $init
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The destination: `init`.
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    /// The result of the op on tensors.
    ::mlir::Value getOutput() { return getResults()[0]; }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// DeltaRuleOp
//===----------------------------------------------------------------------===//

def Linnet_DeltaRuleOp : Linnet_Op<"delta_rule", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<ConditionallySpeculatable>,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<TilingInterface, Linnet_TilingMethods>]> {
  let summary = "gated delta rule scan over a sequence";
  let description = [{
    Runs the gated delta rule (MODEL.md section 8.7) for every row `b` and
    head `n`, starting from the state `initial[b, n]` (`[K, V]`). `query` and
    `key` are `[B, S, N, K]`, `value` is `[B, S, N, V]`, `beta` and `gate` are
    `[B, S, N]`, `initial` is `[B, N, K, V]` and `lengths` is `[B]`; all
    floats are f32. The op is in destination-passing style: `output_init`
    (`[B, S, N, V]`, its values unread) and `initial` are the destinations of
    the two results, so the final state can be written over the initial one.
    For `t < lengths[b]`:

    ```
    St  = St * exp(gate[b, t, n])
    u   = beta[b, t, n] * (value[b, t, n] - St^T key[b, t, n])
    St  = St + key[b, t, n] u^T
    out[b, t, n] = St^T query[b, t, n]          // read after the update
    ```

    Later steps leave the state unchanged and output zeros. The second
    result is the state after the last step.

    On tensors the op is pure and has the two results. Bufferized (the CUDA
    target keeps a scan an op until a kernel's threads run it:
    `linnet-lower-to-linalg{keep-sequence-scans}`) its operands are buffers
    of the same shapes, it has no results, writes `output_init` and updates
    `initial` in place.

    Tiling: the loops are `[B, N, V]`, all parallel (each column of a state
    evolves on its own).

    Example:

    ```mlir
    %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %len
        outs(%empty, %init)
        : (tensor<2x5x3x4xf32>, tensor<2x5x3x4xf32>, tensor<2x5x3x6xf32>,
           tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2xi32>,
           tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
        -> (tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
    ```
  }];
  let arguments = (ins Linnet_F32Shaped:$query, Linnet_F32Shaped:$key,
      Linnet_F32Shaped:$value, Linnet_F32Shaped:$beta, Linnet_F32Shaped:$gate,
      Linnet_I32VectorOrBuffer:$lengths, Linnet_F32Shaped:$output_init,
      Linnet_F32Shaped:$initial);
  let results = (outs Variadic<Linnet_F32Tensor>:$results);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $beta `,` $gate `,` $lengths
    `outs` `(` $output_init `,` $initial `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The destinations: `output_init`, then `initial`.
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(getOperation(), 6, 2);
    }
    /// The results of the op on tensors.
    ::mlir::Value getOutput() { return getResults()[0]; }
    ::mlir::Value getFinalState() { return getResults()[1]; }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CausalConvOp
//===----------------------------------------------------------------------===//

def Linnet_CausalConvOp : Linnet_Op<"causal_conv", [Pure,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<TilingInterface, Linnet_TilingMethods>]> {
  let summary = "depthwise causal convolution with carried history";
  let description = [{
    Convolves every channel of `input` (`[B, S, C]`) with its own `W` taps
    (`taps` is `[C, W]`) over `xx = concat(history, input)` along the
    sequence axis, where `history` is `[B, W - 1, C]`:

    ```
    y[b, s, c] = sum_{w < W} taps[c, w] * xx[b, s + w, c]
    ```

    so `taps[:, W - 1]` weighs the current token. Products are accumulated
    in f32 and rounded once to the element type; there is no activation. The
    second result is the history for the next call: the `W - 1` rows of `xx`
    that end at row `lengths[b]` of `input` (`lengths[b]` clamped to
    `[0, S]`), i.e. `new_history[b, j] = xx[b, len_b + j]`.

    Tiling: the loops are `[B, C]`, both parallel.

    Example:

    ```mlir
    %y, %h = linnet.causal_conv %x, %taps, %hist, %len
        : (tensor<2x5x3xbf16>, tensor<3x4xbf16>, tensor<2x3x3xbf16>,
           tensor<2xi32>) -> (tensor<2x5x3xbf16>, tensor<2x3x3xbf16>)
    ```
  }];
  let arguments = (ins Linnet_FloatTensor:$input, Linnet_FloatTensor:$taps,
      Linnet_FloatTensor:$history, Linnet_I32Vector:$lengths);
  let results = (outs Linnet_FloatTensor:$output,
      Linnet_FloatTensor:$new_history);
  let assemblyFormat = [{
    $input `,` $taps `,` $history `,` $lengths
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ExpertMatmulOp
//===----------------------------------------------------------------------===//

def Linnet_ExpertMatmulOp : Linnet_Op<"expert_matmul", [Pure,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<TilingInterface,
        !listconcat(Linnet_TilingMethods, ["generateResultTileValue"])>]> {
  let summary = "matrix-vector products with per-row routed expert weights";
  let description = [{
    For every row `r` and slot `j`, multiplies the expert matrix
    `weights[experts[r, j]]` (`[Out, In]`) with the input vector: `input` is
    either `[R, In]` (one vector per row, shared by its `K` slots) or
    `[R, K, In]` (one vector per slot). `weights` is `[X, Out, In]`,
    `experts` is `[R, K]` of i32 and the result is `[R, K, Out]`:

    ```
    y[r, j, o] = sum_i weights[experts[r, j], o, i] * input[r, (j,) i]
    ```

    accumulated in f32 and rounded once. An expert id outside `[0, X)`
    yields a zero row; it is never read out of bounds.

    Tiling: the loops are `[R, K, Out]`, all parallel; a tile reads its
    rows' (and slots') input and expert ids and its `Out` rows of every
    expert's weights, whole along `In`.

    Example:

    ```mlir
    %y = linnet.expert_matmul %x, %w, %ids
        : (tensor<3x16xbf16>, tensor<8x32x16xbf16>, tensor<3x2xi32>)
        -> tensor<3x2x32xbf16>
    ```
  }];
  let arguments = (ins Linnet_FloatTensor:$input, Linnet_FloatTensor:$weights,
      TensorRankOf<[I32], [2]>:$experts);
  let results = (outs Linnet_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weights `,` $experts
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  // An operand cast to a less static type (a decode's row passed to a
  // mixture of experts written for any rows, then inlined) is read uncast.
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// TopKOp
//===----------------------------------------------------------------------===//

def Linnet_TopKOp : Linnet_Op<"topk", [Pure,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<TilingInterface, Linnet_TilingMethods>]> {
  let summary = "the k largest elements along the last axis";
  let description = [{
    Returns the `k` largest elements of every slice along the last axis of
    `input` (`[..., N]`), in descending order, and their indices (i32).
    Equal elements come in order of increasing index; NaN counts as larger
    than every number. Requires `1 <= k <= N`.

    Tiling: the loops are the leading axes (all but the last), parallel.

    Example:

    ```mlir
    %values, %indices = linnet.topk %logits {k = 8 : i64}
        : tensor<4x256xf32> -> tensor<4x8xf32>, tensor<4x8xi32>
    ```
  }];
  let arguments = (ins Linnet_FloatTensor:$input,
      ConfinedAttr<I64Attr, [IntPositive]>:$k);
  let results = (outs Linnet_FloatTensor:$values,
      RankedTensorOf<[I32]>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RankOp
//===----------------------------------------------------------------------===//

def Linnet_RankOp : Linnet_Op<"rank", [Pure,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<TilingInterface, Linnet_TilingMethods>]> {
  let summary = "descending rank of every element along the last axis";
  let description = [{
    For every element of `input` (`[..., N]`), counts the elements of its
    slice along the last axis that are strictly greater, plus the equal ones
    at a lower index: 0 marks the largest element, and the ranks of a slice
    are a permutation of `0 .. N - 1`. NaN counts as larger than every
    number.

    Tiling: the loops are the leading axes (all but the last), parallel.

    Example:

    ```mlir
    %r = linnet.rank %scores : tensor<4x256xf32> -> tensor<4x256xi32>
    ```
  }];
  let arguments = (ins Linnet_FloatTensor:$input);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GridWaitOp
//===----------------------------------------------------------------------===//

def Linnet_GridWaitOp : Linnet_Op<"grid_wait",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "every block of a kernel waits for all the others";
  let description = [{
    A wait across the grid, at the top level of a `gpu.launch`'s body (or of
    an outlined kernel's): no block goes past it before every block of the
    launch has reached it, and what any block wrote before it is seen by
    every block after it. linnet-cuda-chain-launches puts one between the
    phases of a chained kernel (dependent kernels run as one launch whose
    blocks are all resident at once); the emulated device runs the stretches
    between waits as launches of their own; linnet-cuda-lower-grid-waits
    makes each an arrival on a counter of the kernel and a poll of it.

    Example:

    ```mlir
    linnet.grid_wait
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

#endif // LINNET_DIALECT_LINNET_IR_LINNETOPS_TD
