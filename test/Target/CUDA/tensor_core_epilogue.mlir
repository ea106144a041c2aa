// linnet-cuda-map-dispatch-regions alone, on bufferized regions whose
// product for the tensor cores writes a tile the region allocates: where
// the tile is set before the product (to a scalar, or a copy of sums so
// far) and read after it by one op of parallel loops alone, that op runs
// on each lane's accumulators (TensorCoreEpilogue) and the tile is gone;
// the block's workgroup memory is the two bf16 stages. Otherwise the tile
// is workgroup memory of the block, the sums stored there and read back
// after a barrier.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-map-dispatch-regions,canonicalize))" --split-input-file | FileCheck %s

#xk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn3 = affine_map<(m, n, k) -> (m, n)>
#mn = affine_map<(m, n) -> (m, n)>
#n = affine_map<(m, n) -> (n)>

// A projection with a bias: the tile zeroed by a generic without inputs
// (a fill generalized), the rounding after it adds the bias.
// The sums start from the fill's zero (one step of the depth: no loop).
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[ZERO]])
// CHECK-COUNT-4: nvgpu.mma.sync
// CHECK: scf.if
// CHECK-NEXT: vector.extract
// CHECK-NEXT: memref.load %{{.*}} : memref<64xbf16>
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: memref.store %{{.*}} : memref<64x64xbf16
// CHECK-NOT: memref.load {{.*}}f32
// CHECK: gpu.terminator
func.func @epilogue(%x: memref<128x32xbf16>, %w: memref<64x32xbf16>,
                    %bias: memref<64xbf16>, %y: memref<128x64xbf16>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (2) {
    %row = affine.apply affine_map<(i) -> (i * 64)>(%i)
    %xs = memref.subview %x[%row, 0] [64, 32] [1, 1] : memref<128x32xbf16> to memref<64x32xbf16, strided<[32, 1], offset: ?>>
    %tile = memref.alloc() : memref<64x64xf32>
    linalg.generic {indexing_maps = [#mn], iterator_types = ["parallel", "parallel"]}
        outs(%tile : memref<64x64xf32>) {
    ^bb0(%out: f32):
      linalg.yield %zero : f32
    }
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xs, %w : memref<64x32xbf16, strided<[32, 1], offset: ?>>, memref<64x32xbf16>) outs(%tile : memref<64x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    %ys = memref.subview %y[%row, 0] [64, 64] [1, 1] : memref<128x64xbf16> to memref<64x64xbf16, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#mn, #n, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile, %bias : memref<64x64xf32>, memref<64xbf16>) outs(%ys : memref<64x64xbf16, strided<[64, 1], offset: ?>>) {
    ^bb0(%s: f32, %b: bf16, %out: bf16):
      %be = arith.extf %b : bf16 to f32
      %t = arith.addf %s, %be : f32
      %r = arith.truncf %t : f32 to bf16
      linalg.yield %r : bf16
    }
    memref.dealloc %tile : memref<64x64xf32>
  }
  return
}

// -----

#xk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn3 = affine_map<(m, n, k) -> (m, n)>
#mn = affine_map<(m, n) -> (m, n)>

// The fill's value a constant made in its body (codegen::uniformValue): the
// sums start from it, made outside the product's loops.
// CHECK-LABEL: func.func @constant_in_body
// CHECK: %[[START:.*]] = arith.constant dense<1.500000e+00> : vector<2x2xf32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[START]])
// CHECK-NOT: memref.load {{.*}}f32
// CHECK: gpu.terminator
func.func @constant_in_body(%x: memref<128x32xbf16>, %w: memref<64x32xbf16>,
                            %y: memref<128x64xbf16>) {
  scf.forall (%i) in (2) {
    %row = affine.apply affine_map<(i) -> (i * 64)>(%i)
    %xs = memref.subview %x[%row, 0] [64, 32] [1, 1] : memref<128x32xbf16> to memref<64x32xbf16, strided<[32, 1], offset: ?>>
    %tile = memref.alloc() : memref<64x64xf32>
    linalg.generic {indexing_maps = [#mn], iterator_types = ["parallel", "parallel"]}
        outs(%tile : memref<64x64xf32>) {
    ^bb0(%out: f32):
      %start = arith.constant 1.5 : f32
      linalg.yield %start : f32
    }
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xs, %w : memref<64x32xbf16, strided<[32, 1], offset: ?>>, memref<64x32xbf16>) outs(%tile : memref<64x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    %ys = memref.subview %y[%row, 0] [64, 64] [1, 1] : memref<128x64xbf16> to memref<64x64xbf16, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<64x64xf32>) outs(%ys : memref<64x64xbf16, strided<[64, 1], offset: ?>>) {
    ^bb0(%s: f32, %out: bf16):
      %r = arith.truncf %s : f32 to bf16
      linalg.yield %r : bf16
    }
    memref.dealloc %tile : memref<64x64xf32>
  }
  return
}

// -----

#xk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn3 = affine_map<(m, n, k) -> (m, n)>
#mn = affine_map<(m, n) -> (m, n)>

// The rounding writes over the product's input: another tile of the block
// may still read it, so the sums are staged and rounded after a barrier.
// CHECK-LABEL: func.func @in_place
// CHECK: workgroup(%{{.*}} : memref<8192xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK: gpu.barrier
// CHECK: arith.truncf
func.func @in_place(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>) {
  scf.forall (%i) in (1) {
    %zero = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<128x64xf32>
    linalg.fill ins(%zero : f32) outs(%tile : memref<128x64xf32>)
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%tile : memref<128x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<128x64xf32>) outs(%x : memref<128x64xbf16>) {
    ^bb0(%s: f32, %out: bf16):
      %r = arith.truncf %s : f32 to bf16
      linalg.yield %r : bf16
    }
    memref.dealloc %tile : memref<128x64xf32>
  }
  return
}

// -----

#xk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn3 = affine_map<(m, n, k) -> (m, n)>
#mn = affine_map<(m, n) -> (m, n)>

// The sums read twice (rounded, and their squares): staged.
// CHECK-LABEL: func.func @two_readers
// CHECK: workgroup(%{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>
// Added to a copy of sums so far (a shared expert's onto the routed
// experts'): each lane's accumulators start from the copy's source.
// CHECK-LABEL: func.func @accumulates(
// CHECK-SAME: %[[SO_FAR:[a-z0-9]+]]: memref<64x64xf32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-16: memref.load %[[SO_FAR]]
// CHECK: nvgpu.mma.sync
// CHECK: arith.truncf
// Unless the consumer writes over that source: staged.
// CHECK-LABEL: func.func @accumulates_in_place
// CHECK: workgroup(%{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>
// An op between the product and its consumer that touches neither (the
// gate of a shared expert): the product moves after it.
// CHECK-LABEL: func.func @independent_between
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>)
// CHECK: math.exp
// CHECK: nvgpu.mma.sync
// CHECK: arith.truncf
// One that writes the product's input: staged.
// CHECK-LABEL: func.func @written_between
// CHECK: workgroup(%{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>
func.func @two_readers(%x: memref<64x32xbf16>, %w: memref<64x32xbf16>,
                       %y: memref<64x64xbf16>, %z: memref<64x64xf32>) {
  scf.forall (%i) in (1) {
    %zero = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<64x64xf32>
    linalg.fill ins(%zero : f32) outs(%tile : memref<64x64xf32>)
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<64x32xbf16>, memref<64x32xbf16>) outs(%tile : memref<64x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<64x64xf32>) outs(%y : memref<64x64xbf16>) {
    ^bb0(%s: f32, %out: bf16):
      %r = arith.truncf %s : f32 to bf16
      linalg.yield %r : bf16
    }
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<64x64xf32>) outs(%z : memref<64x64xf32>) {
    ^bb0(%s: f32, %out: f32):
      %q = arith.mulf %s, %s : f32
      linalg.yield %q : f32
    }
    memref.dealloc %tile : memref<64x64xf32>
  }
  return
}

