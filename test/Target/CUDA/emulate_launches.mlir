// linnet-cuda-emulate-launches alone: a gpu.launch run by the host, its
// blocks in a parallel loop, in a block each stretch of work between
// barriers in a loop over the threads (the barriers gone: running one
// stretch for every thread before the next is what they guarantee), a
// workgroup buffer a buffer of the block's iteration, a value a thread
// keeps across a barrier a buffer of a value per thread, a shuffle an
// exchange through a buffer between two barriers, and so an mma.sync; a
// branch on the block id (a merged kernel's part) holds barriers.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-emulate-launches,canonicalize))" --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @block
// CHECK-NOT: gpu.
// CHECK: scf.parallel (%[[B:.*]]) = (%c0) to (%c4) step (%c1) {
// CHECK:   %[[SHARED:.*]] = memref.alloc() : memref<32xf32>
// CHECK:   scf.for %[[T:.*]] = %c0 to %c32 step %c1 {
// CHECK:     memref.store %{{.*}}, %[[SHARED]][%[[T]]]
// CHECK:   }
// CHECK-NEXT: scf.for %[[T2:.*]] = %c0 to %c32 step %c1 {
// CHECK:     %[[FIRST:.*]] = arith.cmpi eq, %[[T2]], %c0
// CHECK:     scf.if %[[FIRST]] {
// CHECK:   }
// CHECK:   memref.dealloc %[[SHARED]]
// CHECK:   scf.reduce
func.func @block(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<32xf32, #gpu.address_space<workgroup>>) {
    %generic = memref.memory_space_cast %shared : memref<32xf32, #gpu.address_space<workgroup>> to memref<32xf32>
    %i = arith.index_cast %tx : index to i32
    %v = arith.sitofp %i : i32 to f32
    memref.store %v, %generic[%tx] : memref<32xf32>
    gpu.barrier
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %k = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (f32) {
        %e = memref.load %generic[%k] : memref<32xf32>
        %s = arith.addf %acc, %e : f32
        scf.yield %s : f32
      }
      memref.store %sum, %out[%bx] : memref<4xf32>
    }
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

// A merged kernel's part: a branch on the block id, which every thread of
// a block takes alike, holding barriers: its stretches are serialized
// inside it, and a value kept across its barrier is a buffer per thread.
// CHECK-LABEL: func.func @part_on_block_id
// CHECK: scf.parallel (%[[B:.*]]) = (%c0) to (%c4) step (%c1) {
// CHECK:   %[[KEPT:.*]] = memref.alloc() : memref<32xf32>
// CHECK:   %[[SHARED:.*]] = memref.alloc() : memref<32xf32>
// CHECK:   %[[PART:.*]] = arith.cmpi ult, %[[B]], %c2
// CHECK:   scf.if %[[PART]] {
// CHECK:     scf.for %[[T:.*]] = %c0 to %c32 step %c1 {
// CHECK-DAG:   memref.store %{{.*}}, %[[SHARED]][%[[T]]]
// CHECK-DAG:   memref.store %{{.*}}, %[[KEPT]][%[[T]]]
// CHECK:     }
// CHECK-NEXT: scf.for %[[T2:.*]] = %c0 to %c32 step %c1 {
// CHECK-DAG:   memref.load %[[KEPT]][%[[T2]]]
// CHECK-DAG:   memref.load %[[SHARED]]
// CHECK:     }
// CHECK:   } {linnet.launch_part = 2 : i64}
func.func @part_on_block_id(%out: memref<32x4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<32xf32, #gpu.address_space<workgroup>>) {
    %generic = memref.memory_space_cast %shared : memref<32xf32, #gpu.address_space<workgroup>> to memref<32xf32>
    %part = arith.cmpi ult, %bx, %c2 : index
    scf.if %part {
      %i = arith.index_cast %tx : index to i32
      %v = arith.sitofp %i : i32 to f32
      memref.store %v, %generic[%tx] : memref<32xf32>
      gpu.barrier
      %c31 = arith.constant 31 : index
      %mirror = arith.subi %c31, %tx : index
      %w = memref.load %generic[%mirror] : memref<32xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %out[%tx, %bx] : memref<32x4xf32>
    } {linnet.launch_part = 2 : i64}
    gpu.terminator
  }
  return
}

// -----

