// linnet-cuda-plan-host alone: a host read of device memory only kernels
// use becomes theirs; a host copy becomes a kernel of one thread
// per element (guarded against an empty grid), a run of independent copies
// one kernel; a bookkeeping array only the
// host uses goes on the stack; the host waits for the device before the
// first access to device memory after a launch, and only then; a function
// that launches waits at its first access, one that does not is waited for
// by its caller.
// RUN: linnet-opt %s --linnet-cuda-plan-host="threads-per-block=64" --split-input-file --allow-unregistered-dialect | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-plan-host="synchronize=false" --split-input-file --allow-unregistered-dialect | FileCheck %s --check-prefix=EMULATED

// CHECK-LABEL: func.func @copy_state
// CHECK-SAME: (%[[SRC:.*]]: memref<2x?xf32>, %[[DST:.*]]: memref<2x?xf32>)
// CHECK: arith.muli
// CHECK: %[[N:.*]] = arith.muli
// CHECK: %[[ANY:.*]] = arith.cmpi ugt, %[[N]], %c0
// CHECK: scf.if %[[ANY]] {
// CHECK:   %[[BLOCKS:.*]] = arith.ceildivui %[[N]], %c64
// CHECK:   gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64,
// CHECK:     %[[LINEAR:.*]] = arith.addi
// CHECK:     arith.cmpi ult, %[[LINEAR]], %[[N]]
// CHECK:     %[[IDX:.*]]:2 = affine.delinearize_index %[[LINEAR]] into
// CHECK:     %[[V:.*]] = memref.load %[[SRC]][%[[IDX]]#0, %[[IDX]]#1]
// CHECK:     memref.store %[[V]], %[[DST]][%[[IDX]]#0, %[[IDX]]#1]
// CHECK-NOT: memref.copy
// CHECK-NOT: linnet_device_synchronize
// CHECK: return
func.func @copy_state(%src: memref<2x?xf32>, %dst: memref<2x?xf32>) {
  memref.copy %src, %dst : memref<2x?xf32> to memref<2x?xf32>
  return
}

// -----

// The copy kernel is named after its function and numbered on from the
// launches already there.
// CHECK-LABEL: func.func @named
// CHECK: gpu.launch {{.*}} module(@named_kernels) function(@named_1_copy)
func.func @named(%src: memref<4xf32>, %dst: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  memref.copy %src, %dst : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A launch, then the host reads what it wrote: one wait, before the first
// read alone. The pointer list of the deallocation helper goes on the stack
// and needs no wait; the heap buffer the kernel writes stays a heap buffer.
// CHECK: func.func private @linnet_device_synchronize()
// CHECK-LABEL: func.func @read_after_launch
// CHECK: %[[FLAG:.*]] = memref.alloc() : memref<1xi64>
// CHECK: %[[LIST:.*]] = memref.alloca() : memref<2xindex>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[LIST]]
// CHECK-NEXT: call @linnet_device_synchronize()
// CHECK-NEXT: memref.load %[[FLAG]]
// CHECK-NEXT: memref.load %[[FLAG]]
// CHECK-NOT: linnet_device_synchronize
// CHECK-NOT: memref.dealloc %[[LIST]]
// CHECK: memref.dealloc %[[FLAG]]
// EMULATED-LABEL: func.func @read_after_launch
// EMULATED-NOT: linnet_device_synchronize
func.func @read_after_launch(%arg: memref<8xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flag = memref.alloc() : memref<1xi64>
  %list = memref.alloc() : memref<2xindex>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %arg[%tx] : memref<8xi64>
    memref.store %v, %flag[%c0] : memref<1xi64>
    gpu.terminator
  }
  %p = memref.extract_aligned_pointer_as_index %flag : memref<1xi64> -> index
  memref.store %p, %list[%c0] : memref<2xindex>
  %a = memref.load %flag[%c0] : memref<1xi64>
  %b = memref.load %flag[%c0] : memref<1xi64>
  %s = arith.addi %a, %b : i64
  memref.dealloc %list : memref<2xindex>
  memref.dealloc %flag : memref<1xi64>
  return %s : i64
}

// -----

