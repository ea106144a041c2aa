//===- PassDetail.h - declarations of the CPU target's passes -------------===//
//
// The generated pass declarations stay private to lib/Target/CPU: clients
// build the whole pipeline through CpuPipeline.h and never name a pass.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CPU_PASSDETAIL_H
#define LINNET_LIB_TARGET_CPU_PASSDETAIL_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

#include "linnet/Dialect/Linnet/IR/LinnetDialect.h"

namespace linnet {

#define GEN_PASS_DECL
#include "Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Passes.h.inc"

} // namespace linnet

#endif // LINNET_LIB_TARGET_CPU_PASSDETAIL_H
