// linnet-cuda-merge-launches alone: launches of one block of host code that
// neither read nor write what another writes become one launch of the sum
// of their grids, each part in an scf.if on the block id (counted from the
// part's first block) that carries its block count; a launch moves up past
// independent launches, past ops free of memory effects, taking along what
// it needs, and past host code that touches nothing it touches (host reads
// and writes, waits, a branch that launches), never past a call of another
// function; dependent launches, launches of other block sizes and a kernel
// computing a sine stay apart. Parts share workgroup buffers of a type.
// RUN: linnet-opt %s --linnet-cuda-merge-launches --split-input-file | FileCheck %s

// Two projections of one input, with the second's buffer allocated between
// them: one launch of 2 + 3 blocks; the allocation moves up.
// CHECK-LABEL: func.func @independent
// CHECK-SAME: (%[[X:.*]]: memref<160xf32>, %[[A:.*]]: memref<64xf32>)
// CHECK: %[[B:.*]] = memref.alloc() : memref<96xf32>
// CHECK: %[[TOTAL:.*]] = arith.addi %c2, %c3
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], {{.*}} in ({{.*}} = %[[TOTAL]], {{.*}} module(@independent_kernels) function(@independent_0_generic_and_1)
// CHECK:   %[[FIRST:.*]] = arith.subi %[[BX]], %c0
// CHECK:   %[[IN0:.*]] = arith.cmpi ult, %[[FIRST]], %c2
// CHECK:   scf.if %[[IN0]] {
// CHECK:     arith.muli %[[FIRST]], %c32
// CHECK:     memref.store %{{.*}}, %[[A]]
// CHECK:   } {linnet.launch_part = 2 : i64}
// CHECK:   %[[SECOND:.*]] = arith.subi %[[BX]], %c2
// CHECK:   %[[IN1:.*]] = arith.cmpi ult, %[[SECOND]], %c3
// CHECK:   scf.if %[[IN1]] {
// CHECK:     arith.muli %[[SECOND]], %c32
// CHECK:     memref.store %{{.*}}, %[[B]]
// CHECK:   } {linnet.launch_part = 3 : i64}
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return %[[B]]
func.func @independent(%x: memref<160xf32>, %a: memref<64xf32>) -> memref<96xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %c32 : index
    %j = arith.addi %i, %tx : index
    %v = memref.load %x[%j] : memref<160xf32>
    memref.store %v, %a[%j] : memref<64xf32>
    gpu.terminator
  } {module = @independent_kernels, function = @independent_0_generic}
  %b = memref.alloc() : memref<96xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %c32 : index
    %j = arith.addi %i, %tx : index
    %k = arith.addi %j, %c32 : index
    %v = memref.load %x[%k] : memref<160xf32>
    memref.store %v, %b[%j] : memref<96xf32>
    gpu.terminator
  } {module = @independent_kernels, function = @independent_1_generic}
  return %b : memref<96xf32>
}

// -----

