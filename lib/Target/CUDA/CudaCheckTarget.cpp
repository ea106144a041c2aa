//===- CudaCheckTarget.cpp - the GPU and PTX version, checked first -------===//
//
// The NVVM pipeline takes any chip and PTX version and hands them to LLVM,
// which aborts the process on a PTX version too old for the chip. This pass
// runs first and turns such options into an error that names them.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "llvm/ADT/StringSwitch.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDACHECKTARGET
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// The newest PTX version LLVM 22 writes that CUDA 13's ptxas reads.
constexpr int kNewestPtx = 90;

/// The oldest PTX version (times ten) that can describe `chip`, or 0 for a
/// chip this table does not know.
int oldestPtxFor(llvm::StringRef chip) {
  return llvm::StringSwitch<int>(chip)
      .Case("sm_75", 63)
      .Case("sm_80", 70)
      .Case("sm_86", 71)
      .Case("sm_89", 78)
      .Case("sm_90", 78)
      .Case("sm_90a", 80)
      .Default(0);
}

struct CudaCheckTargetPass
    : linnet::impl::LinnetCudaCheckTargetBase<CudaCheckTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int oldest = oldestPtxFor(chip);
    if (oldest == 0) {
      module.emitError() << "`chip=" << chip
                         << "` is not a GPU the CUDA target knows (sm_75, "
                            "sm_80, sm_86, sm_89, sm_90, sm_90a)";
      return signalPassFailure();
    }
    llvm::StringRef version(features);
    int ptx = 0;
    if (!version.consume_front("+ptx") || version.getAsInteger(10, ptx)) {
      module.emitError() << "`features=" << features
                         << "` is not a PTX version; write it as +ptx80";
      return signalPassFailure();
    }
    if (ptx < oldest || ptx > kNewestPtx) {
      module.emitError() << "`features=" << features << "`: " << chip
                         << " needs PTX " << oldest / 10 << "." << oldest % 10
                         << " to " << kNewestPtx / 10 << "." << kNewestPtx % 10
                         << " (+ptx" << oldest << " to +ptx" << kNewestPtx
                         << ")";
      return signalPassFailure();
    }
  }
};

} // namespace
