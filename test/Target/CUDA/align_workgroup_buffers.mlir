// linnet-cuda-align-workgroup-buffers alone: every workgroup buffer of every
// kernel is 16-byte aligned (bf16 stages of a tensor-core product, read and
// written 16 bytes at a time, would otherwise be `.shared .align 2`); one
// aligned more already keeps its alignment.
// RUN: linnet-opt %s --linnet-cuda-align-workgroup-buffers | FileCheck %s

// CHECK-LABEL: gpu.func @stages
// CHECK-SAME: workgroup(%{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-LABEL: gpu.func @wider
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64xi8, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
// CHECK-LABEL: gpu.func @none
// CHECK-NOT: llvm.align
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @stages() workgroup(%a: memref<2560xbf16, #gpu.address_space<workgroup>>, %b: memref<2560xbf16, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
    gpu.func @wider() workgroup(%a: memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 4 : i64}, %b: memref<64xi8, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}) kernel {
      gpu.return
    }
    gpu.func @none() kernel {
      gpu.return
    }
  }
}