// The second reads what the first writes, the third neither: the third
// moves past the second into the first's launch, the second stays after it.
// A part's grid size is its own.
// CHECK-LABEL: func.func @past_a_dependent
// CHECK: gpu.launch {{.*}} function(@past_a_dependent_0_generic_and_1)
// CHECK:   scf.if
// CHECK:     memref.store %{{.*}}, %[[T:.*]][
// CHECK:   } {linnet.launch_part = 1 : i64}
// CHECK:   scf.if
// CHECK:     arith.addi %{{.*}}, %c1
// CHECK:     memref.store
// CHECK:   } {linnet.launch_part = 1 : i64}
// CHECK: gpu.launch {{.*}} function(@past_a_dependent_1_generic)
// CHECK:   memref.load %[[T]]
// CHECK-NOT: gpu.launch
func.func @past_a_dependent(%x: memref<32xf32>, %t: memref<32xf32>, %y: memref<32xf32>, %z: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %t[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @past_a_dependent_kernels, function = @past_a_dependent_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %t[%tx] : memref<32xf32>
    memref.store %v, %y[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @past_a_dependent_kernels, function = @past_a_dependent_1_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    %blocks = arith.addi %gx, %c1 : index
    %f = arith.index_cast %blocks : index to i32
    %g = arith.sitofp %f : i32 to f32
    %s = arith.addf %v, %g : f32
    memref.store %s, %z[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @past_a_dependent_kernels, function = @past_a_dependent_2_generic}
  return
}

// -----

// Disjoint slices of one buffer (ValueBounds tells them apart) are written
// by one launch; overlapping ones are not.
// CHECK-LABEL: func.func @slices
// CHECK: gpu.launch {{.*}} function(@slices_0_generic_and_1)
// CHECK: gpu.launch {{.*}} function(@slices_2_generic)
// CHECK-NOT: gpu.launch
func.func @slices(%x: memref<32xf32>, %out: memref<96xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %low = memref.subview %out[0] [32] [1] : memref<96xf32> to memref<32xf32, strided<[1]>>
  %high = memref.subview %out[32] [32] [1] : memref<96xf32> to memref<32xf32, strided<[1], offset: 32>>
  %middle = memref.subview %out[16] [32] [1] : memref<96xf32> to memref<32xf32, strided<[1], offset: 16>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %low[%tx] : memref<32xf32, strided<[1]>>
    gpu.terminator
  } {module = @slices_kernels, function = @slices_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %high[%tx] : memref<32xf32, strided<[1], offset: 32>>
    gpu.terminator
  } {module = @slices_kernels, function = @slices_1_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %middle[%tx] : memref<32xf32, strided<[1], offset: 16>>
    gpu.terminator
  } {module = @slices_kernels, function = @slices_2_generic}
  return
}

// -----

// An entry's arguments are distinct buffers; a private function's may be
// one buffer twice (here a call passes one twice), so a write to one and a
// read of the other stay apart.
// CHECK-LABEL: func.func @entry
// CHECK: gpu.launch {{.*}} function(@entry_0_generic_and_1)
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func private @private
// CHECK: gpu.launch {{.*}} function(@private_0_generic)
// CHECK: gpu.launch {{.*}} function(@private_1_generic)
func.func @entry(%x: memref<32xf32>, %y: memref<32xf32>, %z: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %y[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @entry_kernels, function = @entry_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %z[%tx] : memref<32xf32>
    memref.store %v, %z[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @entry_kernels, function = @entry_1_generic}
  call @private(%x, %x, %z) : (memref<32xf32>, memref<32xf32>, memref<32xf32>) -> ()
  return
}
func.func private @private(%x: memref<32xf32>, %y: memref<32xf32>, %z: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %y[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @private_kernels, function = @private_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %z[%tx] : memref<32xf32>
    memref.store %v, %z[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @private_kernels, function = @private_1_generic}
  return
}

// -----

// A host access (here a store) keeps the launches before it apart from
// those after it that read what it writes; a launch of another block size,
// or one writing what that
// one writes, stays alone, and so does a kernel computing a sine. The
// second launch and the fourth, of a run-time grid (a part of no constant
// bound), are one.
// CHECK-LABEL: func.func @apart
// CHECK: gpu.launch {{.*}} function(@apart_0_generic)
// CHECK: memref.store
// CHECK: gpu.launch {{.*}} function(@apart_1_generic_and_1)
// CHECK:   } {linnet.launch_part = 1 : i64}
// CHECK:   } {linnet.launch_part}
// CHECK: gpu.launch {{.*}} function(@apart_2_generic)
// CHECK: gpu.launch {{.*}} function(@apart_4_generic)
// CHECK: gpu.launch {{.*}} function(@apart_5_generic)
// CHECK-NOT: gpu.launch
func.func @apart(%x: memref<32xf32>, %y: memref<32xf32>, %z: memref<32xf32>, %w: memref<?xf32>, %n: index, %s: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %y[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_0_generic}
  memref.store %zero, %x[%c1] : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %z[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_1_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<32xf32>
    memref.store %v, %w[%tx] : memref<?xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_2_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %s[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_3_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<32xf32>
    memref.store %v, %w[%bx] : memref<?xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_4_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%tx] : memref<32xf32>
    %sine = math.sin %v : f32
    memref.store %sine, %x[%c0] : memref<32xf32>
    gpu.terminator
  } {module = @apart_kernels, function = @apart_5_generic}
  return
}

// -----

// Host code that touches nothing a launch touches lets it pass: a store to
// another buffer, a wait, a branch whose launch writes another buffer. A
// buffer allocated after a branch's result is not that result (the second
// launch writes it while the branch's launch reads the branch's buffer).
// The last launch reads what the store writes: it stays after it.
// CHECK-LABEL: func.func @past_host_code
// CHECK: memref.alloc
// CHECK: gpu.launch {{.*}} function(@past_host_code_0_generic_and_1)
// CHECK: memref.store %{{.*}}, %arg2[%c1]
// CHECK: call @linnet_device_synchronize
// CHECK: scf.if
// CHECK: gpu.launch {{.*}} function(@past_host_code_1_generic)
// CHECK: gpu.launch {{.*}} function(@past_host_code_3_generic)
// CHECK-NOT: gpu.launch
func.func private @linnet_device_synchronize()
func.func @past_host_code(%x: memref<32xf32>, %y: memref<32xf32>, %s: memref<32xf32>, %t: memref<32xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %y[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @past_host_code_kernels, function = @past_host_code_0_generic}
  memref.store %zero, %s[%c1] : memref<32xf32>
  func.call @linnet_device_synchronize() : () -> ()
  %b = scf.if %c -> (memref<32xf32>) {
    %fresh = memref.alloc() : memref<32xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<32xf32>
      memref.store %v, %fresh[%tx] : memref<32xf32>
      gpu.terminator
    } {module = @past_host_code_kernels, function = @past_host_code_1_generic}
    scf.yield %fresh : memref<32xf32>
  } else {
    scf.yield %y : memref<32xf32>
  }
  %out = memref.alloc() : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @past_host_code_kernels, function = @past_host_code_2_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %s[%tx] : memref<32xf32>
    memref.store %v, %t[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @past_host_code_kernels, function = @past_host_code_3_generic}
  %w = memref.load %b[%c1] : memref<32xf32>
  memref.store %w, %out[%c1] : memref<32xf32>
  return
}

// -----

// nvgpu.ldmatrix declares its read with no value (an effect of the whole
// op); in a kernel that is a read of its memref operand, here the block's
// own stage, so a tensor-core product's launch and an independent one
// still merge.
// CHECK-LABEL: func.func @ldmatrix_stage
// CHECK: gpu.launch {{.*}} function(@ldmatrix_stage_0_generic_and_1)
// CHECK: nvgpu.ldmatrix
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @ldmatrix_stage(%x: memref<64xbf16>, %a: memref<64xbf16>, %b: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%stage : memref<2560xbf16, #gpu.address_space<workgroup>>) {
    %v = memref.load %x[%tx] : memref<64xbf16>
    memref.store %v, %stage[%tx] : memref<2560xbf16, #gpu.address_space<workgroup>>
    %m = nvgpu.ldmatrix %stage[%tx] {numTiles = 4 : i32, transpose = false} : memref<2560xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    %e = vector.extract %m[0, 0] : bf16 from vector<4x2xbf16>
    memref.store %e, %a[%tx] : memref<64xbf16>
    gpu.terminator
  } {module = @ldmatrix_stage_kernels, function = @ldmatrix_stage_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xbf16>
    %f = arith.extf %v : bf16 to f32
    memref.store %f, %b[%tx] : memref<64xf32>
    gpu.terminator
  } {module = @ldmatrix_stage_kernels, function = @ldmatrix_stage_1_generic}
  return
}

// -----

// Parts share workgroup buffers: a block runs one part, so a buffer of a
// type another part has too is that part's (each GEMV that computes a
// layer's norm keeps the row in buffers of the same types). Two parts of
// 32 KiB each (64 KiB apart, more than a block's 48) are one launch with
// one such buffer; a third part's buffer of another type is one more.
// CHECK-LABEL: func.func @shared_workgroup
// CHECK: gpu.launch {{.*}} function(@shared_workgroup_0_generic_and_2) workgroup(%[[ROW:.*]] : memref<8192xf32, #gpu.address_space<workgroup>>, %[[IDS:.*]] : memref<16xi32, #gpu.address_space<workgroup>>)
// CHECK-NOT: workgroup(
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK: memref.store %{{.*}}, %[[IDS]]
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @shared_workgroup(%x: memref<8192xf32>, %a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%row : memref<8192xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %x[%tx] : memref<8192xf32>
    memref.store %v, %row[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    %w = memref.load %row[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    memref.store %w, %a[%tx] : memref<64xf32>
    gpu.terminator
  } {module = @shared_workgroup_kernels, function = @shared_workgroup_0_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%row : memref<8192xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %x[%tx] : memref<8192xf32>
    memref.store %v, %row[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    %w = memref.load %row[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    memref.store %w, %b[%tx] : memref<64xf32>
    gpu.terminator
  } {module = @shared_workgroup_kernels, function = @shared_workgroup_1_generic}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%ids : memref<16xi32, #gpu.address_space<workgroup>>) {
    %i = arith.index_cast %tx : index to i32
    memref.store %i, %ids[%c1] : memref<16xi32, #gpu.address_space<workgroup>>
    %j = memref.load %ids[%c1] : memref<16xi32, #gpu.address_space<workgroup>>
    memref.store %j, %c[%tx] : memref<64xi32>
    gpu.terminator
  } {module = @shared_workgroup_kernels, function = @shared_workgroup_2_generic}
  return
}

// -----

// A call's results that its callee allocated (a layer's new histories) are
// buffers of their own, none of the entry's arguments: their copies into
// the states are one launch. A result the callee returns as its argument
// is that argument: a copy of it waits for the launch that writes the
// argument.
// CHECK-LABEL: func.func @call_results
// CHECK: %[[NEW:.*]]:2 = call @make
// CHECK: gpu.launch {{.*}} function(@call_results_0_copy_and_1)
// CHECK-NOT: gpu.launch
// CHECK: %[[SAME:.*]] = call @pass
// CHECK: gpu.launch {{.*}} function(@call_results_2_copy)
// CHECK: gpu.launch {{.*}} function(@call_results_3_copy)
func.func @call_results(%s0: memref<32xf32>, %s1: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %new:2 = call @make() : () -> (memref<32xf32>, memref<32xf32>)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %new#0[%tx] : memref<32xf32>
    memref.store %v, %s0[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @call_results_kernels, function = @call_results_0_copy}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %new#1[%tx] : memref<32xf32>
    memref.store %v, %s1[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @call_results_kernels, function = @call_results_1_copy}
  %same = call @pass(%s0) : (memref<32xf32>) -> memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = arith.constant 1.0 : f32
    memref.store %v, %s0[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @call_results_kernels, function = @call_results_2_copy}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %same[%tx] : memref<32xf32>
    memref.store %v, %new#0[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @call_results_kernels, function = @call_results_3_copy}
  return
}
func.func private @make() -> (memref<32xf32>, memref<32xf32>) {
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<32xf32>
  return %a, %b : memref<32xf32>, memref<32xf32>
}
func.func private @pass(%x: memref<32xf32>) -> memref<32xf32> {
  return %x : memref<32xf32>
}

// -----

// A callee's result that is one of its own buffers whichever way it was
// made (a prompt's recurrent state: a loop's new buffer each iteration,
// then the deallocation's clone unless owned) is a buffer of its own too:
// its copy into a state and another result's copy are one launch. One a
// branch may yield as the other result's buffer is not.
// CHECK-LABEL: func.func @own_through_branches
// CHECK: call @states
// CHECK: gpu.launch {{.*}} function(@own_through_branches_0_copy_and_1)
// CHECK-NOT: gpu.launch
// CHECK: call @shared
// CHECK: gpu.launch {{.*}} function(@own_through_branches_2_copy)
// CHECK: gpu.launch {{.*}} function(@own_through_branches_3_copy)
func.func @own_through_branches(%s0: memref<32xf32>, %s1: memref<32xf32>, %n: index, %owned: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %new:2 = call @states(%n, %owned) : (index, i1) -> (memref<32xf32>, memref<32xf32>)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %new#0[%tx] : memref<32xf32>
    memref.store %v, %s0[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @own_through_branches_kernels, function = @own_through_branches_0_copy}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %new#1[%tx] : memref<32xf32>
    memref.store %v, %s1[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @own_through_branches_kernels, function = @own_through_branches_1_copy}
  %same:2 = call @shared(%owned) : (i1) -> (memref<32xf32>, memref<32xf32>)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = arith.constant 1.0 : f32
    memref.store %v, %same#0[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @own_through_branches_kernels, function = @own_through_branches_2_copy}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %same#1[%tx] : memref<32xf32>
    memref.store %v, %s0[%tx] : memref<32xf32>
    gpu.terminator
  } {module = @own_through_branches_kernels, function = @own_through_branches_3_copy}
  return
}
func.func private @states(%n: index, %owned: i1) -> (memref<32xf32>, memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %history = memref.alloc() : memref<32xf32>
  %first = memref.alloc() : memref<32xf32>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%state = %first) -> (memref<32xf32>) {
    %next = memref.alloc() : memref<32xf32>
    memref.copy %state, %next : memref<32xf32> to memref<32xf32>
    scf.yield %next : memref<32xf32>
  }
  %returned = scf.if %owned -> (memref<32xf32>) {
    scf.yield %last : memref<32xf32>
  } else {
    %clone = memref.alloc() : memref<32xf32>
    memref.copy %last, %clone : memref<32xf32> to memref<32xf32>
    scf.yield %clone : memref<32xf32>
  }
  return %history, %returned : memref<32xf32>, memref<32xf32>
}
func.func private @shared(%owned: i1) -> (memref<32xf32>, memref<32xf32>) {
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<32xf32>
  %either = scf.if %owned -> (memref<32xf32>) {
    scf.yield %a : memref<32xf32>
  } else {
    scf.yield %b : memref<32xf32>
  }
  return %a, %either : memref<32xf32>, memref<32xf32>
}