// A reshape's shape array in a branch (a versioned function's) goes on the
// stack too, and its stores need no wait after the launch; one in a loop
// stays on the heap (each iteration would take more stack), and its
// stores wait.
// CHECK-LABEL: func.func @shapes_in_branches
// CHECK: scf.if
// CHECK:   gpu.launch
// CHECK:   %[[SHAPE:.*]] = memref.alloca() : memref<2xindex>
// CHECK-NOT: linnet_device_synchronize
// CHECK:   memref.store %{{.*}}, %[[SHAPE]]
// CHECK:   memref.reshape
// CHECK: scf.for
// CHECK:   gpu.launch
// CHECK:   memref.alloc() : memref<2xindex>
// CHECK:   call @linnet_device_synchronize()
// CHECK:   memref.store
func.func @shapes_in_branches(%x: memref<8xf32>, %y: memref<8xf32>, %few: i1) -> memref<2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %r = scf.if %few -> memref<2x4xf32> {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<8xf32>
      memref.store %v, %y[%tx] : memref<8xf32>
      gpu.terminator
    }
    %shape = memref.alloc() : memref<2xindex>
    memref.store %c2, %shape[%c0] : memref<2xindex>
    memref.store %c4, %shape[%c1] : memref<2xindex>
    %m = memref.reshape %y(%shape) : (memref<8xf32>, memref<2xindex>) -> memref<2x4xf32>
    scf.yield %m : memref<2x4xf32>
  } else {
    %m = memref.expand_shape %x [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    scf.yield %m : memref<2x4xf32>
  }
  scf.for %i = %c0 to %c2 step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<8xf32>
      memref.store %v, %y[%tx] : memref<8xf32>
      gpu.terminator
    }
    %shape = memref.alloc() : memref<2xindex>
    memref.store %c2, %shape[%c0] : memref<2xindex>
    memref.store %c4, %shape[%c1] : memref<2xindex>
    %m = memref.reshape %y(%shape) : (memref<8xf32>, memref<2xindex>) -> memref<2x4xf32>
    memref.dealloc %shape : memref<2xindex>
  }
  return %r : memref<2x4xf32>
}

// -----

// A host read of device memory (a decode step's position) whose value only
// kernels use, through an index cast and a subview (the cache slot it
// writes), is the kernels' own read: no wait, no host read. Where a launch
// between the read and the kernel writes what it reads, the host reads it,
// after a wait.
// CHECK-LABEL: func.func @position_in_kernels
// CHECK-SAME: (%[[POS:.*]]: memref<i32>, %[[CACHE:.*]]: memref<16x4xf32>, %[[X:.*]]: memref<4xf32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[P:.*]] = memref.load %[[POS]][]
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[P]]
// CHECK-NEXT: %[[SLOT:.*]] = memref.subview %[[CACHE]][%[[I]], 0]
// CHECK: memref.store %{{.*}}, %[[SLOT]]
// CHECK: call @linnet_device_synchronize()
// CHECK-NEXT: memref.load %[[POS]][]
// CHECK: gpu.launch
// CHECK: gpu.launch
// EMULATED-LABEL: func.func @position_in_kernels
// EMULATED: gpu.launch
// EMULATED-NEXT: memref.load
func.func @position_in_kernels(%pos: memref<i32>, %cache: memref<16x4xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = memref.load %pos[] : memref<i32>
  %i = arith.index_cast %p : i32 to index
  %slot = memref.subview %cache[%i, 0] [1, 4] [1, 1] : memref<16x4xf32> to memref<4xf32, strided<[1], offset: ?>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<4xf32>
    memref.store %v, %slot[%tx] : memref<4xf32, strided<[1], offset: ?>>
    gpu.terminator
  }
  // A kernel writes the position between the read and the kernel using
  // it: the read stays the host's.
  %q = memref.load %pos[] : memref<i32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %one = arith.constant 1 : i32
    memref.store %one, %pos[] : memref<i32>
    gpu.terminator
  }
  %j = arith.index_cast %q : i32 to index
  %next = memref.subview %cache[%j, 0] [1, 4] [1, 1] : memref<16x4xf32> to memref<4xf32, strided<[1], offset: ?>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %y[%tx] : memref<4xf32>
    memref.store %v, %next[%tx] : memref<4xf32, strided<[1], offset: ?>>
    gpu.terminator
  }
  return
}

// -----

