// linnet-cuda-chain-launches through the whole pipeline: two GEMVs (y = W1 x,
// then z = W2 y, each with its weights made by a kernel of its own before
// it) are launches one after another with nothing between them, so they
// become one chained kernel: a phase per launch, each an scf.for over the
// phase's blocks in steps of the grid, a grid wait between phases. Every
// block of z's phase reads all of y, which every block of y's phase wrote:
// the emulated device runs each phase as a launch of its own, 3 blocks
// (resident-blocks) doing all of the phase's blocks, and the numbers are
// exact (integers an f32 holds). Without chaining they are the same.
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels chain-launches=true" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated chain-launches=true" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated chain-launches=false" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated stop-after=kernels chain-launches=true" | FileCheck %s --check-prefix=HOST
// A chained kernel on an emulated device that holds no block is refused.
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg" | not linnet-opt --pass-pipeline="builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(linnet-cuda-map-dispatch-regions),linnet-cuda-plan-host{synchronize=false},linnet-cuda-merge-launches,linnet-cuda-chain-launches,func.func(linnet-cuda-emulate-launches{resident-blocks=0}))" 2>&1 | FileCheck %s --check-prefix=RESIDENT
// RESIDENT: error: 'gpu.launch' op is emulated with resident-blocks=0; it must be at least 1

// GPU: gpu.launch_func @main_kernels::@main_0_generic_then_{{[0-9]+}} blocks in (%c128,
// GPU-NOT: gpu.launch_func
// GPU: gpu.func @main_0_generic_then_{{[0-9]+}}(
// GPU: %[[BLOCK:.*]] = gpu.block_id x
// GPU: %[[GRID:.*]] = gpu.grid_dim x
// GPU: scf.for %{{.*}} = %[[BLOCK]] to %c128 step %[[GRID]] {
// GPU: } {linnet.launch_part = 128 : i64}
// GPU-NEXT: linnet.grid_wait
// GPU-NEXT: scf.for %{{.*}} = %[[BLOCK]] to %c32 step %[[GRID]] {
// GPU: } {linnet.launch_part = 32 : i64}
// GPU-NEXT: gpu.return

// On the emulated device, a parallel loop over at most 3 blocks per phase.
// HOST-LABEL: func.func @main
// HOST-NOT: linnet.grid_wait
// HOST: scf.parallel (%[[B1:.*]]) = (%c0) to (%c3) step (%c1) {
// HOST: scf.for %{{.*}} = %[[B1]] to %c128 step %c3 {
// HOST: scf.parallel (%[[B2:.*]]) = (%c0) to (%c3) step (%c1) {
// HOST: scf.for %{{.*}} = %[[B2]] to %c32 step %c3 {

// y[i] = sum_j ((i + j) % 3) (j % 4); z[k] = sum_i ((k i) % 5) y[i].
// CHECK: 769
// CHECK-NEXT: 1571325
// CHECK-NEXT: 1572100
// CHECK-NEXT: 1573635
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
#v = affine_map<(i) -> (i)>

func.func @main() {
  %zero = arith.constant 0.0 : f32
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %ex = tensor.empty() : tensor<512xf32>
  %x = linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      outs(%ex : tensor<512xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 0 : index
    %m = arith.remui %j, %c4 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    linalg.yield %mf : f32
  } -> tensor<512xf32>
  %ew1 = tensor.empty() : tensor<1024x512xf32>
  %w1 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%ew1 : tensor<1024x512xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.addi %i, %j : index
    %m = arith.remui %s, %c3 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    linalg.yield %mf : f32
  } -> tensor<1024x512xf32>
  %ey = tensor.empty() : tensor<1024xf32>
  %fy = linalg.fill ins(%zero : f32) outs(%ey : tensor<1024xf32>) -> tensor<1024xf32>
  %y = linalg.matvec ins(%w1, %x : tensor<1024x512xf32>, tensor<512xf32>) outs(%fy : tensor<1024xf32>) -> tensor<1024xf32>
  %ew2 = tensor.empty() : tensor<256x1024xf32>
  %w2 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%ew2 : tensor<256x1024xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.muli %i, %j : index
    %m = arith.remui %s, %c5 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    linalg.yield %mf : f32
  } -> tensor<256x1024xf32>
  %ez = tensor.empty() : tensor<256xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%ez : tensor<256xf32>) -> tensor<256xf32>
  %z = linalg.matvec ins(%w2, %y : tensor<256x1024xf32>, tensor<1024xf32>) outs(%fz : tensor<256xf32>) -> tensor<256xf32>
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c1 = arith.constant 1 : index
  %c254 = arith.constant 254 : index
  %c1000 = arith.constant 1000 : index
  %y1000 = tensor.extract %y[%c1000] : tensor<1024xf32>
  %z1 = tensor.extract %z[%c1] : tensor<256xf32>
  %z7 = tensor.extract %z[%c7] : tensor<256xf32>
  %z254 = tensor.extract %z[%c254] : tensor<256xf32>
  %y1000i = arith.fptosi %y1000 : f32 to i64
  vector.print %y1000i : i64
  %z1i = arith.fptosi %z1 : f32 to i64
  vector.print %z1i : i64
  %z7i = arith.fptosi %z7 : f32 to i64
  vector.print %z7i : i64
  %z254i = arith.fptosi %z254 : f32 to i64
  vector.print %z254i : i64
  return
}
