// With runtime-allocation (what linnet's own compilations use), the buffers of the lowered
// code comes from the runtime's checked functions, so a failed allocation is reported
// (lib/Runtime/RuntimeCalls.cpp) instead of returning null into the code; without it
// (the default here, for mlir-runner) plain malloc and free are called.
// RUN: linnet-opt %s --linnet-cpu-pipeline="runtime-allocation=true" | FileCheck %s --check-prefix=RUNTIME
// RUN: linnet-opt %s --linnet-cpu-pipeline | FileCheck %s --check-prefix=MALLOC

// RUNTIME: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// RUNTIME: llvm.call @_mlir_memref_to_llvm_alloc
// RUNTIME-NOT: llvm.call @malloc
// RUNTIME-NOT: llvm.call @aligned_alloc
// RUNTIME-NOT: llvm.call @free
// MALLOC: llvm.call @malloc
#id = affine_map<(i) -> (i)>
func.func @twice_then_exp(%x: tensor<?xf32>) -> tensor<?xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.addf %a, %a : f32
    %s = math.exp %m : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
