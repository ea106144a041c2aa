//===- HostBuffers.h - which buffers the host's operations share ----------===//
//
// The host plan moves and merges what it launches (linnet-cuda-plan-host's
// copies and device reads, linnet-cuda-merge-launches' kernels); they ask
// which buffer a view is of, whether two views may share an element, and
// what a kernel reads and writes.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_HOSTBUFFERS_H
#define LINNET_LIB_TARGET_CUDA_HOSTBUFFERS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <cstdint>

namespace linnet {

/// The most bytes of buffer descriptors and sizes one kernel the host plan
/// makes takes as parameters: PTX before 8.1 allows 4352 bytes of them
/// (ptxas: "uses too much parameter space").
constexpr int64_t kMaxKernelParameterBytes = 3072;

/// The value `value` views, casts or reads the metadata of; null where it
/// is none of these.
mlir::Value viewSourceOf(mlir::Value value);

/// The buffer `value` is a view of: through views, casts and metadata.
mlir::Value rootOf(mlir::Value value);

/// Whether `a` and `b` may share an element. Views of different buffers do
/// not (distinct allocations, a call's result its callee allocated and any
/// buffer there was before the call, or distinct arguments of an entry, which
/// the runtime gives distinct buffers: `distinctArguments`; a private
/// function's arguments may be one buffer twice); subviews of one value
/// only where ValueBounds cannot tell their slices apart.
bool mayOverlap(mlir::Value a, mlir::Value b, bool distinctArguments);

/// Whether each function of `module` has buffer arguments that are distinct
/// buffers, as mayOverlap's `distinctArguments` asks: an entry's (the
/// runtime gives each its own), or a private function's where every call
/// passes buffers of distinct roots, each an allocation or a distinct
/// argument of its caller.
llvm::DenseMap<mlir::Operation *, bool>
functionsWithDistinctArguments(mlir::ModuleOp module);

/// The bytes a kernel parameter of `value`'s type takes: a buffer's
/// descriptor (two pointers, an offset, a size and a stride a dimension),
/// else one 8-byte scalar.
int64_t parameterBytes(mlir::Value value);

/// The bytes kernel parameters of `values` take, each once: what a merged
/// or chained kernel's parts take together (where they share a buffer, it
/// is one parameter).
int64_t parameterBytes(const llvm::SetVector<mlir::Value> &values,
                       const llvm::SetVector<mlir::Value> &more);

/// The host's buffers a kernel reads and writes: the values defined
/// outside its launch that its ops' memory effects reach through views.
struct LaunchAccess {
  llvm::SetVector<mlir::Value> read, written;
  /// An effect on memory that cannot be traced to a buffer (a loop's
  /// carried buffer, an effect on no value): the kernel depends on every
  /// other.
  bool unknown = false;

  void append(const LaunchAccess &other);
};

LaunchAccess accessOf(mlir::gpu::LaunchOp launch);

/// What host code `op` (with the ops nested in it, and the kernels it
/// launches) reads and writes, as for a launch: the buffers its ops'
/// memory effects name. A wait for the device touches none; a call of
/// anything else, or an effect on no value, is `unknown`.
LaunchAccess hostAccessOf(mlir::Operation *op);

/// Whether kernels with accesses `a` and `b` must run one after the other:
/// one writes what the other reads or writes (`distinctArguments` as for
/// mayOverlap).
bool dependent(const LaunchAccess &a, const LaunchAccess &b,
               bool distinctArguments);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_HOSTBUFFERS_H
