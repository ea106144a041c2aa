//===- CpuPipeline.h - linalg on tensors to the LLVM dialect for the CPU --===//
//
// The CPU target takes a module of `func.func`s written with upstream
// dialects on tensors (linalg, tensor, arith, math, scf) and lowers it to the
// LLVM dialect: producer/consumer fusion into dispatch regions, tiling over
// threads (OpenMP), tiling to registers and vectorization, bufferization, and
// the conversion to LLVM. The same pipeline serves the JIT (CpuExecutable),
// the AOT object writer and `linnet-opt --linnet-cpu-pipeline`.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CPU_CPUPIPELINE_H
#define LINNET_TARGET_CPU_CPUPIPELINE_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace linnet {

/// Where buildCpuPipeline stops, so that tests and tools can look at each
/// representation the CPU target goes through.
enum class CpuStage {
  /// Dispatch regions formed, tiled over threads (`scf.forall`) and to
  /// registers, vectorized; still on tensors, right before bufferization.
  Linalg,
  /// Bufferized: OpenMP parallel loops, `scf.for` and 1-D vector ops on
  /// memrefs, right before the conversion to the LLVM dialect.
  Loops,
  /// The LLVM dialect, ready for translation to LLVM IR.
  LLVM,
};

/// Knobs of the CPU pipeline. The register tiles of the defaults suit
/// AVX-512's 32 vector registers; cpuPipelineOptionsFor (CpuExecutable.h)
/// gives the options for a particular CPU.
struct CpuPipelineOptions {
  /// OpenMP threads for each parallel region; 0 lets the runtime decide
  /// (all cores, or OMP_NUM_THREADS).
  unsigned numThreads = 0;
  /// Vectorize tiled operations; when false they become scalar loops.
  bool vectorize = true;
  /// Tile of the two innermost parallel dimensions (rows, columns of the
  /// result) of a contraction handed to one thread.
  llvm::SmallVector<int64_t, 2> contractionThreadTile = {64, 256};
  /// Register tile of a contraction: rows and columns of the accumulator,
  /// which stays in vector registers across the reduction loop.
  llvm::SmallVector<int64_t, 2> contractionRegisterTile = {8, 16};
  /// Rows, columns and lanes along k of the outputs that a contraction
  /// whose operands both run along k computes at once: each output a vector
  /// of lanes, so that every row and column vector loaded serves several
  /// outputs (a single row takes one output of `vectorLength` lanes).
  llvm::SmallVector<int64_t, 3> dotProductRegisterTile = {4, 4, 16};
  /// Block of the reduction dimensions of a contraction (cache blocking).
  int64_t contractionReductionTile = 256;
  /// Vector length (elements) along the innermost dimension of elementwise
  /// operations and reductions.
  int64_t vectorLength = 32;
  /// The CPU multiplies and adds pairs of bf16 lanes into f32 in one
  /// instruction (AVX512-BF16's `vdpbf16ps`): dot products of bf16 operands
  /// use it instead of widening both to f32 (cpuHasBf16DotProducts says
  /// whether a CPU has it).
  bool bf16DotProducts = false;
  /// Allocate buffers through the runtime's `_mlir_memref_to_llvm_alloc`
  /// (and `_aligned_alloc`, `_free`) instead of `malloc`, so that a failed
  /// allocation is an error the runtime reports (RuntimeCalls.h)
  /// rather than a write through a null pointer. Off for code run by
  /// `mlir-runner`, which has no such functions.
  bool runtimeAllocation = true;
};

/// Adds the CPU pipeline to `pm` (anchored on `builtin.module`), from the
/// linalg-on-tensors input contract up to and including `stopAfter`.
void buildCpuPipeline(mlir::OpPassManager &pm,
                      const CpuPipelineOptions &options, CpuStage stopAfter);

/// Adds what the CPU pipeline runs after its bufferization (OpenMP loops,
/// 1-D vectors, bf16 computed in f32, the LLVM dialect) for a module already
/// on buffers: the CUDA target's emulated device runs its kernels' host form
/// through it.
void buildCpuPipelineOnBuffers(mlir::OpPassManager &pm,
                               const CpuPipelineOptions &options);

/// Adds what a module in the LLVM dialect needs before MLIR translates it
/// to LLVM IR for the host (the CUDA target's host side, too): entry
/// arguments stripped of linnet's own attributes, which the translation
/// warns about by printing each whole function (minutes at full size).
void buildHostTranslationPreparation(mlir::OpPassManager &pm);

/// Registers the `linnet-cpu-pipeline` pass pipeline
/// (`linnet-cpu-pipeline{stop-after=linalg|loops|llvm threads=N
/// vectorize=true|false runtime-allocation=true|false}`, the last off by
/// default) and the CPU target's own passes.
void registerCpuPipelines();

/// Registers the CPU target's own passes (`linnet-cpu-tile-and-vectorize`,
/// `linnet-cpu-lower-vectors`) for tools that build pipelines from text.
void registerCpuPasses();

} // namespace linnet

#endif // LINNET_TARGET_CPU_CPUPIPELINE_H
