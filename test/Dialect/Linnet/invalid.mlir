// Each verifier message of the linnet dialect, once.
// RUN: linnet-opt %s -split-input-file -verify-diagnostics

func.func @attention_rank(%q: tensor<2x3x8xf32>, %k: tensor<2x2x5x8xf32>,
                          %v: tensor<2x2x5x8xf32>, %offset: tensor<2xi32>,
                          %scale: f32) {
  %init_0 = tensor.empty() : tensor<2x4x3x8xf32>
  // expected-error @+1 {{'linnet.attention' op expects `query` of rank 4 ([B, Hq, S, D]), got rank 3}}
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<2x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>,
         tensor<2xi32>, f32, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  return
}

// -----

func.func @attention_element_type(%q: tensor<2x4x3x8xf32>,
                                  %k: tensor<2x2x5x8xbf16>,
                                  %v: tensor<2x2x5x8xf32>,
                                  %offset: tensor<2xi32>, %scale: f32) {
  %init_0 = tensor.empty() : tensor<2x4x3x8xf32>
  // expected-error @+1 {{expects `key` to have element type 'f32' like `query`, got 'bf16'}}
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xbf16>, tensor<2x2x5x8xf32>,
         tensor<2xi32>, f32, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>,
                           %v: tensor<2x2x5x8xf32>, %offset: tensor<2xi32>,
                           %scale: f32, %lengths: tensor<3xi32>) {
  %init_0 = tensor.empty() : tensor<2x4x3x8xf32>
  // expected-error @+1 {{dimension `B` mismatch: `query` axis 0 is 2 but `lengths` axis 0 is 3}}
  %0 = linnet.attention %q, %k, %v, %offset, %scale lengths %lengths into %init_0
      : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>,
         tensor<2xi32>, f32, tensor<3xi32>, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  return
}

// -----

func.func @attention_no_key_heads(%q: tensor<2x4x3x8xf32>,
                                  %k: tensor<2x0x5x8xf32>,
                                  %v: tensor<2x0x5x8xf32>,
                                  %offset: tensor<2xi32>, %scale: f32) {
  %init_0 = tensor.empty() : tensor<2x4x3x8xf32>
  // expected-error @+1 {{expects at least one key head}}
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<2x4x3x8xf32>, tensor<2x0x5x8xf32>, tensor<2x0x5x8xf32>,
         tensor<2xi32>, f32, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<2x4x3x8xf32>, %k: tensor<2x3x5x8xf32>,
                           %v: tensor<2x3x5x8xf32>, %offset: tensor<2xi32>,
                           %scale: f32) {
  %init_0 = tensor.empty() : tensor<2x4x3x8xf32>
  // expected-error @+1 {{expects the 3 key heads to divide the 4 query heads}}
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<2x4x3x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>,
         tensor<2xi32>, f32, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  return
}

// -----

func.func @attention_offset_type(%q: tensor<2x4x3x8xf32>,
                                 %k: tensor<2x2x5x8xf32>,
                                 %v: tensor<2x2x5x8xf32>,
                                 %offset: tensor<2xi64>, %scale: f32) {
  %init_0 = tensor.empty() : tensor<2x4x3x8xf32>
  // expected-error @+1 {{operand #3 must be 1D tensor of 32-bit signless integer values}}
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>,
         tensor<2xi64>, f32, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  return
}

// -----

func.func @attention_mixed(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>,
                           %v: tensor<2x2x5x8xf32>, %offset: tensor<2xi32>,
                           %scale: f32, %out: memref<2x4x3x8xf32>) {
  // expected-error @+1 {{expects its operands all tensors or all buffers}}
  linnet.attention %q, %k, %v, %offset, %scale into %out
      : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>,
         tensor<2xi32>, f32, memref<2x4x3x8xf32>) -> ()
  return
}

// -----

func.func @attention_result_type(%q: tensor<2x4x3x8xf32>,
                                 %k: tensor<2x2x5x8xf32>,
                                 %v: tensor<2x2x5x8xf32>,
                                 %offset: tensor<2xi32>, %scale: f32,
                                 %init: tensor<2x4x3x8xf32>) {
  // expected-error @+1 {{expects its result of its destination's type 'tensor<2x4x3x8xf32>', got 'tensor<2x4x?x8xf32>'}}
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init
      : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>,
         tensor<2xi32>, f32, tensor<2x4x3x8xf32>) -> tensor<2x4x?x8xf32>
  return
}

