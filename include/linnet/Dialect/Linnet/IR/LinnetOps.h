//===- LinnetOps.h - linnet operations --------------------------*- C++ -*-===//
//
// Declares the operation classes generated from LinnetOps.td for the
// lowering patterns and the IR generator.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_LINNET_IR_LINNETOPS_H
#define LINNET_DIALECT_LINNET_IR_LINNETOPS_H

#include "linnet/Dialect/Linnet/IR/LinnetDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"

#define GET_OP_CLASSES
#include "linnet/Dialect/Linnet/IR/LinnetOps.h.inc"

namespace linnet {
/// Gives the ops that bufferize as ops (the delta rule) their
/// BufferizableOpInterface; the dialect does so as it loads.
void attachBufferizationModels(mlir::MLIRContext &context);
} // namespace linnet

#endif // LINNET_DIALECT_LINNET_IR_LINNETOPS_H
