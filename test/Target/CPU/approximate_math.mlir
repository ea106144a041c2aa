// linnet-cpu-approximate-math alone: exp, expm1, log, log1p and log2 of f32
// (scalars and vectors of any rank) become arithmetic (a polynomial after
// range reduction) instead of calls that LLVM would make once per lane; other
// math ops are left. Numerically: softmax.mlir (exp) and the model tests
// (exp, log1p) through the whole pipeline.
// RUN: linnet-opt %s --linnet-cpu-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @approximated
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: math.fma {{.*}} : vector<1x1x32xf32>
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: math.fma {{.*}} : f32
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: math.sqrt
// CHECK: return
func.func @approximated(%x: vector<1x1x32xf32>, %y: vector<8xf32>, %z: f32)
    -> (vector<1x1x32xf32>, vector<8xf32>, f32, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
  %a = math.exp %x : vector<1x1x32xf32>
  %b = math.log1p %y : vector<8xf32>
  %c = math.log %z : f32
  %d = math.expm1 %y : vector<8xf32>
  %e = math.log2 %y : vector<8xf32>
  %f = math.sqrt %y : vector<8xf32>
  return %a, %b, %c, %d, %e, %f : vector<1x1x32xf32>, vector<8xf32>, f32, vector<8xf32>, vector<8xf32>, vector<8xf32>
}
