// linnet-cuda-lower-grid-waits alone: a kernel with grid waits gets a public
// i64 counter of its own in global memory, `<kernel>_grid_arrivals` (which
// the runtime looks for to launch it cooperatively); each wait is a
// barrier, then the block's first thread fences, adds one to the counter
// (GPU scope), polls it with acquiring loads until it reaches the next
// multiple of the grid, fences, and a second barrier; the kernel may use
// every register and forgets its known grid size. A kernel with no wait
// is left alone; a wait inside a branch is refused by the op's verifier.
// RUN: linnet-opt %s --linnet-cuda-lower-grid-waits --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.module @chained_kernels
// CHECK: memref.global "public" @phases_grid_arrivals : memref<1xi64, #gpu.address_space<global>> = dense<0> {alignment = 8 : i64}
// The runtime may launch fewer blocks than the launch's grid, so the grid
// is no longer known to the kernel; it may take every register.
// CHECK-LABEL: gpu.func @phases
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.maxnreg = 255 : i32}
// CHECK: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK:   %[[COUNTER:.*]] = memref.get_global @phases_grid_arrivals
// CHECK:   %[[POINTER:.*]] = llvm.inttoptr
// CHECK:   llvm.fence syncscope("device") acq_rel
// CHECK:   %[[BEFORE:.*]] = llvm.atomicrmw add %[[POINTER]], %{{.*}} syncscope("device") acq_rel
// CHECK:   %[[GRID:.*]] = gpu.grid_dim x
// CHECK:   %[[ROUND:.*]] = arith.divui %[[BEFORE]]
// CHECK:   scf.while
// CHECK:     llvm.load %[[POINTER]] atomic syncscope("device") acquire
// CHECK:     arith.cmpi ult
// CHECK:   llvm.fence syncscope("device") acq_rel
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.load
// CHECK-NOT: linnet.grid_wait
// CHECK-LABEL: gpu.func @plain
// CHECK-NOT: gpu.barrier
gpu.module @chained_kernels {
  gpu.func @phases(%x: memref<64xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %b = gpu.block_id x
    memref.store %one, %x[%b] : memref<64xf32>
    linnet.grid_wait
    %v = memref.load %x[%c0] : memref<64xf32>
    memref.store %v, %x[%b] : memref<64xf32>
    gpu.return
  }
  gpu.func @plain(%x: memref<64xf32>) kernel {
    gpu.return
  }
}

// -----

gpu.module @branch_kernels {
  gpu.func @branch(%x: memref<64xf32>, %c: i1) kernel {
    scf.if %c {
      // expected-error @below {{'linnet.grid_wait' op must be at the top level of a gpu.launch's body or a gpu.func's, not in scf.if}}
      linnet.grid_wait
    }
    gpu.return
  }
}
