// RUN: linnet-opt %s --linnet-codegen-drop-in-place-results | FileCheck %s

// A callee that writes a row of a cache in place and returns the cache: the
// result goes, and its caller (which passed the cache up) loses its copy of
// it too; the public entry keeps its results (the runtime's calling
// convention) and returns the cache it was given.

// CHECK-LABEL: func.func private @write_row
// CHECK-SAME: -> memref<8xf32>
// CHECK: return %[[OUT:.+]] : memref<8xf32>
func.func private @write_row(%cache: memref<4x8xf32>, %row: memref<8xf32>, %i: index) -> (memref<8xf32>, memref<4x8xf32>) {
  %slot = memref.subview %cache[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  memref.copy %row, %slot : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %out = memref.alloc() : memref<8xf32>
  memref.copy %row, %out : memref<8xf32> to memref<8xf32>
  return %out, %cache : memref<8xf32>, memref<4x8xf32>
}

// A result that is a cast of an argument goes too.
// CHECK-LABEL: func.func private @write_cast
// CHECK-SAME: (%{{.+}}: memref<4x8xf32>)
// CHECK-NOT: ->
func.func private @write_cast(%cache: memref<4x8xf32>) -> memref<?x8xf32> {
  %c = memref.cast %cache : memref<4x8xf32> to memref<?x8xf32>
  return %c : memref<?x8xf32>
}

// CHECK-LABEL: func.func private @layer
// CHECK-SAME: -> memref<8xf32>
// CHECK: %[[OUT:.+]] = call @write_row(%[[CACHE:.+]], %{{.+}}, %{{.+}}) : (memref<4x8xf32>, memref<8xf32>, index) -> memref<8xf32>
// CHECK: call @write_cast(%[[CACHE]]) : (memref<4x8xf32>) -> ()
// CHECK: return %[[OUT]] : memref<8xf32>
func.func private @layer(%cache: memref<4x8xf32>, %row: memref<8xf32>, %i: index) -> (memref<8xf32>, memref<4x8xf32>) {
  %r:2 = call @write_row(%cache, %row, %i) : (memref<4x8xf32>, memref<8xf32>, index) -> (memref<8xf32>, memref<4x8xf32>)
  %c = call @write_cast(%r#1) : (memref<4x8xf32>) -> memref<?x8xf32>
  %back = memref.cast %c : memref<?x8xf32> to memref<4x8xf32>
  return %r#0, %back : memref<8xf32>, memref<4x8xf32>
}

// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[CACHE:[^:]+]]: memref<4x8xf32>
// CHECK-SAME: -> (memref<8xf32>, memref<4x8xf32>)
// CHECK: %[[OUT:.+]] = call @layer(%[[CACHE]], %{{.+}}, %{{.+}}) : (memref<4x8xf32>, memref<8xf32>, index) -> memref<8xf32>
// CHECK: return %[[OUT]], %[[CACHE]] : memref<8xf32>, memref<4x8xf32>
func.func @entry(%cache: memref<4x8xf32>, %row: memref<8xf32>, %i: index) -> (memref<8xf32>, memref<4x8xf32>) {
  %r:2 = call @layer(%cache, %row, %i) : (memref<4x8xf32>, memref<8xf32>, index) -> (memref<8xf32>, memref<4x8xf32>)
  return %r#0, %r#1 : memref<8xf32>, memref<4x8xf32>
}

// A result that is a fresh buffer stays.
// CHECK-LABEL: func.func private @fresh
// CHECK-SAME: -> memref<4x8xf32>
func.func private @fresh(%cache: memref<4x8xf32>) -> memref<4x8xf32> {
  %out = memref.alloc() : memref<4x8xf32>
  memref.copy %cache, %out : memref<4x8xf32> to memref<4x8xf32>
  return %out : memref<4x8xf32>
}
