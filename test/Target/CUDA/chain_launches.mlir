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

// -----

// Each phase's workgroup buffers are views of one buffer of bytes, as large
// as the largest phase's (16-byte aligned offsets: 64 + 8 bytes, then 32),
// and a phase that has some waits at the end of each of its blocks: a block
// that runs the next of the phase's blocks must not write them while its
// threads still read them.
// CHECK-LABEL: func.func @shared
// CHECK: gpu.launch {{.*}} workgroup(%[[BYTES:.*]] : memref<80xi8, #gpu.address_space<workgroup>>)
// CHECK:   %[[A:.*]] = memref.view %[[BYTES]][%c0{{.*}}][] : memref<80xi8, #gpu.address_space<workgroup>> to memref<16xf32, #gpu.address_space<workgroup>>
// CHECK:   %[[B:.*]] = memref.view %[[BYTES]][%c64{{.*}}][] : memref<80xi8, #gpu.address_space<workgroup>> to memref<2xf32, #gpu.address_space<workgroup>>
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %[[A]]
// CHECK:     memref.store %{{.*}}, %[[B]]
// CHECK:     gpu.barrier
// CHECK-NEXT: } {linnet.launch_part = 4 : i64}
// CHECK:   linnet.grid_wait
// CHECK:   %[[C:.*]] = memref.view %[[BYTES]][%c0{{.*}}][] : memref<80xi8, #gpu.address_space<workgroup>> to memref<8xf64, #gpu.address_space<workgroup>>
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %[[C]]
// CHECK:     gpu.barrier
// CHECK-NEXT: } {linnet.launch_part = 2 : i64}
func.func @shared(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f32
  %d = arith.constant 2.0 : f64
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<16xf32, #gpu.address_space<workgroup>>,
                       %b : memref<2xf32, #gpu.address_space<workgroup>>) {
    memref.store %f, %a[%c0] : memref<16xf32, #gpu.address_space<workgroup>>
    memref.store %f, %b[%c1] : memref<2xf32, #gpu.address_space<workgroup>>
    memref.store %f, %x[%bx] : memref<64xf32>
    gpu.terminator
  } {module = @shared_kernels, function = @shared_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%c : memref<8xf64, #gpu.address_space<workgroup>>) {
    memref.store %d, %c[%c0] : memref<8xf64, #gpu.address_space<workgroup>>
    %v = memref.load %x[%c0] : memref<64xf32>
    memref.store %v, %x[%bx] : memref<64xf32>
    gpu.terminator
  } {module = @shared_kernels, function = @shared_1_generic}
  return
}
