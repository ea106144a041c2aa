// linnet-lower-to-linalg{keep-prompt-attention} leaves an attention inside
// a dispatch region whose configuration tiles its queries (the CUDA
// target's tile of a prompt, run by its tensor-core kernel); it lowers one
// whose configuration keeps the queries whole, and one outside every
// region, as without the option.
// RUN: linnet-opt %s --linnet-lower-to-linalg="keep-prompt-attention" | FileCheck %s

// CHECK-LABEL: func.func @queries_tiled
// CHECK: scf.forall
// CHECK: linnet.attention
// CHECK-NOT: linalg.generic
// CHECK: scf.forall.in_parallel
func.func @queries_tiled(%q: tensor<1x4x64x16xbf16>, %k: tensor<1x2x64x16xbf16>,
    %v: tensor<1x2x64x16xbf16>, %offset: tensor<1xi32>, %scale: f32,
    %out: tensor<1x4x64x16xbf16>) -> tensor<1x4x64x16xbf16> {
  %r = scf.forall (%h) in (4) shared_outs(%o = %out) -> (tensor<1x4x64x16xbf16>) {
    %qs = tensor.extract_slice %q[0, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x4x64x16xbf16> to tensor<1x1x64x16xbf16>
    %ks = tensor.extract_slice %k[0, 0, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x2x64x16xbf16> to tensor<1x1x64x16xbf16>
    %vs = tensor.extract_slice %v[0, 0, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x2x64x16xbf16> to tensor<1x1x64x16xbf16>
    %os = tensor.extract_slice %o[0, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x4x64x16xbf16> to tensor<1x1x64x16xbf16>
    %a = linnet.attention %qs, %ks, %vs, %offset, %scale into %os
        {linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 64], reduction = [0, 0, 0], vector = [0, 0, 0]>}
        : (tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1xi32>, f32, tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %a into %o[0, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x1x64x16xbf16> into tensor<1x4x64x16xbf16>
    }
  }
  return %r : tensor<1x4x64x16xbf16>
}

// CHECK-LABEL: func.func @queries_whole
// CHECK-NOT: linnet.attention
// CHECK: linalg.generic
func.func @queries_whole(%q: tensor<1x4x64x16xbf16>, %k: tensor<1x2x64x16xbf16>,
    %v: tensor<1x2x64x16xbf16>, %offset: tensor<1xi32>, %scale: f32,
    %out: tensor<1x4x64x16xbf16>) -> tensor<1x4x64x16xbf16> {
  %r = scf.forall (%h) in (4) shared_outs(%o = %out) -> (tensor<1x4x64x16xbf16>) {
    %qs = tensor.extract_slice %q[0, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x4x64x16xbf16> to tensor<1x1x64x16xbf16>
    %ks = tensor.extract_slice %k[0, 0, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x2x64x16xbf16> to tensor<1x1x64x16xbf16>
    %vs = tensor.extract_slice %v[0, 0, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x2x64x16xbf16> to tensor<1x1x64x16xbf16>
    %os = tensor.extract_slice %o[0, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x4x64x16xbf16> to tensor<1x1x64x16xbf16>
    %a = linnet.attention %qs, %ks, %vs, %offset, %scale into %os
        {linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>}
        : (tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1xi32>, f32, tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %a into %o[0, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x1x64x16xbf16> into tensor<1x4x64x16xbf16>
    }
  }
  return %r : tensor<1x4x64x16xbf16>
}

// CHECK-LABEL: func.func @outside_regions
// CHECK-NOT: linnet.attention
// CHECK: linalg.generic
func.func @outside_regions(%q: tensor<1x4x64x16xbf16>, %k: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x16xbf16>, %offset: tensor<1xi32>,
    %scale: f32, %out: tensor<1x4x64x16xbf16>) -> tensor<1x4x64x16xbf16> {
  %a = linnet.attention %q, %k, %v, %offset, %scale into %out
      {linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 64], reduction = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<1x4x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1xi32>, f32, tensor<1x4x64x16xbf16>) -> tensor<1x4x64x16xbf16>
  return %a : tensor<1x4x64x16xbf16>
}