func.func @accumulates(%r: memref<64x64xf32>, %x: memref<64x32xbf16>,
                       %w: memref<64x32xbf16>, %y: memref<64x64xbf16>) {
  scf.forall (%i) in (1) {
    %tile = memref.alloc() : memref<64x64xf32>
    memref.copy %r, %tile : memref<64x64xf32> to memref<64x64xf32>
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<64x32xbf16>, memref<64x32xbf16>) outs(%tile : memref<64x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<64x64xf32>) outs(%y : memref<64x64xbf16>) {
    ^bb0(%s: f32, %out: bf16):
      %t = arith.truncf %s : f32 to bf16
      linalg.yield %t : bf16
    }
    memref.dealloc %tile : memref<64x64xf32>
  }
  return
}

func.func @accumulates_in_place(%r: memref<64x64xf32>, %x: memref<64x32xbf16>,
                                %w: memref<64x32xbf16>) {
  scf.forall (%i) in (1) {
    %tile = memref.alloc() : memref<64x64xf32>
    memref.copy %r, %tile : memref<64x64xf32> to memref<64x64xf32>
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<64x32xbf16>, memref<64x32xbf16>) outs(%tile : memref<64x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<64x64xf32>) outs(%r : memref<64x64xf32>) {
    ^bb0(%s: f32, %out: f32):
      %h = arith.mulf %s, %s : f32
      linalg.yield %h : f32
    }
    memref.dealloc %tile : memref<64x64xf32>
  }
  return
}