// A function that launches waits at its first access (its caller may have
// left a launch running); a call of it leaves one running; a function that
// does not launch has no wait of its own and its caller waits before
// calling it with a device buffer. A loop whose body launches waits in the
// body, where the next iteration reads.
// CHECK-LABEL: func.func private @launches
// CHECK-NOT: memref.load
// CHECK: call @linnet_device_synchronize()
// CHECK-NEXT: memref.load
// CHECK: gpu.launch
// CHECK-LABEL: func.func private @reads
// CHECK-NOT: linnet_device_synchronize
// CHECK: return
// CHECK-LABEL: func.func @caller
// CHECK: call @launches
// CHECK-NEXT: call @linnet_device_synchronize()
// CHECK-NEXT: call @reads
// CHECK: scf.for
// CHECK-NEXT: call @linnet_device_synchronize()
// CHECK-NEXT: memref.load
// CHECK: gpu.launch
func.func private @launches(%buf: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %buf[%c0] : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %v, %buf[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

func.func private @reads(%buf: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %buf[%c0] : memref<4xf32>
  return %v : f32
}

func.func @caller(%buf: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  call @launches(%buf) : (memref<4xf32>) -> ()
  %v = call @reads(%buf) : (memref<4xf32>) -> f32
  scf.for %i = %c0 to %c3 step %c1 {
    %w = memref.load %buf[%i] : memref<4xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %w, %buf[%tx] : memref<4xf32>
      gpu.terminator
    }
  }
  return %v : f32
}

// -----

// Copies one after the other, with only views and sizes between them, that
// neither read nor write what another writes are one kernel: thread i copies
// element i of them all (here two halves of one buffer, disjoint slices
// ValueBounds tells apart, and a buffer of its own).
// CHECK-LABEL: func.func @copies_in_one_kernel
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @copies_in_one_kernel(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<4xf32>) {
  %whole = memref.alloc() : memref<16xf32>
  %low = memref.subview %whole[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  memref.copy %a, %low : memref<8xf32> to memref<8xf32, strided<[1]>>
  %high = memref.subview %whole[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  memref.copy %b, %high : memref<8xf32> to memref<8xf32, strided<[1], offset: 8>>
  %other = memref.alloc() : memref<4xf32>
  memref.copy %c, %other : memref<4xf32> to memref<4xf32>
  "test.use"(%whole, %other) : (memref<16xf32>, memref<4xf32>) -> ()
  return
}

// -----

// A copy that reads what the one before writes, or writes a slice that may
// overlap it, is a kernel of its own; so is one after an op with memory
// effects.
// CHECK-LABEL: func.func @dependent_copies
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @dependent_copies(%a: memref<8xf32>, %i: index) {
  %t = memref.alloc() : memref<8xf32>
  memref.copy %a, %t : memref<8xf32> to memref<8xf32>
  %u = memref.alloc() : memref<8xf32>
  memref.copy %t, %u : memref<8xf32> to memref<8xf32>
  %whole = memref.alloc() : memref<16xf32>
  %at = memref.subview %whole[%i] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: ?>>
  memref.copy %u, %at : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %a[%c0] : memref<8xf32>
  %low = memref.subview %whole[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  memref.copy %t, %low : memref<8xf32> to memref<8xf32, strided<[1]>>
  "test.use"(%whole) : (memref<16xf32>) -> ()
  return
}

// -----

// Two arguments of an entry (public: the runtime's distinct buffers) may be
// written by one kernel; two of a private function may be one buffer where
// a call passes one buffer twice, not where every call passes distinct ones
// (allocations, distinct arguments of its caller, a callee's fresh result).
// CHECK-LABEL: func.func @entry_arguments
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func private @private_arguments
// CHECK-COUNT-2: gpu.launch
// CHECK-LABEL: func.func private @distinct_arguments
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func private @fresh
func.func @entry_arguments(%a: memref<4xf32>, %b: memref<4xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  memref.copy %a, %x : memref<4xf32> to memref<4xf32>
  memref.copy %b, %y : memref<4xf32> to memref<4xf32>
  call @private_arguments(%a, %b, %x, %x) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  %f = call @fresh() : () -> memref<4xf32>
  %z = memref.alloc() : memref<4xf32>
  call @distinct_arguments(%a, %f, %x, %z) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return
}
func.func private @private_arguments(%a: memref<4xf32>, %b: memref<4xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  memref.copy %a, %x : memref<4xf32> to memref<4xf32>
  memref.copy %b, %y : memref<4xf32> to memref<4xf32>
  return
}
func.func private @distinct_arguments(%a: memref<4xf32>, %b: memref<4xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  memref.copy %a, %x : memref<4xf32> to memref<4xf32>
  memref.copy %b, %y : memref<4xf32> to memref<4xf32>
  return
}
func.func private @fresh() -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  return %m : memref<4xf32>
}
