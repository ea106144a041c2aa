// RUN: linnet-opt %s --linnet-cpu-keep-f32-in-kernels | FileCheck %s

// bf16 operations as arith-emulate-unsupported-floats leaves them: each
// computed in f32 and rounded. The sum that feeds the product is read as the
// f32 value it was; the product, which is stored, stays rounded.
// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[A:.+]]: vector<32xbf16>, %[[B:.+]]: vector<32xbf16>, %[[OUT:.+]]: memref<32xbf16>)
// CHECK: %[[AF:.+]] = arith.extf %[[A]]
// CHECK: %[[BF:.+]] = arith.extf %[[B]]
// CHECK: %[[SUM:.+]] = arith.addf %[[AF]], %[[BF]] : vector<32xf32>
// CHECK-NOT: arith.truncf %[[SUM]]
// CHECK: %[[PRODUCT:.+]] = arith.mulf %[[SUM]], %[[BF]] : vector<32xf32>
// CHECK: %[[ROUNDED:.+]] = arith.truncf %[[PRODUCT]] : vector<32xf32> to vector<32xbf16>
// CHECK: vector.store %[[ROUNDED]], %[[OUT]]
func.func @fused(%a: vector<32xbf16>, %b: vector<32xbf16>, %out: memref<32xbf16>) {
  %c0 = arith.constant 0 : index
  %af = arith.extf %a : vector<32xbf16> to vector<32xf32>
  %bf = arith.extf %b : vector<32xbf16> to vector<32xf32>
  %sum = arith.addf %af, %bf : vector<32xf32>
  %sum16 = arith.truncf %sum : vector<32xf32> to vector<32xbf16>
  %sumf = arith.extf %sum16 : vector<32xbf16> to vector<32xf32>
  %product = arith.mulf %sumf, %bf : vector<32xf32>
  %product16 = arith.truncf %product : vector<32xf32> to vector<32xbf16>
  vector.store %product16, %out[%c0] : memref<32xbf16>, vector<32xbf16>
  return
}

// A rounding to f16 is not bf16 emulation: it stays.
// CHECK-LABEL: func.func @half
// CHECK: arith.truncf
// CHECK: arith.extf
func.func @half(%x: f32) -> f32 {
  %h = arith.truncf %x : f32 to f16
  %y = arith.extf %h : f16 to f32
  return %y : f32
}
