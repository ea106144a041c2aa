// RUN: linnet-opt %s --split-input-file --linnet-codegen-drop-in-place-results --verify-diagnostics

// An entry's state result must have a state argument of the same path and
// type to be written into: the runtime reads no state results back.
// expected-error @+1 {{state result 1 has no state argument of its path and type to be written into}}
func.func @entry(%cache: memref<4x8xf32> {linnet.state = "cache"}) -> (memref<8xf32>, memref<4x8xf32> {linnet.state = "elsewhere"}) {
  %out = memref.alloc() : memref<8xf32>
  return %out, %cache : memref<8xf32>, memref<4x8xf32>
}

// -----

// expected-error @+1 {{state result 0 has no state argument of its path and type to be written into}}
func.func @typed(%cache: memref<4x8xf32> {linnet.state = "cache"}) -> (memref<?x8xf32> {linnet.state = "cache"}) {
  %c = memref.cast %cache : memref<4x8xf32> to memref<?x8xf32>
  return %c : memref<?x8xf32>
}

// -----

// expected-error @+1 {{an entry with state results must have one return}}
func.func @two_returns(%cache: memref<4x8xf32> {linnet.state = "cache"}, %which: i1) -> (memref<4x8xf32> {linnet.state = "cache"}) {
  cf.cond_br %which, ^first, ^second
^first:
  return %cache : memref<4x8xf32>
^second:
  return %cache : memref<4x8xf32>
}
