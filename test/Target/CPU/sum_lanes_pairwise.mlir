// linnet-cpu-lower-vectors sums a register tile's lanes (the
// vector.multi_reduction <add> of the last dimension that carried lanes end
// with) pairwise: two vectors of g outputs of w lanes each become one of 2g
// outputs of w / 2 lanes by two shuffles and one add, until one lane per
// output is left, in order; with fewer outputs than lanes the last vector is
// paired with itself. Numeric: integer-valued lanes, so every sum is exact.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cpu-lower-vectors))" | FileCheck %s --check-prefix=LOWERED
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | FileCheck %s

// LOWERED-LABEL: func.func @tile
// LOWERED-NOT: vector.reduction
// LOWERED-COUNT-15: arith.addf {{.*}} : vector<16xf32>
// LOWERED: arith.addf {{.*}} : vector<16xf32>
// LOWERED-NOT: vector.reduction
// LOWERED: return
func.func @tile(%lanes: vector<4x4x16xf32>, %acc: vector<4x4xf32>) -> vector<4x4xf32> {
  %r = vector.multi_reduction <add>, %lanes, %acc [2] : vector<4x4x16xf32> to vector<4x4xf32>
  return %r : vector<4x4xf32>
}

// LOWERED-LABEL: func.func @row
// LOWERED-NOT: vector.reduction
// LOWERED-COUNT-4: arith.addf {{.*}} : vector<16xf32>
// LOWERED: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3] : vector<16xf32>, vector<16xf32>
// LOWERED: arith.addf {{.*}} : vector<4xf32>
// LOWERED: return
func.func @row(%lanes: vector<1x4x16xf32>, %acc: vector<1x4xf32>) -> vector<1x4xf32> {
  %r = vector.multi_reduction <add>, %lanes, %acc [2] : vector<1x4x16xf32> to vector<1x4xf32>
  return %r : vector<1x4xf32>
}

// Other reductions keep MLIR's lowering: three outputs (not a power of two).
// LOWERED-LABEL: func.func @three
// LOWERED-COUNT-3: vector.reduction <add>
func.func @three(%lanes: vector<3x16xf32>, %acc: vector<3xf32>) -> vector<3xf32> {
  %r = vector.multi_reduction <add>, %lanes, %acc [1] : vector<3x16xf32> to vector<3xf32>
  return %r : vector<3xf32>
}

// Lane l of output (r, c) holds 64 r + 16 c + l; each output's sum is
// 16 (64 r + 16 c) + 120, plus 1000 from the accumulator.
// CHECK:      ( ( 1120, 1376, 1632, 1888 ), ( 2144, 2400, 2656, 2912 ), ( 3168, 3424, 3680, 3936 ), ( 4192, 4448, 4704, 4960 ) )
// CHECK-NEXT: ( ( 1120, 1376, 1632, 1888 ) )
func.func @main() {
  %steps = vector.step : vector<256xindex>
  %ints = arith.index_cast %steps : vector<256xindex> to vector<256xi32>
  %floats = arith.sitofp %ints : vector<256xi32> to vector<256xf32>
  %lanes = vector.shape_cast %floats : vector<256xf32> to vector<4x4x16xf32>
  %acc = arith.constant dense<1000.0> : vector<4x4xf32>
  %sums = func.call @tile(%lanes, %acc) : (vector<4x4x16xf32>, vector<4x4xf32>) -> vector<4x4xf32>
  vector.print %sums : vector<4x4xf32>
  %first = vector.extract_strided_slice %lanes {offsets = [0, 0, 0], sizes = [1, 4, 16], strides = [1, 1, 1]} : vector<4x4x16xf32> to vector<1x4x16xf32>
  %rowAcc = arith.constant dense<1000.0> : vector<1x4xf32>
  %rowSums = func.call @row(%first, %rowAcc) : (vector<1x4x16xf32>, vector<1x4xf32>) -> vector<1x4xf32>
  vector.print %rowSums : vector<1x4xf32>
  return
}
