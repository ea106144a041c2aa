// RUN: linnet-opt %s --split-input-file --linnet-codegen-write-states-in-place | FileCheck %s
// RUN: linnet-opt %s --split-input-file --linnet-codegen-write-states-in-place="copy-concatenations" | FileCheck %s --check-prefix=COPY

// A new state computed into a tensor.empty its body does not read (as
// elementwise fusion leaves a destination-passing update): its destination
// becomes the state's argument. The output, not a state, keeps its own.
// CHECK-LABEL: func.func private @decay
// CHECK-SAME: (%[[STATE:[^:]+]]: tensor<4x8xf32> {linnet.state = "recurrent"}
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[NEW:.+]] = linalg.generic {{.+}} ins(%[[STATE]], %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[STATE]] : tensor<4x8xf32>)
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[NEW]] : tensor<4x8xf32>) outs(%[[EMPTY]] : tensor<4x8xf32>)
// CHECK: return %[[OUT]], %[[NEW]]
#id = affine_map<(i, j) -> (i, j)>
func.func private @decay(%state: tensor<4x8xf32> {linnet.state = "recurrent"}, %gate: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32> {linnet.state = "recurrent"}) {
  %e = tensor.empty() : tensor<4x8xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%state, %gate : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%s: f32, %g: f32, %unused: f32):
    %x = arith.mulf %s, %g : f32
    linalg.yield %x : f32
  } -> tensor<4x8xf32>
  %out = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%new : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%n: f32, %unused: f32):
    %y = arith.addf %n, %n : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %out, %new : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Left alone: a destination the body reads (an accumulation), a state of
// another path, and a result computed by an op that is not linalg.
// CHECK-LABEL: func.func @kept
// CHECK: %[[ACC:.+]] = linalg.fill
// CHECK: linalg.generic {{.+}} outs(%[[ACC]] : tensor<4xf32>)
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<4x8xf32>)
// CHECK-NOT: outs(%arg
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @kept(%sum: tensor<4xf32> {linnet.state = "sum"}, %other: tensor<4x8xf32> {linnet.state = "other"}, %x: tensor<4x8xf32>, %h: tensor<2x4xf32> {linnet.state = "history"})
    -> (tensor<4xf32> {linnet.state = "sum"}, tensor<4x8xf32> {linnet.state = "elsewhere"}, tensor<2x4xf32> {linnet.state = "history"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%v: f32, %a: f32):
    %t = arith.addf %v, %a : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %copy = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%v: f32, %unused: f32):
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %t = tensor.empty() : tensor<2x4xf32>
  %hist = tensor.insert_slice %sum into %t[0, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<2x4xf32>
  return %s, %copy, %hist : tensor<4xf32>, tensor<4x8xf32>, tensor<2x4xf32>
}

// -----

// A key's row inserted into its cache at the position as a concatenation
// (its rotated quarter, then the rest): with copy-concatenations a linalg
// op copies the concatenation into the cache's slot and the copy is
// inserted, so that its region computes the pieces into the cache; without,
// the insert stays. Rows of a run-time count are left as they are.
// CHECK-LABEL: func.func private @key_row
// CHECK-NOT: linalg.generic
// CHECK: return
// COPY-LABEL: func.func private @key_row
// COPY-SAME: (%[[CACHE:[^:]+]]: tensor<1x2x64x16xf32> {linnet.state = "cache_k"}, %{{.*}}: tensor<1x2x1x4xf32>, %{{.*}}: tensor<1x2x1x12xf32>, %[[POS:[^:]+]]: index)
// COPY: %[[ROW:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 4] [1, 2, 1, 12]
// COPY: %[[SLOT:.+]] = tensor.extract_slice %[[CACHE]][0, 0, %[[POS]], 0] [1, 2, 1, 16] [1, 1, 1, 1]
// COPY: %[[COPY:.+]] = linalg.generic {{.+}} ins(%[[ROW]] : tensor<1x2x1x16xf32>) outs(%[[SLOT]] : tensor<1x2x1x16xf32>)
// COPY-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// COPY-NEXT: linalg.yield %[[IN]]
// COPY: %[[NEW:.+]] = tensor.insert_slice %[[COPY]] into %[[CACHE]][0, 0, %[[POS]], 0] [1, 2, 1, 16]
// COPY: return %[[NEW]]
func.func private @key_row(%cache: tensor<1x2x64x16xf32> {linnet.state = "cache_k"},
                           %rot: tensor<1x2x1x4xf32>, %pass: tensor<1x2x1x12xf32>, %pos: index)
    -> (tensor<1x2x64x16xf32> {linnet.state = "cache_k"}) {
  %e = tensor.empty() : tensor<1x2x1x16xf32>
  %c0 = tensor.insert_slice %rot into %e[0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x1x16xf32>
  %c1 = tensor.insert_slice %pass into %c0[0, 0, 0, 4] [1, 2, 1, 12] [1, 1, 1, 1] : tensor<1x2x1x12xf32> into tensor<1x2x1x16xf32>
  %new = tensor.insert_slice %c1 into %cache[0, 0, %pos, 0] [1, 2, 1, 16] [1, 1, 1, 1] : tensor<1x2x1x16xf32> into tensor<1x2x64x16xf32>
  return %new : tensor<1x2x64x16xf32>
}

// -----

// COPY-LABEL: func.func private @key_rows
// COPY-NOT: linalg.generic
// COPY: return
func.func private @key_rows(%cache: tensor<1x2x64x16xf32> {linnet.state = "cache_k"},
                            %rot: tensor<1x2x?x4xf32>, %pass: tensor<1x2x?x12xf32>, %pos: index, %n: index)
    -> (tensor<1x2x64x16xf32> {linnet.state = "cache_k"}) {
  %e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %c0 = tensor.insert_slice %rot into %e[0, 0, 0, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x?x16xf32>
  %c1 = tensor.insert_slice %pass into %c0[0, 0, 0, 4] [1, 2, %n, 12] [1, 1, 1, 1] : tensor<1x2x?x12xf32> into tensor<1x2x?x16xf32>
  %new = tensor.insert_slice %c1 into %cache[0, 0, %pos, 0] [1, 2, %n, 16] [1, 1, 1, 1] : tensor<1x2x?x16xf32> into tensor<1x2x64x16xf32>
  return %new : tensor<1x2x64x16xf32>
}
