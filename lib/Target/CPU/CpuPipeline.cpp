//===- CpuPipeline.cpp - the CPU pipeline, stage by stage
//------------------===//
//
// One place that orders the passes from linalg on tensors to the LLVM
// dialect, so that the JIT, the AOT writer and linnet-opt run exactly the
// same pipeline, and lit tests can stop after each stage.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CpuPipeline.h"

#include "PassDetail.h"

#include "linnet/Codegen/Bufferization.h"
#include "linnet/Codegen/Passes.h"
#include "linnet/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace linnet {

namespace {

void addCleanup(OpPassManager &funcPm) {
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

/// Fusion, dispatch regions, tiling and vectorization, on tensors: the
/// shared Codegen passes around the CPU's choice of tile sizes.
void addLinalgStage(OpPassManager &pm, const CpuPipelineOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createConvertElementwiseToLinalgPass());
  addCleanup(funcPm);
  funcPm.addPass(createLinnetCodegenPrepare());
  funcPm.addPass(createLinnetCodegenParallelScatters());
  funcPm.addPass(createLinnetCodegenWriteStatesInPlace());
  LinnetCpuSelectLoweringConfigOptions tiling;
  tiling.contractionThreadTile.assign(options.contractionThreadTile.begin(),
                                      options.contractionThreadTile.end());
  tiling.contractionRegisterTile.assign(options.contractionRegisterTile.begin(),
                                        options.contractionRegisterTile.end());
  tiling.dotProductRegisterTile.assign(options.dotProductRegisterTile.begin(),
                                       options.dotProductRegisterTile.end());
  tiling.contractionReductionTile = options.contractionReductionTile;
  tiling.vectorLength = options.vectorLength;
  tiling.bf16DotProducts = options.bf16DotProducts;
  funcPm.addPass(createLinnetCpuSelectLoweringConfig(tiling));
  funcPm.addPass(createLinnetCodegenFormDispatchRegions());
  // The ops tiled as ops are lowered inside their regions (or where they
  // are, when too small to tile); what they become gets its configuration
  // and, outside a region, a region of its own.
  funcPm.addPass(createLinnetLowerToLinalg());
  addCleanup(funcPm);
  funcPm.addPass(createLinnetCpuSelectLoweringConfig(tiling));
  funcPm.addPass(createLinnetCodegenFormDispatchRegions());
  LinnetCodegenTileAndVectorizeOptions vectors;
  vectors.vectorize = options.vectorize;
  funcPm.addPass(createLinnetCodegenTileAndVectorize(vectors));
  addCleanup(funcPm);
  if (options.bf16DotProducts) {
    funcPm.addPass(createLinnetCpuUseBf16DotProducts());
    addCleanup(funcPm);
  }
}

/// On buffers: OpenMP loops, 1-D vectors, bf16 without runtime calls.
void addBufferLoops(OpPassManager &pm, const CpuPipelineOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createLinnetCpuLowerVectors());
  funcPm.addPass(createForallToParallelLoopPass());
  funcPm.addPass(createConvertLinalgToLoopsPass());
  addCleanup(funcPm);
  ConvertSCFToOpenMPPassOptions openmp;
  openmp.numThreads = options.numThreads;
  pm.addPass(createConvertSCFToOpenMPPass(openmp));
  pm.nest<func::FuncOp>().addPass(createLinnetCpuSerializeSingleTileRegions());

  // bf16 arithmetic in f32, rounded back to bf16 where a result is stored
  // (not between the operations of one kernel), and the rounding done with
  // integer ops: no call to __truncsfbf2 remains.
  OpPassManager &floatPm = pm.nest<func::FuncOp>();
  math::MathExtendToSupportedTypesOptions mathTypes;
  floatPm.addPass(math::createMathExtendToSupportedTypes(mathTypes));
  floatPm.addPass(createLinnetCpuApproximateMath());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  emulate.targetTypeStr = "f32";
  floatPm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  floatPm.addPass(createLinnetCpuKeepF32InKernels());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  floatPm.addPass(arith::createArithExpandOpsPass(expand));
  addCleanup(floatPm);
}

