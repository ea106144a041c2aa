// linnet-cuda-lower-bf16-mma refuses a bf16 mma.sync of another shape
// (m16n8k8) rather than leave it to fail later without a reason.
// RUN: linnet-opt %s --linnet-cuda-lower-bf16-mma --verify-diagnostics

gpu.module @kernels {
  gpu.func @k8(%a: vector<2x2xbf16>, %b: vector<1x2xbf16>, %c: vector<2x2xf32>, %out: memref<1xvector<2x2xf32>>) kernel {
    // expected-error @+1 {{'nvgpu.mma.sync' op on bf16 is lowered only as m16n8k16 with f32 sums}}
    %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 8]} : (vector<2x2xbf16>, vector<1x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    memref.store %d, %out[%c0] : memref<1xvector<2x2xf32>>
    gpu.return
  }
}
