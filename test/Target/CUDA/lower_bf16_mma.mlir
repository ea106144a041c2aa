// linnet-cuda-lower-bf16-mma alone: an nvgpu.mma.sync on bf16 (which MLIR
// 22's convert-nvgpu-to-nvvm refuses) as nvvm.mma.sync, each pair of bf16
// packed in an i32 (the first in the low half), the f32 sums one by one;
// f16 is left to upstream. Then the whole NVVM path to PTX.
// RUN: linnet-opt %s --linnet-cuda-lower-bf16-mma --canonicalize | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-lower-bf16-mma --convert-nvgpu-to-nvvm --convert-vector-to-llvm --convert-gpu-to-nvvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=NVVM

// CHECK-LABEL: gpu.func @bf16
// CHECK-NOT: nvgpu.mma.sync
// CHECK-COUNT-6: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  B[%{{.*}}, %{{.*}}]  C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: gpu.func @f16
// CHECK: nvgpu.mma.sync
// NVVM-LABEL: llvm.func @bf16
// NVVM: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
gpu.module @kernels {
  gpu.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>, %out: memref<1xvector<2x2xf32>>) kernel {
    %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    memref.store %d, %out[%c0] : memref<1xvector<2x2xf32>>
    gpu.return
  }
  gpu.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>, %out: memref<1xvector<2x2xf32>>) kernel {
    %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    memref.store %d, %out[%c0] : memref<1xvector<2x2xf32>>
    gpu.return
  }
}