// -----

func.func @attention_no_result(%q: tensor<2x4x3x8xf32>,
                               %k: tensor<2x2x5x8xf32>,
                               %v: tensor<2x2x5x8xf32>,
                               %offset: tensor<2xi32>, %scale: f32,
                               %init: tensor<2x4x3x8xf32>) {
  // expected-error @+1 {{expects 1 result on tensors, got 0}}
  linnet.attention %q, %k, %v, %offset, %scale into %init
      : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>,
         tensor<2xi32>, f32, tensor<2x4x3x8xf32>) -> ()
  return
}

// -----

func.func @delta_rule_state(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>,
                            %v: tensor<2x5x3x6xf32>, %beta: tensor<2x5x3xf32>,
                            %g: tensor<2x5x3xf32>, %init: tensor<2x3x6x4xf32>,
                            %lengths: tensor<2xi32>) {
  %empty = tensor.empty() : tensor<2x5x3x6xf32>
  // expected-error @+1 {{dimension `K` mismatch: `query` axis 3 is 4 but `initial` axis 2 is 6}}
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%empty, %init)
      : (tensor<2x5x3x4xf32>, tensor<2x5x3x4xf32>, tensor<2x5x3x6xf32>,
         tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2xi32>,
         tensor<2x5x3x6xf32>, tensor<2x3x6x4xf32>)
      -> (tensor<2x5x3x6xf32>, tensor<2x3x6x4xf32>)
  return
}

// -----

