// linnet-cuda-reduce-trigonometric: each sine and cosine of an f32 becomes
// the same function, with `afn` (`sin.approx.f32` on the GPU), of its
// argument reduced to [-pi, pi] in f64 (x - k * 2 pi by two fused
// multiply-adds, k = roundeven(x / 2 pi)); an f64 one, or one already `afn`,
// is left. Such an op is then no dispatch region of its own.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-reduce-trigonometric))" | FileCheck %s
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-reduce-trigonometric,linnet-cuda-select-lowering-config))" | FileCheck %s --check-prefix=CONFIG
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-select-lowering-config))" | FileCheck %s --check-prefix=FULL
// On the emulated device, rope angles up to 2^18 radians (sin and cos times
// 1e5, rounded; Python's math.sin and math.cos of the same f32 values give
// the same integers):
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s --check-prefix=EMULATED

// CHECK-LABEL: func.func @tables(
// CHECK: %[[X:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %{{.*}} : f64
// CHECK: %[[K:.*]] = math.roundeven %[[T]] : f64
// CHECK: %[[N:.*]] = arith.negf %[[K]] : f64
// CHECK: %[[H:.*]] = math.fma %[[N]], %{{.*}}, %[[X]] : f64
// CHECK: %[[R:.*]] = math.fma %[[N]], %{{.*}}, %[[H]] : f64
// CHECK: %[[F:.*]] = arith.truncf %[[R]] : f64 to f32
// CHECK: math.sin %[[F]] fastmath<afn> : f32
// CHECK: math.roundeven
// CHECK: math.cos %{{.*}} fastmath<afn> : f32
// CHECK-LABEL: func.func @left(
// CHECK-NOT: math.roundeven
// CHECK: math.sin %{{.*}} : f64
// CHECK: math.cos %{{.*}} fastmath<afn> : f32
// CONFIG-LABEL: func.func @tables(
// CONFIG-NOT: linnet.own_region
// CONFIG: return
// FULL-LABEL: func.func @tables(
// FULL: linnet.own_region
// EMULATED: ( 79305, -74509, 14112, 44775, 22346 )
// EMULATED-NEXT: ( -60916, -66696, -98999, -89416, 97471 )

#k = affine_map<(k) -> (k)>

func.func @angles() -> tensor<5xf32> {
  %a = arith.constant dense<[262143.0, 77777.25, 3.0, -100000.5, 200000.296875]> : tensor<5xf32>
  return %a : tensor<5xf32>
}

func.func @tables(%x: tensor<5xf32>) -> (tensor<5xi32>, tensor<5xi32>) {
  %e = tensor.empty() : tensor<5xi32>
  %r:2 = linalg.generic {indexing_maps = [#k, #k, #k], iterator_types = ["parallel"]}
      ins(%x : tensor<5xf32>) outs(%e, %e : tensor<5xi32>, tensor<5xi32>) {
  ^bb0(%a: f32, %o: i32, %p: i32):
    %scale = arith.constant 1.0e5 : f32
    %s = math.sin %a : f32
    %c = math.cos %a : f32
    %ss = arith.mulf %s, %scale : f32
    %cs = arith.mulf %c, %scale : f32
    %sr = math.round %ss : f32
    %cr = math.round %cs : f32
    %si = arith.fptosi %sr : f32 to i32
    %ci = arith.fptosi %cr : f32 to i32
    linalg.yield %si, %ci : i32, i32
  } -> (tensor<5xi32>, tensor<5xi32>)
  return %r#0, %r#1 : tensor<5xi32>, tensor<5xi32>
}

func.func @left(%x: f64, %y: f32) -> (f64, f32) {
  %s = math.sin %x : f64
  %c = math.cos %y fastmath<afn> : f32
  return %s, %c : f64, f32
}

func.func @print(%t: tensor<5xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %a = tensor.extract %t[%c0] : tensor<5xi32>
  %b = tensor.extract %t[%c1] : tensor<5xi32>
  %c = tensor.extract %t[%c2] : tensor<5xi32>
  %d = tensor.extract %t[%c3] : tensor<5xi32>
  %e = tensor.extract %t[%c4] : tensor<5xi32>
  %v = vector.from_elements %a, %b, %c, %d, %e : vector<5xi32>
  vector.print %v : vector<5xi32>
  return
}

func.func @main() {
  %x = func.call @angles() : () -> tensor<5xf32>
  %s, %c = func.call @tables(%x) : (tensor<5xf32>) -> (tensor<5xi32>, tensor<5xi32>)
  func.call @print(%s) : (tensor<5xi32>) -> ()
  func.call @print(%c) : (tensor<5xi32>) -> ()
  return
}