func.func @grid_in_y(%n: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'gpu.launch' op is emulated only with a grid and a block in x alone}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %n, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @barrier_in_divergent_code(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %tx, %c0 : index
    // expected-error @+1 {{'scf.if' op holds a barrier and depends on the thread id: the emulated device runs barriers only in code every thread runs alike}}
    scf.if %first {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A butterfly step: each thread's value goes to a buffer of the block, and
// after a barrier each reads its partner's (thread id xor 1); the value it
// keeps across the barriers is kept per thread.
// CHECK-LABEL: func.func @shuffle
// CHECK-NOT: gpu.
// CHECK-COUNT-3: memref.alloc() : memref<64xf32>
// CHECK: scf.for %[[T:.*]] = %c0 to %c64 step %c1 {
// CHECK:   %[[V:.*]] = arith.sitofp
// CHECK-NEXT:   memref.store %[[V]], %[[KEPT:.*]][%[[T]]]
// CHECK-NEXT:   memref.store %[[V]], %[[EXCHANGE:.*]][%[[T]]]
// CHECK: }
// CHECK-NEXT: scf.for %[[T2:.*]] = %c0 to %c64 step %c1 {
// CHECK:   %[[PARTNER:.*]] = arith.xori %[[T2]], %c1
// CHECK:   %[[OTHER:.*]] = memref.load %[[EXCHANGE]][%[[PARTNER]]]
// CHECK:   memref.store %[[OTHER]], %[[OTHERS:.*]][%[[T2]]]
// CHECK: }
// CHECK-NEXT: scf.for %[[T3:.*]] = %c0 to %c64 step %c1 {
// CHECK:   %[[MINE:.*]] = memref.load %[[KEPT]][%[[T3]]]
// CHECK:   %[[THEIRS:.*]] = memref.load %[[OTHERS]][%[[T3]]]
// CHECK:   arith.addf %[[MINE]], %[[THEIRS]]
// CHECK: }
// CHECK-DAG: memref.dealloc %[[KEPT]] :
// CHECK-DAG: memref.dealloc %[[EXCHANGE]] :
// CHECK-DAG: memref.dealloc %[[OTHERS]] :
func.func @shuffle(%out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %i = arith.index_cast %tx : index to i32
    %v = arith.sitofp %i : i32 to f32
    %one = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    %other, %valid = gpu.shuffle xor %v, %one, %width : f32
    %sum = arith.addf %v, %other : f32
    memref.store %sum, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @shuffle_down(%out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    // expected-error @+1 {{'gpu.shuffle' op is emulated only as a butterfly (xor) over a whole warp}}
    %other, %valid = gpu.shuffle down %zero, %one, %width : f32
    memref.store %other, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @view_across_barrier(%in: memref<4x4xf32>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'memref.subview' op keeps a value of type 'memref<4xf32, strided<[1], offset: ?>>' across a barrier; the emulated device keeps only scalars}}
    %row = memref.subview %in[%tx, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    gpu.barrier
    %c0 = arith.constant 0 : index
    %v = memref.load %row[%c0] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %v, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A loop every thread must run alike (it holds a barrier) whose trip count
// is one thread's value: divergent, which the emulated device refuses.
func.func @divergent_loop(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %n = arith.addi %tx, %c1 : index
    // expected-error @+1 {{'scf.for' op reads a value of one thread's work outside the work between barriers; the emulated device cannot run it}}
    scf.for %i = %c0 to %n step %c1 {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A warp's mma.sync: its fragments go to buffers of the block, a barrier,
// each lane sums its part from the lanes holding its rows of A and columns
// of B, a barrier; the sums the loop carries past those barriers live in a
// buffer of a value per thread.
// CHECK-LABEL: func.func @mma
// CHECK-NOT: nvgpu.mma.sync
// CHECK-DAG: %[[CARRIED:.*]] = memref.alloc() : memref<32xvector<2x2xf32>>
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<32x4x2xbf16>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<32x2x2xbf16>
// CHECK-DAG: %[[C:.*]] = memref.alloc() : memref<32x2x2xf32>
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[A]][
// CHECK: scf.for
// CHECK: memref.load %[[A]][
// CHECK: memref.load %[[B]][
// CHECK: arith.extf
// CHECK: memref.store %{{.*}}, %[[CARRIED]][
func.func @mma(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %out: memref<32xvector<2x2xf32>>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant dense<0.0> : vector<2x2xf32>
    %lane = arith.index_cast %tx : index to i32
    %lanef = arith.sitofp %lane : i32 to f32
    %start = vector.broadcast %lanef : f32 to vector<2x2xf32>
    %sums = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %start) -> (vector<2x2xf32>) {
      %d = nvgpu.mma.sync(%a, %b, %acc) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
      scf.yield %d : vector<2x2xf32>
    }
    memref.store %sums, %out[%tx] : memref<32xvector<2x2xf32>>
    gpu.terminator
  }
  return
}

// -----

// mma.sync of another shape (m16n8k8) is not emulated.
func.func @mma_other_shape(%a: vector<2x2xf16>, %b: vector<1x2xf16>, %c: vector<2x2xf16>, %out: memref<32xvector<2x2xf16>>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'nvgpu.mma.sync' op is emulated only as m16n8k16 with 16-bit inputs and f32 sums}}
    %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 8]} : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf16>) -> vector<2x2xf16>
    memref.store %d, %out[%tx] : memref<32xvector<2x2xf16>>
    gpu.terminator
  }
  return
}

// -----

// A loop with a barrier that carries a view (not a scalar or a vector) from
// one iteration to the next: the emulated device has no buffer of a value per
// thread for it.
func.func @carried_view(%in: memref<4x4xf32>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %row = memref.subview %in[%tx, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    // expected-error @+1 {{'scf.for' op carries a value of type 'memref<4xf32, strided<[1], offset: ?>>' past a barrier; the emulated device keeps only scalars and vectors}}
    %last = scf.for %i = %c0 to %c2 step %c1 iter_args(%view = %row) -> (memref<4xf32, strided<[1], offset: ?>>) {
      gpu.barrier
      scf.yield %view : memref<4xf32, strided<[1], offset: ?>>
    }
    %v = memref.load %last[%c0] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %v, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
