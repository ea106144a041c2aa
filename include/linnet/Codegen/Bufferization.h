//===- Bufferization.h - the targets' shared way from tensors to buffers --===//
//
// Every target bufferizes its dispatch regions the same way: one-shot
// bufferization across function boundaries with identity layouts (the
// calling convention of the entries), states kept in the buffers their
// callers pass, buffers freed where they die.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_BUFFERIZATION_H
#define LINNET_CODEGEN_BUFFERIZATION_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace linnet::codegen {

/// Adds the bufferization of a module (anchored on `builtin.module`) on
/// tensors: afterwards every value is a memref and every buffer is freed.
void addBufferization(mlir::OpPassManager &pm);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_BUFFERIZATION_H
