// Every linnet op is tiled as an op (TilingInterface): a tile is the same op
// on slices of the operands. The delta rule's loops are rows,
// heads and value columns, its state tile a destination taken from the
// loop's shared output (so the state is updated in place); attention's are
// rows and query heads, a tile of query heads taking the key/value heads its
// group reads; the convolution's are rows and channels; the expert matmul's
// rows, slots and output columns; top-k's and rank's the leading axes.
// RUN: linnet-opt %s --transform-interpreter --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @delta_rule
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x?x4x8xf32>, {{.*}} %[[INIT:[^:]+]]: tensor<2x4x8x16xf32>, %[[LEN:[^:]+]]: tensor<2xi32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty
// CHECK: scf.forall (%[[B:.*]], %[[N:.*]], %[[V:.*]]) in (2, 2, 2) shared_outs(%[[OUT:.*]] = %[[EMPTY]], %[[STATE:.*]] = %[[INIT]])
// CHECK-DAG: %[[N0:.*]] = affine.apply #{{.*}}(%[[N]])
// CHECK-DAG: %[[V0:.*]] = affine.apply #{{.*}}(%[[V]])
// CHECK: tensor.extract_slice %[[Q]][%[[B]], 0, %[[N0]], 0] [1, %{{.*}}, 2, 8]
// CHECK: tensor.extract_slice %[[LEN]][%[[B]]] [1] [1]
// CHECK: %[[OUT_T:.*]] = tensor.extract_slice %[[OUT]][%[[B]], 0, %[[N0]], %[[V0]]] [1, %{{.*}}, 2, 8]
// CHECK: %[[STATE_T:.*]] = tensor.extract_slice %[[STATE]][%[[B]], %[[N0]], 0, %[[V0]]] [1, 2, 8, 8]
// CHECK: %[[O:.*]], %[[F:.*]] = linnet.delta_rule {{.*}} outs(%[[OUT_T]], %[[STATE_T]]) : {{.*}} -> (tensor<1x?x2x8xf32>, tensor<1x2x8x8xf32>)
// CHECK: tensor.parallel_insert_slice %[[O]] into %[[OUT]][%[[B]], 0, %[[N0]], %[[V0]]]
// CHECK: tensor.parallel_insert_slice %[[F]] into %[[STATE]][%[[B]], %[[N0]], 0, %[[V0]]] [1, 2, 8, 8]
func.func @delta_rule(%q: tensor<2x?x4x8xf32>, %k: tensor<2x?x4x8xf32>,
                      %v: tensor<2x?x4x16xf32>, %beta: tensor<2x?x4xf32>,
                      %g: tensor<2x?x4xf32>, %init: tensor<2x4x8x16xf32>,
                      %lengths: tensor<2xi32>)
    -> (tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>) {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : tensor<2x?x4x8xf32>
  %empty = tensor.empty(%s) : tensor<2x?x4x16xf32>
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%empty, %init)
      : (tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x4x16xf32>,
         tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2xi32>,
         tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>)
      -> (tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>)
  return %out, %final : tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linnet.delta_rule"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes [1, 2, 8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Hq = 8 over Hk = 2: a group of 4. Tiles of 2 query heads from h read one
