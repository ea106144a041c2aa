// linnet-cuda-map-dispatch-regions alone, on bufferized dispatch regions: a
// region becomes a gpu.launch with a block per iteration of its forall (the
// forall's induction variables delinearized from the block id); in a block,
// each linalg op's parallel iterations are dealt out to the threads (from the
// thread id in steps of the block size), a barrier after each op; a buffer
// the region allocates is workgroup memory of the block (a partial tile's,
// of dynamic size, at the size of the whole tile), other writes run in
// thread 0, and a linalg op outside every region is a kernel of one block.
// A warp reduction's outputs go to the warps (the last case).
// Each kernel is named after its function, its index and its root.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-map-dispatch-regions,canonicalize))" --split-input-file --verify-diagnostics | FileCheck %s
// Without canonicalization too, a grid of static bounds is a constant (the
// pass folds its trip counts), which a merged kernel's part then knows.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-map-dispatch-regions))" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=FOLDED
// FOLDED-LABEL: func.func @tiles
// FOLDED-NOT: arith.ceildivui
// FOLDED: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @tiles
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%[[BLOCK:.*]] = %c256, %{{.*}} = %c1, %{{.*}} = %c1) module(@tiles_kernels) function(@tiles_0_generic) workgroup(%[[WG:.*]] : memref<512xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[IJ:.*]]:2 = affine.delinearize_index %[[B]] into (2, 2)
// CHECK: %[[SHARED:.*]] = memref.memory_space_cast %[[WG]] : memref<512xf32, #gpu.address_space<workgroup>> to memref<512xf32>
// CHECK: %[[TILE:.*]] = memref.reinterpret_cast %[[SHARED]] to offset: [0], sizes: [4, 128], strides: [128, 1] : memref<512xf32> to memref<4x128xf32>
// CHECK: scf.for %[[L:.*]] = %[[T]] to %c512 step %[[BLOCK]] {
// CHECK:   %[[E:.*]]:2 = affine.delinearize_index %[[L]] into (4, 128)
// CHECK:   arith.negf
// CHECK:   memref.store %{{.*}}, %[[TILE]][%[[E]]#0, %[[E]]#1]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[T]] to %c512 step %[[BLOCK]] {
// CHECK:   arith.addf
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: gpu.terminator
func.func @tiles(%x: memref<8x256xf32>, %y: memref<8x256xf32>) {
  scf.forall (%i, %j) = (0, 0) to (8, 256) step (4, 128) {
    %xs = memref.subview %x[%i, %j] [4, 128] [1, 1] : memref<8x256xf32> to memref<4x128xf32, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [4, 128] [1, 1] : memref<8x256xf32> to memref<4x128xf32, strided<[256, 1], offset: ?>>
    %t = memref.alloc() : memref<4x128xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xs : memref<4x128xf32, strided<[256, 1], offset: ?>>) outs(%t : memref<4x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    }
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%t, %xs : memref<4x128xf32>, memref<4x128xf32, strided<[256, 1], offset: ?>>)
        outs(%ys : memref<4x128xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
    memref.dealloc %t : memref<4x128xf32>
  }
  return
}

// -----

