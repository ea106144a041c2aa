//===- LinnetDialect.h - the linnet dialect ---------------------*- C++ -*-===//
//
// Declares the linnet dialect class generated from LinnetDialect.td, so that
// tools and passes can load it without seeing the operations.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_LINNET_IR_LINNETDIALECT_H
#define LINNET_DIALECT_LINNET_IR_LINNETDIALECT_H

#include "mlir/IR/Dialect.h"

#include "linnet/Dialect/Linnet/IR/LinnetOpsDialect.h.inc"

#endif // LINNET_DIALECT_LINNET_IR_LINNETDIALECT_H
