//===- Passes.h - the target-neutral Codegen passes -------------*- C++ -*-===//
//
// Constructors and registration of the passes in Passes.td. Targets add
// them to their pipelines (Target/CPU/CpuPipeline.cpp), around their own
// selection of lowering configurations.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_PASSES_H
#define LINNET_CODEGEN_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace linnet {

#define GEN_PASS_DECL
#include "linnet/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "linnet/Codegen/Passes.h.inc"

} // namespace linnet

#endif // LINNET_CODEGEN_PASSES_H
