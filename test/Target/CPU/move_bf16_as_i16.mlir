// linnet-cpu-move-bf16-as-i16 alone: loads, stores and masked loads, stores,
// gathers and scatters of bf16 vectors move i16 vectors, with bitcasts
// around them (the same bits); scalar bf16 and other element types are left.
// RUN: linnet-opt %s --linnet-cpu-move-bf16-as-i16 | FileCheck %s

// CHECK-LABEL: llvm.func @moves
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[M:.*]]: vector<16xi1>, %[[PAD:.*]]: vector<16xbf16>, %[[PS:.*]]: vector<16x!llvm.ptr>)
// CHECK: %[[PAD16:.*]] = llvm.bitcast %[[PAD]] : vector<16xbf16> to vector<16xi16>
// CHECK: %[[ML:.*]] = llvm.intr.masked.load %[[P]], %[[M]], %[[PAD16]] {alignment = 2 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xi16>) -> vector<16xi16>
// CHECK: %[[MLB:.*]] = llvm.bitcast %[[ML]] : vector<16xi16> to vector<16xbf16>
// CHECK: %[[L:.*]] = llvm.load %[[P]] {alignment = 2 : i64} : !llvm.ptr -> vector<16xi16>
// CHECK: %[[LB:.*]] = llvm.bitcast %[[L]] : vector<16xi16> to vector<16xbf16>
// CHECK: %[[G:.*]] = llvm.intr.masked.gather %[[PS]], %[[M]], %{{.*}} {alignment = 2 : i32} : (vector<16x!llvm.ptr>, vector<16xi1>, vector<16xi16>) -> vector<16xi16>
// CHECK: %[[S16:.*]] = llvm.bitcast %[[MLB]] : vector<16xbf16> to vector<16xi16>
// CHECK: llvm.intr.masked.store %[[S16]], %[[P]], %[[M]] {alignment = 2 : i32} : vector<16xi16>, vector<16xi1> into !llvm.ptr
// CHECK: %[[T16:.*]] = llvm.bitcast %[[LB]] : vector<16xbf16> to vector<16xi16>
// CHECK: llvm.store %[[T16]], %[[P]] {alignment = 2 : i64} : vector<16xi16>, !llvm.ptr
// CHECK: llvm.intr.masked.scatter %{{.*}}, %[[PS]], %[[M]] {alignment = 2 : i32} : vector<16xi16>, vector<16xi1> into vector<16x!llvm.ptr>
// CHECK: llvm.load %[[P]] {alignment = 2 : i64} : !llvm.ptr -> bf16
// CHECK: llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
llvm.func @moves(%p: !llvm.ptr, %m: vector<16xi1>, %pad: vector<16xbf16>, %ps: vector<16x!llvm.ptr>) -> (bf16) {
  %ml = llvm.intr.masked.load %p, %m, %pad {alignment = 2 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xbf16>) -> vector<16xbf16>
  %l = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<16xbf16>
  %g = llvm.intr.masked.gather %ps, %m, %pad {alignment = 2 : i32} : (vector<16x!llvm.ptr>, vector<16xi1>, vector<16xbf16>) -> vector<16xbf16>
  llvm.intr.masked.store %ml, %p, %m {alignment = 2 : i32} : vector<16xbf16>, vector<16xi1> into !llvm.ptr
  llvm.store %l, %p {alignment = 2 : i64} : vector<16xbf16>, !llvm.ptr
  llvm.intr.masked.scatter %g, %ps, %m {alignment = 2 : i32} : vector<16xbf16>, vector<16xi1> into vector<16x!llvm.ptr>
  %s = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> bf16
  %f = llvm.load %p {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
  llvm.return %s : bf16
}
