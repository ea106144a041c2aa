// Every linnet operation prints and parses back unchanged, with static and
// dynamic shapes and with optional operands present and absent.
// RUN: linnet-opt %s | linnet-opt | FileCheck %s

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x4x3x8xbf16>, %k: tensor<2x2x5x8xbf16>,
                     %v: tensor<2x2x5x6xbf16>, %offset: tensor<2xi32>,
                     %scale: f32, %lengths: tensor<2xi32>)
    -> (tensor<2x4x3x6xbf16>, tensor<2x4x3x6xbf16>) {
  %init_0 = tensor.empty() : tensor<2x4x3x6xbf16>
  // CHECK: linnet.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} :
  // CHECK-SAME: (tensor<2x4x3x8xbf16>, tensor<2x2x5x8xbf16>, tensor<2x2x5x6xbf16>, tensor<2xi32>, f32, tensor<2x4x3x6xbf16>) -> tensor<2x4x3x6xbf16>
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<2x4x3x8xbf16>, tensor<2x2x5x8xbf16>, tensor<2x2x5x6xbf16>,
         tensor<2xi32>, f32, tensor<2x4x3x6xbf16>) -> tensor<2x4x3x6xbf16>
  %init_1 = tensor.empty() : tensor<2x4x3x6xbf16>
  // CHECK: linnet.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lengths %{{.*}} into %{{.*}} :
  // CHECK-SAME: tensor<2xi32>, f32, tensor<2xi32>, tensor<2x4x3x6xbf16>) -> tensor<2x4x3x6xbf16>
  %1 = linnet.attention %q, %k, %v, %offset, %scale lengths %lengths into %init_1
      : (tensor<2x4x3x8xbf16>, tensor<2x2x5x8xbf16>, tensor<2x2x5x6xbf16>,
         tensor<2xi32>, f32, tensor<2xi32>, tensor<2x4x3x6xbf16>) -> tensor<2x4x3x6xbf16>
  return %0, %1 : tensor<2x4x3x6xbf16>, tensor<2x4x3x6xbf16>
}