func.func @independent_between(%x: memref<64x32xbf16>, %w: memref<64x32xbf16>,
                              %g: memref<64x32xbf16>, %y: memref<64x64xbf16>) {
  scf.forall (%i) in (1) {
    %zero = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<64x64xf32>
    linalg.fill ins(%zero : f32) outs(%tile : memref<64x64xf32>)
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<64x32xbf16>, memref<64x32xbf16>) outs(%tile : memref<64x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#mn], iterator_types = ["parallel", "parallel"]}
        outs(%g : memref<64x32xbf16>) {
    ^bb0(%out: bf16):
      %e = arith.extf %out : bf16 to f32
      %x2 = math.exp %e : f32
      %r = arith.truncf %x2 : f32 to bf16
      linalg.yield %r : bf16
    }
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<64x64xf32>) outs(%y : memref<64x64xbf16>) {
    ^bb0(%s: f32, %out: bf16):
      %t = arith.truncf %s : f32 to bf16
      linalg.yield %t : bf16
    }
    memref.dealloc %tile : memref<64x64xf32>
  }
  return
}

func.func @written_between(%x: memref<64x32xbf16>, %w: memref<64x32xbf16>,
                          %g: memref<64x32xbf16>, %y: memref<64x64xbf16>) {
  scf.forall (%i) in (1) {
    %zero = arith.constant 0.0 : f32
    %tile = memref.alloc() : memref<64x64xf32>
    linalg.fill ins(%zero : f32) outs(%tile : memref<64x64xf32>)
    linalg.generic {indexing_maps = [#xk, #nk, #mn3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<64x32xbf16>, memref<64x32xbf16>) outs(%tile : memref<64x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %ae = arith.extf %a : bf16 to f32
      %be = arith.extf %b : bf16 to f32
      %p = arith.mulf %ae, %be : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#mn], iterator_types = ["parallel", "parallel"]}
        outs(%x : memref<64x32xbf16>) {
    ^bb0(%out: bf16):
      %e = arith.extf %out : bf16 to f32
      %x2 = math.exp %e : f32
      %r = arith.truncf %x2 : f32 to bf16
      linalg.yield %r : bf16
    }
    linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
        ins(%tile : memref<64x64xf32>) outs(%y : memref<64x64xbf16>) {
    ^bb0(%s: f32, %out: bf16):
      %t = arith.truncf %s : f32 to bf16
      linalg.yield %t : bf16
    }
    memref.dealloc %tile : memref<64x64xf32>
  }
  return
}
