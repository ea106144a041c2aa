// linnet-codegen-form-dispatch-regions: a product (a contraction) of a
// run-time row count takes in the producer of an input where no two of its
// tiles read the same part of it, in a tile of a bound: the weighted sum of
// a prompt's routed experts' slots computes their gather back into slot
// order itself. A product whose tiles share an input's rows, or one kept in
// registers (a tensor-core product, which reads its inputs from memory),
// takes in only its accumulator's producer. Configurations pinned.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks max-fused-tile-bytes=24576}))" | FileCheck %s

#gatherCfg = #linnet.lowering_config<thread = [1, 1, 256], reduction = [0, 0, 0], vector = [0, 0, 0]>
#sumCfg = #linnet.lowering_config<thread = [1, 0, 256], reduction = [0, 0, 0], vector = [0, 0, 0]>
#fillCfg = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>
#rowCfg = #linnet.lowering_config<thread = [1, 64], reduction = [0, 0], vector = [0, 0]>
#productCfg = #linnet.lowering_config<thread = [1, 8, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>

// The gather reads each sorted row's 256 outputs; the sum of the 2 slots
// weighted, a row's 256 outputs a block, reads each gathered element once:
// one region, the gather and the fill in it.
// CHECK-LABEL: func.func @weighted_gather(
// CHECK-SAME: %[[ROWS:[^:]+]]: tensor<?x2xi32>, %[[SORTED:[^:]+]]: tensor<?x256xbf16>
// CHECK: scf.forall (%[[R:.+]], %[[O:.+]]) = (0, 0) to (%{{.+}}, 256) step (1, 256)
// CHECK: tensor.extract_slice %[[ROWS]][%[[R]], 0] [1, 2] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<1x2x256xbf16>)
// CHECK: tensor.extract %[[SORTED]]
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<1x256xf32>)
// CHECK: "reduction"
// CHECK-NOT: scf.forall (
func.func @weighted_gather(%rows: tensor<?x2xi32>, %sorted: tensor<?x256xbf16>, %w: tensor<?x2xbf16>) -> tensor<?x256xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : bf16
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %rows, %c0 : tensor<?x2xi32>
  %e = tensor.empty(%n) : tensor<?x2x256xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rows : tensor<?x2xi32>) outs(%e : tensor<?x2x256xbf16>) attrs = {linnet.lowering_config = #gatherCfg} {
  ^bb0(%in: i32, %out: bf16):
    %i = arith.index_cast %in : i32 to index
    %p = arith.cmpi sge, %i, %c0 : index
    %s = arith.select %p, %i, %c0 : index
    %o = linalg.index 2 : index
    %x = tensor.extract %sorted[%s, %o] : tensor<?x256xbf16>
    %y = arith.select %p, %x, %cst : bf16
    linalg.yield %y : bf16
  } -> tensor<?x2x256xbf16>
  %e2 = tensor.empty(%n) : tensor<?x256xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e2 : tensor<?x256xf32>) attrs = {linnet.lowering_config = #fillCfg} {
  ^bb0(%out: f32):
    linalg.yield %zero : f32
  } -> tensor<?x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g, %w : tensor<?x2x256xbf16>, tensor<?x2xbf16>) outs(%f : tensor<?x256xf32>) attrs = {linnet.lowering_config = #sumCfg} {
  ^bb0(%in: bf16, %in2: bf16, %out: f32):
    %a = arith.extf %in : bf16 to f32
    %b = arith.extf %in2 : bf16 to f32
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x256xf32>
  return %r : tensor<?x256xf32>
}

// A product of 16 outputs, 8 a block: its two blocks of a row read the
// same input row, which stays a region of its own; so it does for the same
// product kept in registers even with one block a row.
// CHECK-LABEL: func.func @shared_rows(
// CHECK: scf.forall
// CHECK: math.exp
// CHECK: scf.forall
// CHECK-NOT: math.exp
// CHECK-LABEL: func.func @kept_in_registers(
// CHECK: scf.forall
// CHECK: math.exp
// CHECK: scf.forall
// CHECK-NOT: math.exp
func.func @shared_rows(%x: tensor<?x64xf32>, %m: tensor<16x64xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %act = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) attrs = {linnet.lowering_config = #rowCfg} {
  ^bb0(%in: f32, %out: f32):
    %a = math.exp %in : f32
    linalg.yield %a : f32
  } -> tensor<?x64xf32>
  %e2 = tensor.empty(%n) : tensor<?x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%act, %m : tensor<?x64xf32>, tensor<16x64xf32>) outs(%f : tensor<?x16xf32>) attrs = {linnet.lowering_config = #productCfg} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %a = arith.mulf %in, %in2 : f32
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}
func.func @kept_in_registers(%x: tensor<?x64xf32>, %m: tensor<8x64xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %act = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) attrs = {linnet.lowering_config = #rowCfg} {
  ^bb0(%in: f32, %out: f32):
    %a = math.exp %in : f32
    linalg.yield %a : f32
  } -> tensor<?x64xf32>
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%act, %m : tensor<?x64xf32>, tensor<8x64xf32>) outs(%f : tensor<?x8xf32>) attrs = {linnet.lowering_config = #productCfg, linnet.result_in_registers} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %a = arith.mulf %in, %in2 : f32
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
