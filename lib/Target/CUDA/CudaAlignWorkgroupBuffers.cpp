//===- CudaAlignWorkgroupBuffers.cpp - 16-byte aligned shared memory ------===//
//
// Kernels access workgroup buffers 16 bytes at a time (a tensor-core
// product's staged tiles, a chained kernel's views of its byte buffer), but
// the NVVM lowering gives a buffer only its element's alignment
// (`.shared .align 2` for bf16), where a `st.shared.v4` faults. Each
// kernel's workgroup buffers get an alignment of 16 here.
//
//===----------------------------------------------------------------------===//

#include "LaunchParts.h"
#include "PassDetail.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAALIGNWORKGROUPBUFFERS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

struct CudaAlignWorkgroupBuffersPass
    : linnet::impl::LinnetCudaAlignWorkgroupBuffersBase<
          CudaAlignWorkgroupBuffersPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    StringRef name = LLVM::LLVMDialect::getAlignAttrName();
    getOperation().walk([&](gpu::GPUFuncOp kernel) {
      for (unsigned index = 0; index < kernel.getNumWorkgroupAttributions();
           ++index) {
        auto given = dyn_cast_or_null<IntegerAttr>(
            kernel.getWorkgroupAttributionAttr(index, name));
        if (given && given.getInt() >= linnet::kWorkgroupAlignment)
          continue;
        kernel.setWorkgroupAttributionAttr(
            index, name,
            builder.getI64IntegerAttr(linnet::kWorkgroupAlignment));
      }
    });
  }
};

} // namespace
