// RUN: linnet-opt %s --split-input-file --linnet-cpu-use-bf16-dot-products | FileCheck %s

// A 2x2 register tile of dot products along k with 32 bf16 lanes each (the
// form carryUnreducedLanes leaves): the loop carries 16 f32 lanes per output
// instead, each updated by one dot product of bf16 pairs, and the sum after
// the loop reads those.
// CHECK-LABEL: func.func @register_tile
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<2x2x16xf32>
// CHECK: %[[LOOP:.+]]:2 = scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %[[ACC:.+]] = %[[ZERO]])
// CHECK-DAG: %[[X:.+]] = vector.transfer_read {{.+}} vector<2x2x32xbf16>
// CHECK-DAG: %[[Y:.+]] = vector.transfer_read {{.+}} vector<2x2x32xbf16>
// CHECK: %[[X00:.+]] = vector.extract %[[X]][0, 0] : vector<32xbf16>
// CHECK: %[[Y00:.+]] = vector.extract %[[Y]][0, 0] : vector<32xbf16>
// CHECK: %[[A00:.+]] = vector.extract %[[ACC]][0, 0] : vector<16xf32>
// CHECK: %[[D00:.+]] = x86vector.avx512.dot %[[A00]], %[[X00]], %[[Y00]] : vector<32xbf16> -> vector<16xf32>
// CHECK: vector.insert %[[D00]], %[[ACC]] [0, 0]
// CHECK-COUNT-3: x86vector.avx512.dot
// CHECK-NOT: vector.fma
// CHECK: vector.multi_reduction <add>, %[[LOOP]]#1, %{{.+}} [2] : vector<2x2x16xf32> to vector<2x2xf32>
func.func @register_tile(%a: tensor<2x256xbf16>, %b: tensor<2x256xbf16>, %init: vector<2x2xf32>) -> vector<2x2xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : bf16
  %zero = arith.constant dense<0.0> : vector<2x2x32xf32>
  %lanes = scf.for %k = %c0 to %c256 step %c32 iter_args(%acc = %zero) -> (vector<2x2x32xf32>) {
    %x = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true, true], permutation_map = affine_map<(d0, d1) -> (d0, 0, d1)>} : tensor<2x256xbf16>, vector<2x2x32xbf16>
    %y = vector.transfer_read %b[%c0, %k], %pad {in_bounds = [true, true, true], permutation_map = affine_map<(d0, d1) -> (0, d0, d1)>} : tensor<2x256xbf16>, vector<2x2x32xbf16>
    %xf = arith.extf %x : vector<2x2x32xbf16> to vector<2x2x32xf32>
    %yf = arith.extf %y : vector<2x2x32xbf16> to vector<2x2x32xf32>
    %next = vector.fma %xf, %yf, %acc : vector<2x2x32xf32>
    scf.yield %next : vector<2x2x32xf32>
  }
  %sum = vector.multi_reduction <add>, %lanes, %init [2] : vector<2x2x32xf32> to vector<2x2xf32>
  return %sum : vector<2x2xf32>
}

// -----

