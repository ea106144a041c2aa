// linnet-cpu-serialize-single-tile-regions alone: a parallel region over a
// dynamic loop gets `if(trips > 1)`, so a single tile (a decode's one row)
// runs on the calling thread without forking a team; one over constant bounds
// is left as it is.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cpu-serialize-single-tile-regions))" | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[EXTENT:.*]] = arith.subi %[[N:.*]], %[[C0]] : index
// CHECK: %[[TRIPS:.*]] = arith.ceildivsi %[[EXTENT]], %[[C8]] : index
// CHECK: %[[ALL:.*]] = arith.muli %{{.*}}, %[[TRIPS]] : index
// CHECK: %[[SEVERAL:.*]] = arith.cmpi sgt, %[[ALL]], %{{.*}} : index
// CHECK: omp.parallel if(%[[SEVERAL]])
func.func @rows(%buf: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c8) {
        memref.store %one, %buf[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// CHECK-LABEL: func.func @fixed
// CHECK: omp.parallel {
func.func @fixed(%buf: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c64) step (%c8) {
        memref.store %one, %buf[%i] : memref<64xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