// CHECK-LABEL: func.func @attention_dynamic
func.func @attention_dynamic(%q: tensor<?x?x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                             %v: tensor<?x2x?x64xf32>, %offset: tensor<?xi32>,
                             %scale: f32) -> tensor<?x?x?x64xf32> {
  %init_0_c0 = arith.constant 0 : index
  %init_0_d0 = tensor.dim %q, %init_0_c0 : tensor<?x?x?x64xf32>
  %init_0_c1 = arith.constant 1 : index
  %init_0_d1 = tensor.dim %q, %init_0_c1 : tensor<?x?x?x64xf32>
  %init_0_c2 = arith.constant 2 : index
  %init_0_d2 = tensor.dim %q, %init_0_c2 : tensor<?x?x?x64xf32>
  %init_0 = tensor.empty(%init_0_d0, %init_0_d1, %init_0_d2) : tensor<?x?x?x64xf32>
  // CHECK: linnet.attention
  // CHECK-SAME: -> tensor<?x?x?x64xf32>
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<?x?x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>,
         tensor<?xi32>, f32, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// A tile of queries from %start on, and the op on buffers (no result).
// CHECK-LABEL: func.func @attention_start
// CHECK: linnet.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lengths %{{.*}} from %{{.*}} into %{{.*}} :
// CHECK-SAME: tensor<2xi32>, f32, tensor<2xi32>, index, tensor<2x4x3x6xbf16>) -> tensor<2x4x3x6xbf16>
// CHECK: linnet.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} from %{{.*}} into %{{.*}} :
// CHECK-SAME: (memref<2x4x3x8xbf16>, memref<2x2x5x8xbf16>, memref<2x2x5x6xbf16>, memref<2xi32>, f32, index, memref<2x4x3x6xbf16>) -> ()
func.func @attention_start(%q: tensor<2x4x3x8xbf16>, %k: tensor<2x2x5x8xbf16>,
                           %v: tensor<2x2x5x6xbf16>, %offset: tensor<2xi32>,
                           %scale: f32, %lengths: tensor<2xi32>, %start: index,
                           %init: tensor<2x4x3x6xbf16>,
                           %bq: memref<2x4x3x8xbf16>, %bk: memref<2x2x5x8xbf16>,
                           %bv: memref<2x2x5x6xbf16>, %boffset: memref<2xi32>,
                           %bout: memref<2x4x3x6xbf16>)
    -> tensor<2x4x3x6xbf16> {
  %0 = linnet.attention %q, %k, %v, %offset, %scale lengths %lengths from %start into %init
      : (tensor<2x4x3x8xbf16>, tensor<2x2x5x8xbf16>, tensor<2x2x5x6xbf16>,
         tensor<2xi32>, f32, tensor<2xi32>, index, tensor<2x4x3x6xbf16>) -> tensor<2x4x3x6xbf16>
  linnet.attention %bq, %bk, %bv, %boffset, %scale from %start into %bout
      : (memref<2x4x3x8xbf16>, memref<2x2x5x8xbf16>, memref<2x2x5x6xbf16>,
         memref<2xi32>, f32, index, memref<2x4x3x6xbf16>) -> ()
  return %0 : tensor<2x4x3x6xbf16>
}

// On buffers (bufferized as an op): no results.
// CHECK-LABEL: func.func @delta_rule_buffers
// CHECK: linnet.delta_rule %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} outs(%{{.*}}, %{{.*}}) :
// CHECK-SAME: memref<?x?x3x6xf32>, memref<?x3x4x6xf32>) -> ()
func.func @delta_rule_buffers(%q: memref<?x?x3x4xf32>, %k: memref<?x?x3x4xf32>,
                              %v: memref<?x?x3x6xf32>, %beta: memref<?x?x3xf32>,
                              %g: memref<?x?x3xf32>, %init: memref<?x3x4x6xf32>,
                              %lengths: memref<?xi32>, %out: memref<?x?x3x6xf32>) {
  linnet.delta_rule %q, %k, %v, %beta, %g, %lengths outs(%out, %init)
      : (memref<?x?x3x4xf32>, memref<?x?x3x4xf32>, memref<?x?x3x6xf32>,
         memref<?x?x3xf32>, memref<?x?x3xf32>, memref<?xi32>,
         memref<?x?x3x6xf32>, memref<?x3x4x6xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @delta_rule
func.func @delta_rule(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>,
                      %v: tensor<2x5x3x6xf32>, %beta: tensor<2x5x3xf32>,
                      %g: tensor<2x5x3xf32>, %init: tensor<2x3x4x6xf32>,
                      %lengths: tensor<2xi32>)
    -> (tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>) {
  // CHECK: %[[E:.*]] = tensor.empty
  // CHECK: %{{.*}}, %{{.*}} = linnet.delta_rule %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} outs(%[[E]], %{{.*}}) :
  // CHECK-SAME: -> (tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
  %empty = tensor.empty() : tensor<2x5x3x6xf32>
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%empty, %init)
      : (tensor<2x5x3x4xf32>, tensor<2x5x3x4xf32>, tensor<2x5x3x6xf32>,
         tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2xi32>,
         tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
      -> (tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
  return %out, %final : tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>
}

// CHECK-LABEL: func.func @causal_conv
func.func @causal_conv(%x: tensor<2x?x3xbf16>, %taps: tensor<3x4xbf16>,
                       %history: tensor<2x3x3xbf16>, %lengths: tensor<2xi32>)
    -> (tensor<2x?x3xbf16>, tensor<2x3x3xbf16>) {
  // CHECK: %{{.*}}, %{{.*}} = linnet.causal_conv %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
  // CHECK-SAME: (tensor<2x?x3xbf16>, tensor<3x4xbf16>, tensor<2x3x3xbf16>, tensor<2xi32>) -> (tensor<2x?x3xbf16>, tensor<2x3x3xbf16>)
  %y, %h = linnet.causal_conv %x, %taps, %history, %lengths
      : (tensor<2x?x3xbf16>, tensor<3x4xbf16>, tensor<2x3x3xbf16>,
         tensor<2xi32>) -> (tensor<2x?x3xbf16>, tensor<2x3x3xbf16>)
  return %y, %h : tensor<2x?x3xbf16>, tensor<2x3x3xbf16>
}

// CHECK-LABEL: func.func @expert_matmul
func.func @expert_matmul(%x: tensor<3x16xf16>, %xk: tensor<3x2x16xf16>,
                         %w: tensor<8x32x16xf16>, %ids: tensor<3x2xi32>)
    -> (tensor<3x2x32xf16>, tensor<3x2x32xf16>) {
  // CHECK: linnet.expert_matmul %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x16xf16>, tensor<8x32x16xf16>, tensor<3x2xi32>) -> tensor<3x2x32xf16>
  %0 = linnet.expert_matmul %x, %w, %ids
      : (tensor<3x16xf16>, tensor<8x32x16xf16>, tensor<3x2xi32>)
      -> tensor<3x2x32xf16>
  // CHECK: linnet.expert_matmul %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x2x16xf16>, tensor<8x32x16xf16>, tensor<3x2xi32>) -> tensor<3x2x32xf16>
  %1 = linnet.expert_matmul %xk, %w, %ids
      : (tensor<3x2x16xf16>, tensor<8x32x16xf16>, tensor<3x2xi32>)
      -> tensor<3x2x32xf16>
  return %0, %1 : tensor<3x2x32xf16>, tensor<3x2x32xf16>
}

// CHECK-LABEL: func.func @topk_and_rank
func.func @topk_and_rank(%x: tensor<4x?xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x?xi32>) {
  // CHECK: %{{.*}}, %{{.*}} = linnet.topk %{{.*}} {k = 8 : i64} : tensor<4x?xf32> -> tensor<4x8xf32>, tensor<4x8xi32>
  %values, %indices = linnet.topk %x {k = 8 : i64}
      : tensor<4x?xf32> -> tensor<4x8xf32>, tensor<4x8xi32>
  // CHECK: linnet.rank %{{.*}} : tensor<4x?xf32> -> tensor<4x?xi32>
  %rank = linnet.rank %x : tensor<4x?xf32> -> tensor<4x?xi32>
  return %values, %indices, %rank
      : tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x?xi32>
}

// CHECK-LABEL: gpu.module @chained_kernels
// CHECK: gpu.func @phases() kernel {
// CHECK-NEXT: linnet.grid_wait
gpu.module @chained_kernels {
  gpu.func @phases() kernel {
    linnet.grid_wait
    gpu.return
  }
}
