// Dynamic shapes: tiles are masked (vector.create_mask, masked transfers)
// and the contraction itself runs unmasked on zero-padded operands; the rows
// are split at a multiple of the register tile's 8, and the whole tiles'
// rows read without a mask (tensor<8x1xf32>: the row extent is static).
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=linalg" | FileCheck %s --check-prefix=LINALG
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=loops" | FileCheck %s --check-prefix=LOOPS

// LINALG-LABEL: func.func @matmul
// LINALG: scf.forall
// LINALG: vector.create_mask
// LINALG: vector.create_mask %c8, %{{.*}} : vector<8x16xi1>
// LINALG: vector.transfer_read {{.*}} {in_bounds = [true, true]} : tensor<8x1xf32>, vector<8x1xf32>
// LINALG-NOT: vector.mask {{.*}}vector.contract
// LINALG: vector.contract

// LOOPS-LABEL: func.func @matmul
// LOOPS: omp.wsloop
// LOOPS: vector.maskedload
// LOOPS: vector.fma
// LOOPS: vector.maskedstore
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {llvm.emit_c_interface} {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
