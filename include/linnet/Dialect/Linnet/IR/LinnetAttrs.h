//===- LinnetAttrs.h - attributes of the linnet dialect ---------*- C++ -*-===//
//
// The generated attribute classes (LinnetAttrs.td): the lowering
// configuration the Codegen passes read.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_LINNET_IR_LINNETATTRS_H
#define LINNET_DIALECT_LINNET_IR_LINNETATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#define GET_ATTRDEF_CLASSES
#include "linnet/Dialect/Linnet/IR/LinnetAttrs.h.inc"

#endif // LINNET_DIALECT_LINNET_IR_LINNETATTRS_H