func.func @delta_rule_f32(%q: tensor<2x5x3x4xbf16>, %k: tensor<2x5x3x4xf32>,
                          %v: tensor<2x5x3x6xf32>, %beta: tensor<2x5x3xf32>,
                          %g: tensor<2x5x3xf32>, %init: tensor<2x3x4x6xf32>,
                          %lengths: tensor<2xi32>) {
  %empty = tensor.empty() : tensor<2x5x3x6xf32>
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float values or memref of 32-bit float values}}
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%empty, %init)
      : (tensor<2x5x3x4xbf16>, tensor<2x5x3x4xf32>, tensor<2x5x3x6xf32>,
         tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2xi32>,
         tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
      -> (tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
  return
}

// -----

func.func @delta_rule_mixed(%q: memref<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>,
                            %v: tensor<2x5x3x6xf32>, %beta: tensor<2x5x3xf32>,
                            %g: tensor<2x5x3xf32>, %init: tensor<2x3x4x6xf32>,
                            %lengths: tensor<2xi32>, %out: tensor<2x5x3x6xf32>) {
  // expected-error @+1 {{expects its operands all tensors or all buffers}}
  %o, %f = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%out, %init)
      : (memref<2x5x3x4xf32>, tensor<2x5x3x4xf32>, tensor<2x5x3x6xf32>,
         tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2xi32>,
         tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
      -> (tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
  return
}

// -----

func.func @delta_rule_buffer_results(%q: memref<2x5x3x4xf32>, %k: memref<2x5x3x4xf32>,
                                     %v: memref<2x5x3x6xf32>, %beta: memref<2x5x3xf32>,
                                     %g: memref<2x5x3xf32>, %init: memref<2x3x4x6xf32>,
                                     %lengths: memref<2xi32>, %out: memref<2x5x3x6xf32>) {
  // expected-error @+1 {{expects 0 results on buffers, got 2}}
  %o, %f = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%out, %init)
      : (memref<2x5x3x4xf32>, memref<2x5x3x4xf32>, memref<2x5x3x6xf32>,
         memref<2x5x3xf32>, memref<2x5x3xf32>, memref<2xi32>,
         memref<2x5x3x6xf32>, memref<2x3x4x6xf32>)
      -> (tensor<2x5x3x6xf32>, tensor<2x3x4x6xf32>)
  return
}

// -----

func.func @causal_conv_history(%x: tensor<2x5x3xf32>, %taps: tensor<3x4xf32>,
                               %history: tensor<2x2x3xf32>,
                               %lengths: tensor<2xi32>) {
  // expected-error @+1 {{expects `history` to hold W - 1 = 3 rows for 4 taps, got 2}}
  %y, %h = linnet.causal_conv %x, %taps, %history, %lengths
      : (tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<2x2x3xf32>, tensor<2xi32>)
      -> (tensor<2x5x3xf32>, tensor<2x2x3xf32>)
  return
}

// -----

func.func @causal_conv_no_taps(%x: tensor<2x5x3xf32>, %taps: tensor<3x0xf32>,
                               %history: tensor<2x?x3xf32>,
                               %lengths: tensor<2xi32>) {
  // expected-error @+1 {{expects at least one tap}}
  %y, %h = linnet.causal_conv %x, %taps, %history, %lengths
      : (tensor<2x5x3xf32>, tensor<3x0xf32>, tensor<2x?x3xf32>, tensor<2xi32>)
      -> (tensor<2x5x3xf32>, tensor<2x?x3xf32>)
  return
}

// -----

func.func @causal_conv_channels(%x: tensor<2x5x3xf32>, %taps: tensor<4x4xf32>,
                                %history: tensor<2x3x3xf32>,
                                %lengths: tensor<2xi32>) {
  // expected-error @+1 {{dimension `C` mismatch: `input` axis 2 is 3 but `taps` axis 0 is 4}}
  %y, %h = linnet.causal_conv %x, %taps, %history, %lengths
      : (tensor<2x5x3xf32>, tensor<4x4xf32>, tensor<2x3x3xf32>, tensor<2xi32>)
      -> (tensor<2x5x3xf32>, tensor<2x3x3xf32>)
  return
}

// -----

func.func @expert_matmul_rank(%x: tensor<3x2x1x16xf32>,
                              %w: tensor<8x32x16xf32>, %ids: tensor<3x2xi32>) {
  // expected-error @+1 {{expects `input` of rank 2 ([R, In]) or 3 ([R, K, In]), got rank 4}}
  %0 = linnet.expert_matmul %x, %w, %ids
      : (tensor<3x2x1x16xf32>, tensor<8x32x16xf32>, tensor<3x2xi32>)
      -> tensor<3x2x32xf32>
  return
}

// -----

func.func @expert_matmul_in(%x: tensor<3x15xf32>, %w: tensor<8x32x16xf32>,
                            %ids: tensor<3x2xi32>) {
  // expected-error @+1 {{dimension `In` mismatch: `input` axis 1 is 15 but `weights` axis 2 is 16}}
  %0 = linnet.expert_matmul %x, %w, %ids
      : (tensor<3x15xf32>, tensor<8x32x16xf32>, tensor<3x2xi32>)
      -> tensor<3x2x32xf32>
  return
}

// -----

func.func @topk_too_many(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{expects k = 8 to be at most the last dimension 6}}
  %values, %indices = linnet.topk %x {k = 8 : i64}
      : tensor<4x6xf32> -> tensor<4x8xf32>, tensor<4x8xi32>
  return
}

// -----

func.func @topk_result(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{expects the last dimension of `indices` to be k = 2, got 3}}
  %values, %indices = linnet.topk %x {k = 2 : i64}
      : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x3xi32>
  return
}

// -----

func.func @topk_zero(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{attribute 'k' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %values, %indices = linnet.topk %x {k = 0 : i64}
      : tensor<4x6xf32> -> tensor<4x0xf32>, tensor<4x0xi32>
  return
}

// -----

func.func @rank_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{expects `input` of rank at least 1}}
  %0 = linnet.rank %x : tensor<f32> -> tensor<i32>
  return
}

// -----

func.func @rank_result_rank(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{expects `result` of rank 2 like `input`, got rank 1}}
  %0 = linnet.rank %x : tensor<4x6xf32> -> tensor<24xi32>
  return
}

// -----

func.func @rank_leading(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{dimension `d0` mismatch: `input` axis 0 is 4 but `result` axis 0 is 5}}
  %0 = linnet.rank %x : tensor<4x6xf32> -> tensor<5x6xi32>
  return
}

// -----

func.func @grid_wait_outside_kernel() {
  // expected-error @+1 {{must be at the top level of a gpu.launch's body or a gpu.func's, not in func.func}}
  linnet.grid_wait
  return
}
