// linnet-cpu-drop-foreign-argument-attributes alone: the argument and result
// attributes of llvm.func that are not llvm.* ones (IR generation's
// linnet.parameter, linnet.state, bufferization.writable) are dropped before
// the translation to LLVM IR, which would warn about each and print the whole
// function into the warning; llvm.* ones stay.
// RUN: linnet-opt %s --linnet-cpu-drop-foreign-argument-attributes | FileCheck %s

// CHECK-LABEL: llvm.func @entry
// CHECK-SAME: (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK-SAME: -> (i64 {llvm.noundef})
// CHECK-NOT: linnet.
// CHECK-NOT: bufferization.
llvm.func @entry(%w: !llvm.ptr {llvm.noalias, linnet.parameter = "lm_head.weight", bufferization.writable = false},
                 %s: !llvm.ptr {linnet.state = "cache_k"}, %n: i64)
    -> (i64 {llvm.noundef, linnet.result = 0 : i64}) {
  llvm.return %n : i64
}
