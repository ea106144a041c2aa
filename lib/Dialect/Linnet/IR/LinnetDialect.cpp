//===- LinnetDialect.cpp - the linnet dialect -----------------------------===//
//
// Registers the linnet operations with the dialect; the generated dialect
// definitions are included here once.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Linnet/IR/LinnetDialect.h"
#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

using namespace mlir;
using namespace linnet;

#include "linnet/Dialect/Linnet/IR/LinnetOpsDialect.cpp.inc"

void LinnetDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "linnet/Dialect/Linnet/IR/LinnetOps.cpp.inc"
      >();
}