// One output with 64 lanes (a single row's dot product): two dot products
// of 32 bf16 lanes into the two halves of 32 f32 lanes.
// CHECK-LABEL: func.func @long_row
// CHECK: scf.for {{.+}} -> (vector<64xf32>, vector<32xf32>)
// CHECK: %[[LO:.+]] = vector.extract_strided_slice %{{.+}} {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
// CHECK: %[[D0:.+]] = x86vector.avx512.dot %[[LO]]
// CHECK: vector.insert_strided_slice %[[D0]], %{{.+}} {offsets = [0], strides = [1]} : vector<16xf32> into vector<32xf32>
// CHECK: vector.extract_strided_slice %{{.+}} {offsets = [16], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
// CHECK: x86vector.avx512.dot
// CHECK: vector.insert_strided_slice %{{.+}}, %{{.+}} {offsets = [16], strides = [1]} : vector<16xf32> into vector<32xf32>
// CHECK: vector.multi_reduction <add>, %{{.+}}, %{{.+}} [0] : vector<32xf32> to f32
func.func @long_row(%a: tensor<256xbf16>, %b: tensor<256xbf16>) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : bf16
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %lanes = scf.for %k = %c0 to %c256 step %c64 iter_args(%acc = %zero) -> (vector<64xf32>) {
    %x = vector.transfer_read %a[%k], %pad {in_bounds = [true]} : tensor<256xbf16>, vector<64xbf16>
    %y = vector.transfer_read %b[%k], %pad {in_bounds = [true]} : tensor<256xbf16>, vector<64xbf16>
    %xf = arith.extf %x : vector<64xbf16> to vector<64xf32>
    %yf = arith.extf %y : vector<64xbf16> to vector<64xf32>
    %next = vector.fma %xf, %yf, %acc : vector<64xf32>
    scf.yield %next : vector<64xf32>
  }
  %sum = vector.multi_reduction <add>, %lanes, %f0 [0] : vector<64xf32> to f32
  return %sum : f32
}

// -----

// Left alone: f32 operands (nothing to pair), an accumulator that does not
// start at zero, lanes read other than through a sum along them, and a lane
// count the instruction does not take.
// CHECK-LABEL: func.func @not_paired
// CHECK-NOT: x86vector
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: x86vector
func.func @not_paired(%a: tensor<256xbf16>, %af: tensor<256xf32>, %start: vector<32xf32>) -> (f32, f32, vector<32xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c240 = arith.constant 240 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : bf16
  %padf = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %zero24 = arith.constant dense<0.0> : vector<24xf32>
  %wide = scf.for %k = %c0 to %c256 step %c32 iter_args(%acc = %zero) -> (vector<32xf32>) {
    %x = vector.transfer_read %af[%k], %padf {in_bounds = [true]} : tensor<256xf32>, vector<32xf32>
    %next = vector.fma %x, %x, %acc : vector<32xf32>
    scf.yield %next : vector<32xf32>
  }
  %s0 = vector.multi_reduction <add>, %wide, %padf [0] : vector<32xf32> to f32
  %started = scf.for %k = %c0 to %c256 step %c32 iter_args(%acc = %start) -> (vector<32xf32>) {
    %x = vector.transfer_read %a[%k], %pad {in_bounds = [true]} : tensor<256xbf16>, vector<32xbf16>
    %xf = arith.extf %x : vector<32xbf16> to vector<32xf32>
    %next = vector.fma %xf, %xf, %acc : vector<32xf32>
    scf.yield %next : vector<32xf32>
  }
  %s1 = vector.multi_reduction <add>, %started, %padf [0] : vector<32xf32> to f32
  %kept = scf.for %k = %c0 to %c256 step %c32 iter_args(%acc = %zero) -> (vector<32xf32>) {
    %x = vector.transfer_read %a[%k], %pad {in_bounds = [true]} : tensor<256xbf16>, vector<32xbf16>
    %xf = arith.extf %x : vector<32xbf16> to vector<32xf32>
    %next = vector.fma %xf, %xf, %acc : vector<32xf32>
    scf.yield %next : vector<32xf32>
  }
  %odd = scf.for %k = %c0 to %c240 step %c24 iter_args(%acc = %zero24) -> (vector<24xf32>) {
    %x = vector.transfer_read %a[%k], %pad {in_bounds = [true]} : tensor<256xbf16>, vector<24xbf16>
    %xf = arith.extf %x : vector<24xbf16> to vector<24xf32>
    %next = vector.fma %xf, %xf, %acc : vector<24xf32>
    scf.yield %next : vector<24xf32>
  }
  %s3 = vector.multi_reduction <add>, %odd, %padf [0] : vector<24xf32> to f32
  return %s0, %s1, %kept, %s3 : f32, f32, vector<32xf32>, f32
}