/// Bufferization, then the loops on buffers.
void addLoopsStage(OpPassManager &pm, const CpuPipelineOptions &options) {
  codegen::addBufferization(pm);
  addBufferLoops(pm, options);
}

/// Conversion of everything to the LLVM dialect.
void addLLVMStage(OpPassManager &pm, const CpuPipelineOptions &options) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.runtimeAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createSCFToControlFlowPass());
  // Vectors first: lowering them materializes masks with arith ops.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true;
  vectorToLLVM.x86Vector = options.bf16DotProducts;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createLinnetCpuMoveBf16AsI16());
  addCleanup(pm);
  buildHostTranslationPreparation(pm);
}

/// Textual options of `linnet-cpu-pipeline`.
struct CpuPipelineCliOptions
    : public PassPipelineOptions<CpuPipelineCliOptions> {
  Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("Last stage to run: linalg, loops or llvm"),
      llvm::cl::init("llvm")};
  Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("OpenMP threads per parallel region (0: all cores)"),
      llvm::cl::init(0)};
  Option<bool> vectorize{*this, "vectorize",
                         llvm::cl::desc("Vectorize the tiled operations"),
                         llvm::cl::init(true)};
  ListOption<int64_t> dotProductRegisterTile{
      *this, "dot-product-register-tile",
      llvm::cl::desc("Rows, columns and lanes along k of the outputs a "
                     "dot-product contraction computes at once")};
  Option<int64_t> vectorLength{
      *this, "vector-length",
      llvm::cl::desc("Vector length along the innermost dimension"),
      llvm::cl::init(32)};
  Option<bool> bf16DotProducts{
      *this, "bf16-dot-products",
      llvm::cl::desc("Multiply and add pairs of bf16 lanes in one "
                     "instruction (needs AVX512-BF16)"),
      llvm::cl::init(false)};
  Option<bool> runtimeAllocation{
      *this, "runtime-allocation",
      llvm::cl::desc("Allocate through the runtime's checked functions "
                     "instead of malloc"),
      llvm::cl::init(false)};
};

} // namespace

void buildHostTranslationPreparation(OpPassManager &pm) {
  pm.addPass(createLinnetCpuDropForeignArgumentAttributes());
}

void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options,
                      CpuStage stopAfter) {
  addLinalgStage(pm, options);
  if (stopAfter == CpuStage::Linalg)
    return;
  addLoopsStage(pm, options);
  if (stopAfter == CpuStage::Loops)
    return;
  addLLVMStage(pm, options);
}

void buildCpuPipelineOnBuffers(OpPassManager &pm,
                               const CpuPipelineOptions &options) {
  addBufferLoops(pm, options);
  addLLVMStage(pm, options);
}

void registerCpuPasses() {
  registerLinnetCodegenPasses();
  registerLinnetCpuPasses();
}

void registerCpuPipelines() {
  registerCpuPasses();
  PassPipelineRegistration<CpuPipelineCliOptions>(
      "linnet-cpu-pipeline",
      "Lower linalg on tensors to the LLVM dialect for the CPU (fusion, "
      "OpenMP threads, tiling, vectorization)",
      [](OpPassManager &pm, const CpuPipelineCliOptions &cli) {
        CpuPipelineOptions options;
        options.numThreads = cli.threads;
        options.vectorize = cli.vectorize;
        options.runtimeAllocation = cli.runtimeAllocation;
        options.vectorLength = cli.vectorLength;
        options.bf16DotProducts = cli.bf16DotProducts;
        if (cli.dotProductRegisterTile.size() == 3)
          options.dotProductRegisterTile.assign(
              cli.dotProductRegisterTile.begin(),
              cli.dotProductRegisterTile.end());
        CpuStage stage = CpuStage::LLVM;
        if (cli.stopAfter == "linalg")
          stage = CpuStage::Linalg;
        else if (cli.stopAfter == "loops")
          stage = CpuStage::Loops;
        buildCpuPipeline(pm, options, stage);
      });
}

} // namespace linnet
