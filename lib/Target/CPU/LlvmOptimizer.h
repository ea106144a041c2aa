//===- LlvmOptimizer.h - LLVM's optimization pipeline for the CPU -*- C++
//-*-===//
//
// LLVM's default pipeline at an optimization level, as the JIT and the
// object writer both run it. Private to lib/Target/CPU.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CPU_LLVMOPTIMIZER_H
#define LINNET_LIB_TARGET_CPU_LLVMOPTIMIZER_H

#include "llvm/Support/Error.h"

#include <functional>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace linnet {

/// LLVM's default module pipeline at `optLevel` (0 to 3) for `machine`,
/// with loop and SLP vectorization, minus CalledValuePropagation: it
/// attaches call-target metadata to indirect calls that nothing here uses,
/// and with the OpenMP runtime's fork calls taking every outlined region by
/// pointer it took 18 of the 24 s of optimizing a full-size model.
std::function<llvm::Error(llvm::Module *)>
makeLlvmOptimizer(unsigned optLevel, llvm::TargetMachine *machine);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CPU_LLVMOPTIMIZER_H
