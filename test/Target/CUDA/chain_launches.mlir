// linnet-cuda-chain-launches alone: consecutive launches of one block of
// host code with only allocations, deallocations and pure ops between them
// become one launch at the last one's place, of the largest phase's grid:
// each launch a phase (an scf.for from the block id to its block count in
// steps of the grid, marked with that count), a linnet.grid_wait between
// phases; a deallocation between phases goes after the launch. A launch of
// a run-time grid, of another block size, or with host code between (a read
// of device memory) stays apart.
// RUN: linnet-opt %s --linnet-cuda-chain-launches --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @layer
// CHECK: %[[T:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[U:.*]] = memref.alloc() : memref<96xf32>
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], %{{[^)]*}}) in (%[[GX:[^ ]*]] = %c3{{.*}} module(@layer_kernels) function(@layer_0_generic_then_2)
// CHECK:   scf.for %[[B0:.*]] = %[[BX]] to %c2{{.*}} step %[[GX]] {
// CHECK:     arith.muli %[[B0]], %c32
// CHECK:     memref.store %{{.*}}, %[[T]]
// CHECK:   } {linnet.launch_part = 2 : i64}
// CHECK:   linnet.grid_wait
// CHECK:   scf.for %[[B1:.*]] = %[[BX]] to %c3{{.*}} step %[[GX]] {
// CHECK:     memref.load %[[T]]
// CHECK:     memref.store %{{.*}}, %[[U]]
// CHECK:   } {linnet.launch_part = 3 : i64}
// CHECK:   linnet.grid_wait
// CHECK:   scf.for %{{.*}} = %[[BX]] to %c1{{.*}} step %[[GX]] {
// CHECK:     memref.load %[[U]]
// CHECK:   } {linnet.launch_part = 1 : i64}
// CHECK:   gpu.terminator
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NOT: gpu.launch
// CHECK: memref.dealloc %[[U]]
func.func @layer(%x: memref<64xf32>, %out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %c32 : index
    %j = arith.addi %i, %tx : index
    %v = memref.load %x[%j] : memref<64xf32>
    memref.store %v, %t[%j] : memref<64xf32>
    gpu.terminator
  } {module = @layer_kernels, function = @layer_0_generic}
  %u = memref.alloc() : memref<96xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %c32 : index
    %j = arith.addi %i, %tx : index
    %v = memref.load %t[%tx] : memref<64xf32>
    memref.store %v, %u[%j] : memref<96xf32>
    gpu.terminator
  } {module = @layer_kernels, function = @layer_1_generic}
  memref.dealloc %t : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %u[%tx] : memref<96xf32>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @layer_kernels, function = @layer_2_generic}
  memref.dealloc %u : memref<96xf32>
  return
}

// -----

// CHECK-LABEL: func.func @apart
// CHECK-COUNT-4: gpu.launch blocks
// CHECK-NOT: linnet.grid_wait
func.func @apart(%x: memref<64xf32>, %flag: memref<1xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  // A grid known only at run time.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xf32>
    memref.store %v, %x[%c0] : memref<64xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xf32>
    memref.store %v, %x[%c1] : memref<64xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_1_generic}
  // Another block size.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xf32>
    memref.store %v, %x[%c2] : memref<64xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_2_generic}
  // The host reads what the last launch wrote before the next.
  %f = memref.load %flag[%c0] : memref<1xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xf32>
    memref.store %v, %x[%c2] : memref<64xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_3_generic}
  return
}
