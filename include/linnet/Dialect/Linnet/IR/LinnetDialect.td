//===- LinnetDialect.td - the linnet dialect definition ----*- tablegen -*-===//
//
// The linnet dialect holds the model-level operations that have no direct
// upstream counterpart (attention, the gated delta rule, causal convolution,
// routed expert matmuls, top-k and rank). Everything else in a Linnet model is
// expressed with upstream dialects.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_LINNET_IR_LINNETDIALECT_TD
#define LINNET_DIALECT_LINNET_IR_LINNETDIALECT_TD

include "mlir/IR/OpBase.td"

def Linnet_Dialect : Dialect {
  let name = "linnet";
  let summary = "Model-level tensor operations of the Linnet language";
  let description = [{
    The `linnet` dialect carries the built-in operations of the Linnet model
    language that upstream MLIR has no single operation for: causal
    grouped-query attention, the gated delta rule, depthwise causal
    convolution with carried history, routed expert matmuls, `topk` and
    `rank`. All operations work on ranked tensors and have value semantics;
    `linnet-lower-to-linalg` rewrites each into linalg, tensor, scf, arith and
    math operations on tensors.
  }];
  let cppNamespace = "::linnet";
  let useDefaultAttributePrinterParser = 1;
}

/// Float element types the operations accept; arithmetic happens in f32.
def Linnet_Float : AnyTypeOf<[F16, BF16, F32], "16- or 32-bit float">;

class Linnet_Op<string mnemonic, list<Trait> traits = []>
    : Op<Linnet_Dialect, mnemonic, traits>;

#endif // LINNET_DIALECT_LINNET_IR_LINNETDIALECT_TD
