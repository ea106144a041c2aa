// linnet-codegen-inline-calls alone: a call of a private function that
// passes a tensor of static shape cast to the callee's dynamic type (a
// decode step's one row given to a block function of any rows) is inlined,
// linnet ops and all; a call whose operands are as static as the signature
// stays a call where the callee has other calls; a callee left without
// calls is dropped, one still called is kept; a function's only call is
// inlined (a layer's DeltaNet), then the only call that leaves (its own
// callee's).
// RUN: linnet-opt %s --linnet-codegen-inline-calls | FileCheck %s

// CHECK-NOT: func.func private @rows_of_any
// CHECK-LABEL: func.func private @generic_rows
// CHECK: linnet.rank
func.func private @rows_of_any(%x: tensor<?x8xf32>) -> tensor<?x8xi32> {
  %r = linnet.rank %x : tensor<?x8xf32> -> tensor<?x8xi32>
  return %r : tensor<?x8xi32>
}

func.func private @generic_rows(%x: tensor<?x8xf32>) -> tensor<?x8xi32> {
  %r = linnet.rank %x : tensor<?x8xf32> -> tensor<?x8xi32>
  return %r : tensor<?x8xi32>
}

// CHECK-LABEL: func.func @one_row
// CHECK-NOT: call @rows_of_any
// CHECK: %[[CAST:.*]] = tensor.cast %{{.*}} : tensor<1x8xf32> to tensor<?x8xf32>
// CHECK: linnet.rank %[[CAST]]
func.func @one_row(%x: tensor<1x8xf32>) -> tensor<?x8xi32> {
  %any = tensor.cast %x : tensor<1x8xf32> to tensor<?x8xf32>
  %r = call @rows_of_any(%any) : (tensor<?x8xf32>) -> tensor<?x8xi32>
  return %r : tensor<?x8xi32>
}

// CHECK-LABEL: func.func @any_rows
// CHECK: call @generic_rows
func.func @any_rows(%x: tensor<?x8xf32>) -> tensor<?x8xi32> {
  %r = call @generic_rows(%x) : (tensor<?x8xf32>) -> tensor<?x8xi32>
  return %r : tensor<?x8xi32>
}

// CHECK-LABEL: func.func @any_rows_again
// CHECK: call @generic_rows
func.func @any_rows_again(%x: tensor<?x8xf32>) -> tensor<?x8xi32> {
  %r = call @generic_rows(%x) : (tensor<?x8xf32>) -> tensor<?x8xi32>
  return %r : tensor<?x8xi32>
}

// CHECK-NOT: func.func private @layer
// CHECK-NOT: func.func private @deltanet
func.func private @deltanet(%x: tensor<1x8xf32>) -> tensor<1x8xi32> {
  %r = linnet.rank %x : tensor<1x8xf32> -> tensor<1x8xi32>
  return %r : tensor<1x8xi32>
}

func.func private @layer(%x: tensor<1x8xf32>) -> tensor<1x8xi32> {
  %r = call @deltanet(%x) : (tensor<1x8xf32>) -> tensor<1x8xi32>
  return %r : tensor<1x8xi32>
}

// CHECK-LABEL: func.func @decode
// CHECK-NOT: call
// CHECK: linnet.rank
// CHECK-NOT: call
// CHECK: return
func.func @decode(%x: tensor<1x8xf32>) -> tensor<1x8xi32> {
  %r = call @layer(%x) : (tensor<1x8xf32>) -> tensor<1x8xi32>
  return %r : tensor<1x8xi32>
}
