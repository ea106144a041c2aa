//===- KernelNames.h - what the CUDA target's kernels are called ----------===//
//
// A kernel's name is what `cuobjdump` and the build report list, so it says
// what the kernel computes: its function, its place there, the kind of its
// work and the Linnet source line it comes from.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_KERNELNAMES_H
#define LINNET_LIB_TARGET_CUDA_KERNELNAMES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace linnet {

/// The runtime function the host plan calls to wait for the device.
constexpr llvm::StringLiteral kDeviceSynchronize = "linnet_device_synchronize";

/// `<func>_<index>_<kind>_<file stem>_<line>`, the line that of the
/// innermost Linnet source in `loc`'s call-site chain (none when `kind` is
/// empty or `loc` has none), every character but letters and digits `_`
/// (PTX names hold no `.`): `SparseMoe_forward_39_generic_moe_25`.
std::string kernelName(mlir::func::FuncOp func, unsigned index,
                       llvm::StringRef kind, mlir::Location loc);

/// `<func>_kernels`, the `gpu.module` of every kernel `func` launches: one
/// module (one PTX file, one ptxas run, one cubin) per host function.
std::string kernelModuleName(mlir::func::FuncOp func);

/// A `gpu.launch` at the rewriter's insertion point of `blocks` blocks of
/// `threads` threads in x, with `workgroup` buffers, outlined later as kernel
/// `name` in the module of the function it is in; its body holds only the
/// terminator.
mlir::gpu::LaunchOp createNamedLaunch(mlir::RewriterBase &rewriter,
                                      mlir::Location loc, mlir::Value blocks,
                                      mlir::Value threads,
                                      mlir::TypeRange workgroup,
                                      llvm::StringRef name);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_KERNELNAMES_H
