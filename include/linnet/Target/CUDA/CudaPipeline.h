//===- CudaPipeline.h - linalg on tensors to GPU kernels for CUDA ---------===//
//
// The CUDA target takes the module the CPU target takes (func.func on
// tensors: linalg, tensor, arith, math, scf and the linnet ops) and makes
// every dispatch region a GPU kernel: the shared Codegen's dispatch regions
// with the GPU's block tiles, bufferization, each region a `gpu.launch`
// (blocks and threads), the kernels outlined, then NVVM, PTX and a cubin
// (ptxas from the CUDA toolkit). The host side of the module is not yet a
// plan that runs on a GPU (its buffers are host allocations): this is the
// device code, checked by ptxas, and its emulated device, where the host
// runs every kernel.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CUDA_CUDAPIPELINE_H
#define LINNET_TARGET_CUDA_CUDAPIPELINE_H

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace linnet {

/// $CUDA_HOME when set, else /usr/local/cuda.
std::string defaultCudaToolkit();

/// Where buildCudaPipeline stops.
enum class CudaStage {
  /// Dispatch regions formed with the GPU's block tiles, on tensors.
  Linalg,
  /// Bufferized, every region a kernel: `gpu.launch_func` on the host side,
  /// `gpu.func` kernels in a `gpu.module`.
  Kernels,
  /// The kernels compiled to a cubin (`gpu.binary`), the host side in the
  /// LLVM dialect.
  Binary,
};

/// Knobs of the CUDA pipeline.
struct CudaPipelineOptions {
  /// Threads of each block, and parallel iterations of a block's tile.
  int64_t threadsPerBlock = 256;
  /// The GPU the cubin is for, and the PTX version (CUDA 13's ptxas takes
  /// +ptx80 to +ptx90 from LLVM 22; without one LLVM aborts on sm_90a).
  /// PTX 8.1 is the first to allow 32 KiB of kernel parameters, which a
  /// chained kernel's phases take together.
  std::string chip = "sm_90a";
  std::string features = "+ptx81";
  /// The CUDA toolkit: its bin/ptxas assembles the PTX, its
  /// nvvm/libdevice/libdevice.10.bc has the math functions.
  std::string toolkit = defaultCudaToolkit();
  /// What each kernel becomes: `bin`, a cubin assembled by ptxas; `isa`,
  /// its PTX text (for `ptxas -v`'s resource report).
  std::string format = "bin";
  /// Run the kernels on the emulated device instead: after the mapping onto
  /// blocks and threads (stage Kernels without the outlining), every
  /// `gpu.launch` executed by the host (linnet-cuda-emulate-launches) and the
  /// module lowered as the CPU lowers buffers; stage Binary is then the LLVM
  /// dialect of the host alone.
  bool emulated = false;
  /// With `emulated`: allocate through the runtime's checked functions (off
  /// for code that `mlir-runner` runs), as CpuPipelineOptions says.
  bool runtimeAllocation = true;
  /// Make consecutive dependent launches one chained kernel whose phases
  /// are separated by grid waits (linnet-cuda-chain-launches).
  bool chainLaunches = true;
  /// Keys a block of a prompt's attention (its online softmax): a block
  /// reads and writes the f32 sums of every query that sees it (16 heads x
  /// 256 a query, 16 KiB) and launches 6 kernels, and computes the scores
  /// above the diagonal across its own width. An 8k prompt's layer on
  /// paper: at 256 keys 32 blocks move 4.4 GB of sums and launch 192
  /// kernels; at 1024, 8 blocks move 1.2 GB and launch 48, for 50M more
  /// scores above the diagonal (0.9 GB, each written and read in f32 and
  /// bf16). Its scores take 16 x 1024 f32 a query (512 MiB at 8k; all keys
  /// at once, 4 GiB). A decode step's block stays 256 (its scores in a
  /// block's shared memory).
  int64_t attentionPromptKeyBlock = 1024;
};

/// Adds the CUDA pipeline to `pm` (anchored on `builtin.module`) up to and
/// including `stopAfter`.
void buildCudaPipeline(mlir::OpPassManager &pm,
                       const CudaPipelineOptions &options, CudaStage stopAfter);

/// The rest of the pipeline for a module at stage Kernels: to stage Binary
/// (where a caller looks at the kernels and launches in between).
void buildCudaBinaryStage(mlir::OpPassManager &pm,
                          const CudaPipelineOptions &options);

/// Registers the `linnet-cuda-pipeline` pass pipeline
/// (`linnet-cuda-pipeline{stop-after=linalg|kernels|binary
/// threads-per-block=N chip=sm_90a features=+ptx81 format=bin|isa
/// device=gpu|emulated runtime-allocation=true|false chain-launches=true|false
/// toolkit=DIR}`) and the
/// CUDA target's own passes.
void registerCudaPipelines();

} // namespace linnet

#endif // LINNET_TARGET_CUDA_CUDAPIPELINE_H
