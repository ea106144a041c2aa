// Deterministic test inputs shared by the numeric tests (prepended to each
// test with `cat`): element [i0, i1, ...] of a generated tensor is
//   scale * sin(seed + 0.37 i0 + 0.71 i1 + 1.13 i2 + 0.53 i3) + bias
// computed in f32; Inputs/reference.py builds the same tensors in numpy.

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI32(tensor<*xi32>)

func.func @sin_value(%i0: index, %i1: index, %i2: index, %i3: index,
                     %seed: f32, %scale: f32, %bias: f32) -> f32 {
  %a0 = arith.constant 0.37 : f32
  %a1 = arith.constant 0.71 : f32
  %a2 = arith.constant 1.13 : f32
  %a3 = arith.constant 0.53 : f32
  %t0 = func.call @term(%a0, %i0) : (f32, index) -> f32
  %t1 = func.call @term(%a1, %i1) : (f32, index) -> f32
  %t2 = func.call @term(%a2, %i2) : (f32, index) -> f32
  %t3 = func.call @term(%a3, %i3) : (f32, index) -> f32
  %s0 = arith.addf %seed, %t0 : f32
  %s1 = arith.addf %s0, %t1 : f32
  %s2 = arith.addf %s1, %t2 : f32
  %s3 = arith.addf %s2, %t3 : f32
  %sin = math.sin %s3 : f32
  %scaled = arith.mulf %sin, %scale : f32
  %value = arith.addf %scaled, %bias : f32
  return %value : f32
}

func.func @term(%a: f32, %index: index) -> f32 {
  %i = arith.index_cast %index : index to i64
  %x = arith.sitofp %i : i64 to f32
  %term = arith.mulf %a, %x : f32
  return %term : f32
}

func.func @sin_2d(%d0: index, %d1: index, %seed: f32, %scale: f32,
                  %bias: f32) -> tensor<?x?xf32> {
  %empty = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %result = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]} outs(%empty : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %v = func.call @sin_value(%i, %j, %c0, %c0, %seed, %scale, %bias)
        : (index, index, index, index, f32, f32, f32) -> f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %result : tensor<?x?xf32>
}

func.func @sin_3d(%d0: index, %d1: index, %d2: index, %seed: f32,
                  %scale: f32, %bias: f32) -> tensor<?x?x?xf32> {
  %empty = tensor.empty(%d0, %d1, %d2) : tensor<?x?x?xf32>
  %result = linalg.generic {
      indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%empty : tensor<?x?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c0 = arith.constant 0 : index
    %v = func.call @sin_value(%i, %j, %k, %c0, %seed, %scale, %bias)
        : (index, index, index, index, f32, f32, f32) -> f32
    linalg.yield %v : f32
  } -> tensor<?x?x?xf32>
  return %result : tensor<?x?x?xf32>
}

func.func @sin_4d(%d0: index, %d1: index, %d2: index, %d3: index,
                  %seed: f32, %scale: f32, %bias: f32) -> tensor<?x?x?x?xf32> {
  %empty = tensor.empty(%d0, %d1, %d2, %d3) : tensor<?x?x?x?xf32>
  %result = linalg.generic {
      indexing_maps = [affine_map<(i, j, k, l) -> (i, j, k, l)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%empty : tensor<?x?x?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %l = linalg.index 3 : index
    %v = func.call @sin_value(%i, %j, %k, %l, %seed, %scale, %bias)
        : (index, index, index, index, f32, f32, f32) -> f32
    linalg.yield %v : f32
  } -> tensor<?x?x?x?xf32>
  return %result : tensor<?x?x?x?xf32>
}

// Rounding to bf16 (arith.truncf: to nearest, ties to even) and back, for the
// tests of bf16 operations; printMemrefF32 prints f32 only.
func.func @to_bf16_2d(%x: tensor<?x?xf32>) -> tensor<?x?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %empty = tensor.empty(%d0, %d1) : tensor<?x?xbf16>
  %result = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%empty : tensor<?x?xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<?x?xbf16>
  return %result : tensor<?x?xbf16>
}

func.func @to_bf16_3d(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<?x?x?xf32>
  %empty = tensor.empty(%d0, %d1, %d2) : tensor<?x?x?xbf16>
  %result = linalg.generic {
      indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>,
                       affine_map<(i, j, k) -> (i, j, k)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x?xf32>) outs(%empty : tensor<?x?x?xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<?x?x?xbf16>
  return %result : tensor<?x?x?xbf16>
}

func.func @from_bf16_3d(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x?xbf16>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x?xbf16>
  %d2 = tensor.dim %x, %c2 : tensor<?x?x?xbf16>
  %empty = tensor.empty(%d0, %d1, %d2) : tensor<?x?x?xf32>
  %result = linalg.generic {
      indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>,
                       affine_map<(i, j, k) -> (i, j, k)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x?xbf16>) outs(%empty : tensor<?x?x?xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<?x?x?xf32>
  return %result : tensor<?x?x?xf32>
}