// A partial tile (rows of a dynamic count in tiles of 4): its buffer is
// workgroup memory for the whole tile, viewed at the tile's size. A store
// in the region runs in thread 0; a fill outside every region is a kernel
// of one block.
// CHECK-LABEL: func.func @partial
// CHECK: gpu.launch {{.*}} module(@partial_kernels) function(@partial_0_copy) workgroup(%[[WG:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[ROWS:.*]] = affine.min
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%[[ROWS]], 16], strides: [16, 1] : memref<64xf32> to memref<?x16xf32>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%[[BLOCK:.*]] = %c256, {{.*}}) module(@partial_kernels) function(@partial_1_fill) {
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c32 step %[[BLOCK]] {
// CHECK-NEXT: memref.store
func.func @partial(%x: memref<?x16xf32>, %y: memref<?x16xf32>, %flag: memref<i32>, %z: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x16xf32>
  scf.forall (%i) = (0) to (%n) step (4) {
    %rows = affine.min affine_map<(d0)[s0] -> (4, s0 - d0)>(%i)[%n]
    %xs = memref.subview %x[%i, 0] [%rows, 16] [1, 1] : memref<?x16xf32> to memref<?x16xf32, strided<[16, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [%rows, 16] [1, 1] : memref<?x16xf32> to memref<?x16xf32, strided<[16, 1], offset: ?>>
    %t = memref.alloc(%rows) : memref<?x16xf32>
    linalg.copy ins(%xs : memref<?x16xf32, strided<[16, 1], offset: ?>>) outs(%t : memref<?x16xf32>)
    linalg.copy ins(%t : memref<?x16xf32>) outs(%ys : memref<?x16xf32, strided<[16, 1], offset: ?>>)
    memref.store %one, %flag[] : memref<i32>
    memref.dealloc %t : memref<?x16xf32>
  }
  linalg.fill ins(%zero : f32) outs(%z : memref<32xf32>)
  return
}

// -----

// A buffer whose size has no bound cannot live in a kernel.
func.func @unbounded(%x: memref<?xf32>, %m: index) {
  scf.forall (%i) in (2) {
    // expected-error @+1 {{'memref.alloc' op allocates 'memref<?xf32>' inside a dispatch region with no bound on its size}}
    %t = memref.alloc(%m) : memref<?xf32>
    linalg.copy ins(%x : memref<?xf32>) outs(%t : memref<?xf32>)
    memref.dealloc %t : memref<?xf32>
  }
  return
}

// -----

// Nor can buffers past the 48 KiB of shared memory a block has without
// opting in (ptxas would compile such a kernel, and its launch fail).
func.func @too_much_shared(%x: memref<2x16384xf32>) {
  // expected-error @+1 {{'gpu.launch' op of kernel `too_much_shared_0_copy` needs 65536 bytes of workgroup memory a block (its tiles' buffers and staged products); a block has 49152 without opting in to more}}
  scf.forall (%i) in (2) {
    %xs = memref.subview %x[%i, 0] [1, 16384] [1, 1] : memref<2x16384xf32> to memref<16384xf32, strided<[1], offset: ?>>
    %t = memref.alloc() : memref<16384xf32>
    linalg.copy ins(%xs : memref<16384xf32, strided<[1], offset: ?>>) outs(%t : memref<16384xf32>)
    linalg.copy ins(%t : memref<16384xf32>) outs(%xs : memref<16384xf32, strided<[1], offset: ?>>)
    memref.dealloc %t : memref<16384xf32>
  }
  return
}

// -----

// Dispatch regions are mapped after bufferization.
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'scf.forall' op is still on tensors: dispatch regions are mapped after bufferization}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %x) -> (tensor<4xf32>) {
    %s = tensor.extract_slice %o[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}

// -----

// A reduction between two parallel loops (a weighted sum over 8 experts of
// rows of 16): the parallel loops go outermost, so that every one of the
// 2 x 16 outputs is a thread's, each summing its 8 terms.
// CHECK-LABEL: func.func @middle_reduction
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %c32 step %{{.*}} {
// CHECK-NEXT: %[[RC:.*]]:2 = affine.delinearize_index %[[L]] into (2, 16)
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK-NOT: scf.parallel
// CHECK: gpu.barrier
#in = affine_map<(r, e, c) -> (r, e, c)>
#out = affine_map<(r, e, c) -> (r, c)>
func.func @middle_reduction(%x: memref<2x8x16xf32>, %y: memref<2x16xf32>) {
  scf.forall (%i) in (1) {
    linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%x : memref<2x8x16xf32>) outs(%y : memref<2x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
  }
  return
}

// -----

// A warp reduction (a GEMV: the [N, K] weight laid out along the reduced K)
// in a region of 8 rows: warp w of the block takes rows w, w + 8, ...; its
// lanes read 8 bf16 at once (chunk c is lane c mod 32's) where the rows are
// 16-byte aligned, checked at run time, the rest an element each; five
// shuffles combine the lanes' partials and lane 0 adds the total to the
// output. The loop over rows is every thread's, so whole warps shuffle.
// CHECK-LABEL: func.func @gemv
// CHECK: gpu.launch {{.*}} function(@gemv_0_generic)
// CHECK-DAG: %[[WARP:.*]] = arith.divui %[[T:.*]], %c32
// CHECK-DAG: %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK: %[[POINTER:.*]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[ALIGNED:.*]] = arith.andi
// CHECK: %[[CHUNKS:.*]] = arith.select %[[ALIGNED]], %c64, %c0
// CHECK: scf.for %[[FIRST:.*]] = %c0 to %c8 step %{{.*}} {
// CHECK:   %[[ROW:.*]] = arith.addi %[[FIRST]], %[[WARP]]
// CHECK:   %[[ACTIVE:.*]] = arith.cmpi ult, %[[ROW]], %c8
// CHECK:   %[[PARTIAL:.*]] = scf.if %[[ACTIVE]] -> (f32) {
// CHECK:     scf.for %{{.*}} = %[[LANE]] to %[[CHUNKS]] step %c32 iter_args
// CHECK:       vector.load %{{.*}}[%[[ROW]], %{{.*}}] {alignment = 16 : i64} : memref<8x512xbf16, strided<[512, 1], offset: ?>>, vector<8xbf16>
// CHECK-COUNT-8: arith.addf
// CHECK:     scf.for %{{.*}} = %{{.*}} to %c512 step %c32 iter_args
// CHECK:   } else {
// CHECK:     scf.yield %cst
// CHECK:   }
// CHECK:   gpu.shuffle xor %[[PARTIAL]], %c16_i32, %c32_i32
// CHECK:   gpu.shuffle xor %{{.*}}, %c8_i32, %c32_i32
// CHECK:   gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32
// CHECK:   gpu.shuffle xor %{{.*}}, %c2_i32, %c32_i32
// CHECK:   %[[LAST:.*]], %{{.*}} = gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32
// CHECK:   %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[LAST]]
// CHECK:   %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:   %[[WRITES:.*]] = arith.andi %[[ACTIVE]], %[[LANE0]]
// CHECK:   scf.if %[[WRITES]] {
// CHECK:     %[[OLD:.*]] = memref.load
// CHECK:     %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK:     memref.store %[[NEW]]
// CHECK:   }
// CHECK: }
// CHECK-NEXT: gpu.barrier
#w = affine_map<(n, k) -> (n, k)>
#x = affine_map<(n, k) -> (k)>
#y = affine_map<(n, k) -> (n)>
func.func @gemv(%w: memref<64x512xbf16>, %x: memref<512xbf16>, %y: memref<64xf32>) {
  scf.forall (%i) = (0) to (64) step (8) {
    %ws = memref.subview %w[%i, 0] [8, 512] [1, 1] : memref<64x512xbf16> to memref<8x512xbf16, strided<[512, 1], offset: ?>>
    %ys = memref.subview %y[%i] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "reduction"]}
        ins(%ws, %x : memref<8x512xbf16, strided<[512, 1], offset: ?>>, memref<512xbf16>) outs(%ys : memref<8xf32, strided<[1], offset: ?>>) {
    ^bb0(%a: bf16, %b: bf16, %o: f32):
      %m = arith.mulf %a, %b : bf16
      %e = arith.extf %m : bf16 to f32
      %s = arith.addf %o, %e : f32
      linalg.yield %s : f32
    }
  }
  return
}
