//===- Passes.h - conversions out of the linnet dialect ---------*- C++ -*-===//
//
// Declares the conversion passes generated from Passes.td and their
// registration, for linnet-opt and the compiler's pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CONVERSION_PASSES_H
#define LINNET_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace linnet {

#define GEN_PASS_DECL
#include "linnet/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "linnet/Conversion/Passes.h.inc"

} // namespace linnet

#endif // LINNET_CONVERSION_PASSES_H
