// Runs the lowering of linnet.expert_matmul on the CPU and compares it with
// the numpy reference in Inputs/expert_matmul.py.
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
//
// Tolerance, f32: 1e-5 absolute plus 1e-4 relative (inputs differ by about
// 1e-7 between f32 here and f64 in numpy; printing keeps six digits).
// bf16: 1e-5 relative, i.e. the same bf16 value: numpy rounds its f64 sum
// once to bf16 like the lowering rounds its f32 sum, and for these inputs no
// sum is close enough to a rounding tie for the two to differ (a wrong
// rounding would show up as a 2^-8 relative error).

// R = 3 rows, K = 2 slots, In = 5, Out = 4, X = 3 experts; expert ids 3 and
// -1 are out of range and give zero rows. Static rows take the form with one
// matrix-vector product per slot; dynamic rows the grouped form (slots sorted
// by expert into tiles of 8), here also with 13 rows, so that experts span
// several tiles and leave padding in their last.
// With expert-output-tile=2 (the CUDA target's form with 64) each product
// per slot is split into 2 outputs per iteration of the forall (Out = 4: 2
// iterations), the same results:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-output-tile=2" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-output-tile=2" \
// RUN:   | FileCheck %s --check-prefix=SPLIT
// SPLIT: scf.forall ({{.*}}) in (3, 2, 2)
// SPLIT: tensor.extract_slice {{.*}} [1, 2, 5] [1, 1, 1] : tensor<3x4x5xf32> to tensor<2x5xf32>
// RUN: cat %s %S/Inputs/generators.mlir | not linnet-opt --linnet-lower-to-linalg="expert-output-tile=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: expert-output-tile must be 0 or more
// With expert-group-rows=3 as well (the CUDA target's decode form with tiles
// of 16 rows and 64 outputs) the grouped form sorts the slots into tiles of 3 rows, and
// each tile's product is 2 outputs an iteration, the same results:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-output-tile=2 expert-group-rows=3" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-output-tile=2 expert-group-rows=3" \
// RUN:   | FileCheck %s --check-prefix=GROUPED
// GROUPED: scf.forall ({{.*}}, {{.*}}) in (%{{.*}}, 2) shared_outs({{.*}}) -> (tensor<?x4xf32>)
// GROUPED: tensor.extract_slice {{.*}} [1, 2, 5] [1, 1, 1] : tensor<3x4x5xf32> to tensor<2x5xf32>
// GROUPED: tensor.extract_slice {{.*}} [3, 5] [1, 1] : tensor<?x5xf32> to tensor<3x5xf32>
// GROUPED: linalg.generic {{.*}} ins({{.*}} : tensor<3x5xf32>, tensor<2x5xf32>) outs({{.*}} : tensor<3x2xf32>)
// With expert-group-output-tile=2 and expert-group-rows=3 (the CUDA
// target's form with 128 and 128: a prompt's tiles wider than a decode's)
// only the grouped form's tiles of 3 rows take 2 outputs an iteration, the
// products per slot all 4 of theirs, the same results:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-group-output-tile=2 expert-group-rows=3" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-group-output-tile=2 expert-group-rows=3" \
// RUN:   | FileCheck %s --check-prefix=GROUP-TILE
// GROUP-TILE: scf.forall ({{.*}}) in (3, 2) shared_outs({{.*}}) -> (tensor<3x2x4xf32>)
// GROUP-TILE: scf.forall ({{.*}}, {{.*}}) in (%{{.*}}, 2) shared_outs({{.*}}) -> (tensor<?x4xf32>)
// RUN: cat %s %S/Inputs/generators.mlir | not linnet-opt --linnet-lower-to-linalg="expert-group-output-tile=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE-GROUP-TILE
// NEGATIVE-GROUP-TILE: error: expert-group-output-tile must be 0 or more
// With expert-parallel-sort (the CUDA target's) the grouped form sorts the
// slots with parallel linalg ops, no loop over them; with
// expert-grouped-slots=0 the static rows take that form too (3 x 2 slots
// over 3 experts: tiles of min(8, 16) rows), and with 3 rows a tile and 2
// outputs an iteration, the same results:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-parallel-sort" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-parallel-sort expert-grouped-slots=0" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-parallel-sort expert-grouped-slots=0 expert-group-rows=3 expert-output-tile=2" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="expert-parallel-sort" \
// RUN:   | FileCheck %s --check-prefix=PARALLEL --implicit-check-not='scf.for %'
// The grouped form's sort has no loop over slots, and its products run
// over every tile there may be (3 experts more than the slots fill):
// PARALLEL: scf.forall ({{.*}}) in (%{{.*}}) shared_outs({{.*}}) -> (tensor<?x4xf32>)
// RUN: cat %s %S/Inputs/generators.mlir | not linnet-opt --linnet-lower-to-linalg="expert-grouped-slots=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE-SLOTS
// NEGATIVE-SLOTS: error: expert-grouped-slots must be 0 or more
// RUN: cat %s %S/Inputs/generators.mlir | not linnet-opt --linnet-lower-to-linalg="expert-group-rows=0" 2>&1 | FileCheck %s --check-prefix=NO-ROWS
// NO-ROWS: error: expert-group-rows must be at least 1
// Tiled as an op by the CPU pipeline (configurations pinned on two of the
// ops: tiles of 2 rows, 1 slot and 3 output columns, the last partial; and
// of 8 of the 13 grouped rows, every slot, 3 columns: each tile takes the
// grouped form on its own rows), each tile lowered in its dispatch region:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-cpu-pipeline \
// RUN:   | %run-main-openmp | %refpython %S/Inputs/expert_matmul.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir \
// RUN:   | linnet-opt --linnet-cpu-pipeline="stop-after=linalg" \
// RUN:   | FileCheck %s --check-prefix=TILED
// TILED: scf.forall ({{.*}}) = (0, 0, 0) to (3, 2, 4) step (2, 1, 3)
// TILED: scf.forall ({{.*}}) = (0, 0) to (13, 4) step (8, 3)
// CHECK: expert_matmul shared input: PASS
// CHECK: expert_matmul per-slot input: PASS
// CHECK: expert_matmul bf16: PASS
// CHECK: expert_matmul grouped shared input: PASS
// CHECK: expert_matmul grouped per-slot input: PASS
// CHECK: expert_matmul grouped, 600 slots: PASS
func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %s1 = arith.constant 0.1 : f32
  %s2 = arith.constant 0.2 : f32
  %s3 = arith.constant 0.3 : f32
  %x0 = call @sin_2d(%c3, %c5, %s1, %one, %zero)
      : (index, index, f32, f32, f32) -> tensor<?x?xf32>
  %xk0 = call @sin_3d(%c3, %c2, %c5, %s2, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %w0 = call @sin_3d(%c3, %c4, %c5, %s3, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %x = tensor.cast %x0 : tensor<?x?xf32> to tensor<3x5xf32>
  %xk = tensor.cast %xk0 : tensor<?x?x?xf32> to tensor<3x2x5xf32>
  %w = tensor.cast %w0 : tensor<?x?x?xf32> to tensor<3x4x5xf32>
  %experts = arith.constant dense<[[0, 2], [1, 3], [-1, 2]]> : tensor<3x2xi32>

  %y = linnet.expert_matmul %x, %w, %experts
      {linnet.lowering_config = #linnet.lowering_config<
          thread = [2, 1, 3], reduction = [0, 0, 0], vector = [1, 1, 1]>}
      : (tensor<3x5xf32>, tensor<3x4x5xf32>, tensor<3x2xi32>) -> tensor<3x2x4xf32>
  %printed = tensor.cast %y : tensor<3x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed) : (tensor<*xf32>) -> ()

  %yk = linnet.expert_matmul %xk, %w, %experts
      : (tensor<3x2x5xf32>, tensor<3x4x5xf32>, tensor<3x2xi32>) -> tensor<3x2x4xf32>
  %printed_k = tensor.cast %yk : tensor<3x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_k) : (tensor<*xf32>) -> ()

  // The same with bf16 operands and result, with dynamic shapes.
  %xb = call @to_bf16_2d(%x0) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  %wb = call @to_bf16_3d(%w0) : (tensor<?x?x?xf32>) -> tensor<?x?x?xbf16>
  %ids = tensor.cast %experts : tensor<3x2xi32> to tensor<?x?xi32>
  %yb = linnet.expert_matmul %xb, %wb, %ids
      : (tensor<?x?xbf16>, tensor<?x?x?xbf16>, tensor<?x?xi32>)
      -> tensor<?x?x?xbf16>
  %yb32 = call @from_bf16_3d(%yb) : (tensor<?x?x?xbf16>) -> tensor<?x?x?xf32>
  %printed_b = tensor.cast %yb32 : tensor<?x?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_b) : (tensor<*xf32>) -> ()

  // Grouped: 13 rows of 2 slots, dynamic rows, ids with out-of-range ones.
  %c13 = arith.constant 13 : index
  %gx0 = call @sin_2d(%c13, %c5, %s1, %one, %zero)
      : (index, index, f32, f32, f32) -> tensor<?x?xf32>
  %gxk0 = call @sin_3d(%c13, %c2, %c5, %s2, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %gx = tensor.cast %gx0 : tensor<?x?xf32> to tensor<?x5xf32>
  %gxk = tensor.cast %gxk0 : tensor<?x?x?xf32> to tensor<?x2x5xf32>
  %gids0 = arith.constant dense<[[0, 2], [1, 0], [2, 0], [0, 1], [1, 2], [0, 2], [3, 0], [0, 1], [2, 1], [0, 2], [1, 0], [0, -1], [2, 0]]> : tensor<13x2xi32>
  %gids = tensor.cast %gids0 : tensor<13x2xi32> to tensor<?x2xi32>
  %gy = linnet.expert_matmul %gx, %w, %gids
      : (tensor<?x5xf32>, tensor<3x4x5xf32>, tensor<?x2xi32>) -> tensor<?x2x4xf32>
  %printed_g = tensor.cast %gy : tensor<?x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_g) : (tensor<*xf32>) -> ()
  %gyk = linnet.expert_matmul %gxk, %w, %gids
      {linnet.lowering_config = #linnet.lowering_config<
          thread = [8, 0, 3], reduction = [0, 0, 0], vector = [1, 1, 1]>}
      : (tensor<?x2x5xf32>, tensor<3x4x5xf32>, tensor<?x2xi32>) -> tensor<?x2x4xf32>
  %printed_gk = tensor.cast %gyk : tensor<?x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_gk) : (tensor<*xf32>) -> ()

  // Grouped, 300 rows of 2 slots: 600 slots, more than one chunk of the
  // parallel sort (256), ids (5 r + 3 j + r^2 mod 7) mod 5 - 1 in [-1, 3].
  %c300 = arith.constant 300 : index
  %lx0 = call @sin_3d(%c300, %c2, %c5, %s2, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %lx = tensor.cast %lx0 : tensor<?x?x?xf32> to tensor<?x2x5xf32>
  %lids = tensor.generate %c300 {
  ^bb0(%r: index, %j: index):
    %c7 = arith.constant 7 : index
    %rr = arith.muli %r, %r : index
    %sq = arith.remui %rr, %c7 : index
    %r5 = arith.muli %r, %c5 : index
    %j3 = arith.muli %j, %c3 : index
    %sum0 = arith.addi %r5, %j3 : index
    %sum = arith.addi %sum0, %sq : index
    %m = arith.remui %sum, %c5 : index
    %id = arith.subi %m, %c1 : index
    %id32 = arith.index_cast %id : index to i32
    tensor.yield %id32 : i32
  } : tensor<?x2xi32>
  %ly = linnet.expert_matmul %lx, %w, %lids
      : (tensor<?x2x5xf32>, tensor<3x4x5xf32>, tensor<?x2xi32>) -> tensor<?x2x4xf32>
  %printed_l = tensor.cast %ly : tensor<?x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_l) : (tensor<*xf32>) -> ()
  return
}