// key head, h floordiv 4; tiles of 8 read both.
// CHECK: #[[QUARTER:.*]] = affine_map<()[s0] -> (s0 floordiv 4)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x?x16xbf16>, %[[K:[^:]+]]: tensor<2x2x32x16xbf16>, %[[V:[^:]+]]: tensor<2x2x32x8xbf16>, %[[OFF:[^:]+]]: tensor<2xi32>, %[[SCALE:[^:]+]]: f32, %[[LEN:[^:]+]]: tensor<2xi32>)
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]]) in (2, 4) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[H0:.*]] = affine.apply #{{.*}}(%[[H]])
// CHECK: %[[KH:.*]] = affine.apply #[[QUARTER]]()[%[[H0]]]
// CHECK: %[[QT:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H0]], 0, 0] [1, 2, %{{.*}}, 16]
// CHECK: %[[KT:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[KH]], 0, 0] [1, 1, 32, 16]
// CHECK: %[[VT:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[KH]], 0, 0] [1, 1, 32, 8]
// CHECK: %[[OT:.*]] = tensor.extract_slice %[[OFF]][%[[B]]] [1] [1]
// CHECK: %[[LT:.*]] = tensor.extract_slice %[[LEN]][%[[B]]] [1] [1]
// CHECK: %[[IT:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H0]], 0, 0] [1, 2, %{{.*}}, 8]
// CHECK: %[[A:.*]] = linnet.attention %[[QT]], %[[KT]], %[[VT]], %[[OT]], %[[SCALE]] lengths %[[LT]] into %[[IT]] {tile = 2 : i64} : {{.*}} -> tensor<1x2x?x8xbf16>
// CHECK: tensor.parallel_insert_slice %[[A]] into %[[OUT]][%[[B]], %[[H0]], 0, 0] [1, 2, %{{.*}}, 8]
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 1) shared_outs
// CHECK: tensor.extract_slice %[[K]][%{{.*}}, %{{.*}}, 0, 0] [1, 2, 32, 16]
// CHECK: linnet.attention {{.*}} -> tensor<1x8x?x8xbf16>
func.func @attention(%q: tensor<2x8x?x16xbf16>, %k: tensor<2x2x32x16xbf16>,
                     %v: tensor<2x2x32x8xbf16>, %off: tensor<2xi32>,
                     %scale: f32, %len: tensor<2xi32>)
    -> (tensor<2x8x?x8xbf16>, tensor<2x8x?x8xbf16>) {
  %init_o_c2 = arith.constant 2 : index
  %init_o_d2 = tensor.dim %q, %init_o_c2 : tensor<2x8x?x16xbf16>
  %init_o = tensor.empty(%init_o_d2) : tensor<2x8x?x8xbf16>
  %o = linnet.attention %q, %k, %v, %off, %scale lengths %len into %init_o {tile = 2}
      : (tensor<2x8x?x16xbf16>, tensor<2x2x32x16xbf16>, tensor<2x2x32x8xbf16>,
         tensor<2xi32>, f32, tensor<2xi32>, tensor<2x8x?x8xbf16>) -> tensor<2x8x?x8xbf16>
  %init_o8_c2 = arith.constant 2 : index
  %init_o8_d2 = tensor.dim %q, %init_o8_c2 : tensor<2x8x?x16xbf16>
  %init_o8 = tensor.empty(%init_o8_d2) : tensor<2x8x?x8xbf16>
  %o8 = linnet.attention %q, %k, %v, %off, %scale lengths %len into %init_o8 {tile = 8}
      : (tensor<2x8x?x16xbf16>, tensor<2x2x32x16xbf16>, tensor<2x2x32x8xbf16>,
         tensor<2xi32>, f32, tensor<2xi32>, tensor<2x8x?x8xbf16>) -> tensor<2x8x?x8xbf16>
  return %o, %o8 : tensor<2x8x?x8xbf16>, tensor<2x8x?x8xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %two = transform.structured.match ops{["linnet.attention"]} attributes {tile = 2} in %root : (!transform.any_op) -> !transform.any_op
    %t2, %l2 = transform.structured.tile_using_forall %two tile_sizes [1, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %eight = transform.structured.match ops{["linnet.attention"]} attributes {tile = 8} in %root : (!transform.any_op) -> !transform.any_op
    %t8, %l8 = transform.structured.tile_using_forall %eight tile_sizes [1, 8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A tile of queries: 16 of the 40 from s on, positioned from `start` s (the
// keys stay whole; the output's tile is the queries').
// CHECK-LABEL: func.func @attention_queries
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[S:.*]]) in (2, 1, 3) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[S0:.*]] = affine.apply #{{.*}}(%[[S]])
// CHECK: %[[N:.*]] = affine.min
// CHECK: %[[QT:.*]] = tensor.extract_slice %{{.*}}[%[[B]], %{{.*}}, %[[S0]], 0] [1, 8, %[[N]], 16]
// CHECK: tensor.extract_slice %{{.*}}[%[[B]], %{{.*}}, 0, 0] [1, 2, 32, 16]
// CHECK: %[[IT:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %{{.*}}, %[[S0]], 0] [1, 8, %[[N]], 8]
// CHECK: linnet.attention %[[QT]], {{.*}} from %[[S0]] into %[[IT]]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[B]], %{{.*}}, %[[S0]], 0] [1, 8, %[[N]], 8]
func.func @attention_queries(%q: tensor<2x8x40x16xbf16>, %k: tensor<2x2x32x16xbf16>,
                             %v: tensor<2x2x32x8xbf16>, %off: tensor<2xi32>,
                             %scale: f32) -> tensor<2x8x40x8xbf16> {
  %init = tensor.empty() : tensor<2x8x40x8xbf16>
  %o = linnet.attention %q, %k, %v, %off, %scale into %init
      : (tensor<2x8x40x16xbf16>, tensor<2x2x32x16xbf16>, tensor<2x2x32x8xbf16>,
         tensor<2xi32>, f32, tensor<2x8x40x8xbf16>) -> tensor<2x8x40x8xbf16>
  return %o : tensor<2x8x40x8xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linnet.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 8, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A tile of 3 query heads would split a group of 4 across tiles.
func.func @attention_tile_splits_group(%q: tensor<1x8x4x16xf32>, %k: tensor<1x2x32x16xf32>,
                                       %v: tensor<1x2x32x16xf32>, %off: tensor<1xi32>,
                                       %scale: f32) -> tensor<1x8x4x16xf32> {
  %init_o = tensor.empty() : tensor<1x8x4x16xf32>
  // expected-error @+4 {{cannot be tiled by 3 query heads: a tile must divide or be a multiple of the group of 4}}
  // expected-error @+3 {{to tile operation}}
  // expected-error @+2 {{failed to generate tiling loops}}
  // expected-note @+1 {{when applied to this op}}
  %o = linnet.attention %q, %k, %v, %off, %scale into %init_o
      : (tensor<1x8x4x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>,
         tensor<1xi32>, f32, tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32>
  return %o : tensor<1x8x4x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linnet.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [1, 3] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// CHECK-LABEL: func.func @causal_conv
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x?x6xf32>, %[[TAPS:[^:]+]]: tensor<6x4xf32>, %[[HIST:[^:]+]]: tensor<2x3x6xf32>, %[[LEN:[^:]+]]: tensor<2xi32>)
// CHECK: scf.forall (%[[B:.*]], %[[C:.*]]) in (2, 2) shared_outs(%[[Y:.*]] = %{{.*}}, %[[H:.*]] = %{{.*}})
// CHECK: %[[C0:.*]] = affine.apply #{{.*}}(%[[C]])
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%[[B]], 0, %[[C0]]] [1, %{{.*}}, 3]
// CHECK: %[[TT:.*]] = tensor.extract_slice %[[TAPS]][%[[C0]], 0] [3, 4]
// CHECK: %[[HT:.*]] = tensor.extract_slice %[[HIST]][%[[B]], 0, %[[C0]]] [1, 3, 3]
// CHECK: %[[LT:.*]] = tensor.extract_slice %[[LEN]][%[[B]]] [1] [1]
// CHECK: %[[O:.*]], %[[N:.*]] = linnet.causal_conv %[[XT]], %[[TT]], %[[HT]], %[[LT]] : {{.*}} -> (tensor<1x?x3xf32>, tensor<1x3x3xf32>)
// CHECK: tensor.parallel_insert_slice %[[O]] into %[[Y]][%[[B]], 0, %[[C0]]] [1, %{{.*}}, 3]
// CHECK: tensor.parallel_insert_slice %[[N]] into %[[H]][%[[B]], 0, %[[C0]]] [1, 3, 3]
func.func @causal_conv(%x: tensor<2x?x6xf32>, %taps: tensor<6x4xf32>,
                       %hist: tensor<2x3x6xf32>, %len: tensor<2xi32>)
    -> (tensor<2x?x6xf32>, tensor<2x3x6xf32>) {
  %y, %h = linnet.causal_conv %x, %taps, %hist, %len
      : (tensor<2x?x6xf32>, tensor<6x4xf32>, tensor<2x3x6xf32>, tensor<2xi32>)
      -> (tensor<2x?x6xf32>, tensor<2x3x6xf32>)
  return %y, %h : tensor<2x?x6xf32>, tensor<2x3x6xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linnet.causal_conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes [1, 3] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// The expert matmul's loops are rows, slots and output columns: a tile reads
// its rows' input (shared by the slots here), its rows' and slots' expert
// ids, and its output columns of every expert's weights, whole along In.
// CHECK-LABEL: func.func @expert_matmul
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x16xf32>, %[[W:[^:]+]]: tensor<8x32x16xf32>, %[[IDS:[^:]+]]: tensor<?x2xi32>)
// CHECK: scf.forall (%[[R:.*]], %[[J:.*]], %[[O:.*]]) in (%{{.*}}, 2, 4) shared_outs(%[[Y:.*]] = %{{.*}})
// CHECK-DAG: %[[R0:.*]] = affine.apply #{{.*}}(%[[R]])
// CHECK-DAG: %[[O0:.*]] = affine.apply #{{.*}}(%[[O]])
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%[[R0]], 0] [%{{.*}}, 16]
// CHECK: %[[WT:.*]] = tensor.extract_slice %[[W]][0, %[[O0]], 0] [8, 8, 16]
// CHECK: %[[IT:.*]] = tensor.extract_slice %[[IDS]][%[[R0]], %[[J]]] [%{{.*}}, 1]
// CHECK: %[[T:.*]] = linnet.expert_matmul %[[XT]], %[[WT]], %[[IT]] : (tensor<?x16xf32>, tensor<8x8x16xf32>, tensor<?x1xi32>) -> tensor<?x1x8xf32>
// CHECK: tensor.parallel_insert_slice %[[T]] into %[[Y]][%[[R0]], %[[J]], %[[O0]]] [%{{.*}}, 1, 8]
// Per-slot input: its slot axis is tiled too.
// CHECK-LABEL: func.func @expert_matmul_per_slot
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}, 0] [%{{.*}}, 1, 16]
// CHECK: linnet.expert_matmul {{.*}} : (tensor<?x1x16xf32>, tensor<8x8x16xf32>, tensor<?x1xi32>) -> tensor<?x1x8xf32>
func.func @expert_matmul(%x: tensor<?x16xf32>, %w: tensor<8x32x16xf32>, %ids: tensor<?x2xi32>)
    -> tensor<?x2x32xf32> {
  %y = linnet.expert_matmul %x, %w, %ids
      : (tensor<?x16xf32>, tensor<8x32x16xf32>, tensor<?x2xi32>) -> tensor<?x2x32xf32>
  return %y : tensor<?x2x32xf32>
}
func.func @expert_matmul_per_slot(%x: tensor<?x2x16xf32>, %w: tensor<8x32x16xf32>, %ids: tensor<?x2xi32>)
    -> tensor<?x2x32xf32> {
  %y = linnet.expert_matmul %x, %w, %ids
      : (tensor<?x2x16xf32>, tensor<8x32x16xf32>, tensor<?x2xi32>) -> tensor<?x2x32xf32>
  return %y : tensor<?x2x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linnet.expert_matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes [2, 1, 8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
}

// -----

// Top-k and rank loop over the leading axes; a tile takes whole rows.
// CHECK-LABEL: func.func @topk
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x?x16xf32>)
// CHECK: scf.forall (%[[A:.*]], %[[B:.*]]) in (2, %{{.*}}) shared_outs(%[[V:.*]] = %{{.*}}, %[[I:.*]] = %{{.*}})
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%{{.*}}, %[[B]], 0] [2, 1, 16]
// CHECK: %[[TV:.*]], %[[TI:.*]] = linnet.topk %[[XT]] {k = 3 : i64} : tensor<2x1x16xf32> -> tensor<2x1x3xf32>, tensor<2x1x3xi32>
// CHECK: tensor.parallel_insert_slice %[[TV]] into %[[V]][%{{.*}}, %[[B]], 0] [2, 1, 3]
// CHECK: tensor.parallel_insert_slice %[[TI]] into %[[I]][%{{.*}}, %[[B]], 0] [2, 1, 3]
// CHECK-LABEL: func.func @rank
// CHECK: scf.forall (%{{.*}}) in (3) shared_outs
// CHECK: linnet.rank %{{.*}} : tensor<2x16xf32> -> tensor<2x16xi32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0] [2, 16]
func.func @topk(%x: tensor<4x?x16xf32>) -> (tensor<4x?x3xf32>, tensor<4x?x3xi32>) {
  %v, %i = linnet.topk %x {k = 3 : i64}
      : tensor<4x?x16xf32> -> tensor<4x?x3xf32>, tensor<4x?x3xi32>
  return %v, %i : tensor<4x?x3xf32>, tensor<4x?x3xi32>
}
func.func @rank(%x: tensor<6x16xf32>) -> tensor<6x16xi32> {
  %r = linnet.rank %x : tensor<6x16xf32> -> tensor<6x16xi32>
  return %r : tensor<6x16xi32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %topk = transform.structured.match ops{["linnet.topk"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %topk tile_sizes [2, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %rank = transform.structured.match ops{["linnet.rank"]} in %root : (!transform.any_op) -> !transform.any_op
    %r, %m = transform.structured.tile_using_forall %rank tile_sizes [2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
