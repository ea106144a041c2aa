// bf16 arithmetic is done in f32 and rounded back with integer operations,
// so the lowered code needs no __truncsfbf2 from the C runtime.
// RUN: linnet-opt %s --linnet-cpu-pipeline | FileCheck %s

// CHECK-LABEL: llvm.func @scale
// CHECK-NOT: truncsfbf2
// CHECK-NOT: fptrunc {{.*}} to vector<{{.*}}xbf16>
// CHECK: llvm.return
#id = affine_map<(i) -> (i)>
func.func @scale(%x: tensor<?xbf16>, %y: tensor<?xbf16>) -> tensor<?xbf16> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xbf16>
  %e = tensor.empty(%n) : tensor<?xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %y : tensor<?xbf16>, tensor<?xbf16>) outs(%e : tensor<?xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %m = arith.mulf %a, %b : bf16
    %s = math.exp %m : bf16
    linalg.yield %s : bf16
  } -> tensor<?xbf16>
  return %r : tensor<?xbf16>
}
