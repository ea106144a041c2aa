//===- CudaPipeline.cpp - the CUDA pipeline, stage by stage ---------------===//
//
// One place that orders the passes from linalg on tensors to a cubin, so
// that tools and lit tests run the same pipeline and can stop after each
// stage. The Codegen passes are the CPU target's; the tile sizes, the
// mapping onto blocks and threads and the tail (NVVM) are the GPU's.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/CudaPipeline.h"

#include "HostBuffers.h"
#include "PassDetail.h"

#include "linnet/Codegen/Bufferization.h"
#include "linnet/Codegen/Passes.h"
#include "linnet/Conversion/Passes.h"
#include "linnet/Target/CPU/CpuPipeline.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>

using namespace mlir;

namespace linnet {

namespace {

/// Outputs of a routed expert's product per block: a decode's 8 slots (one
/// row, TopK 8) then fill 8 x 1024 / 64 = 128 blocks for the full size's
/// gate_up, about one wave of an H100's or H200's 132 SMs, instead of 8
/// blocks each reading a whole expert.
constexpr int64_t kExpertOutputTile = 64;

/// Rows of a tile of a prompt's routed experts (slots sorted by expert),
/// and its outputs a block: a tensor-core product's wide block tile of 128
/// x 128 (TensorCoreLayout: 32 x 64 a warp), each expert's weights read
/// once a 128 of its slots (8, the CPU's, filled half an mma's 16 rows and
/// read them 16 times as often). An 8k prompt's 65536 slots are about 256
/// an expert: two tiles, against four of 64 rows in the 64 x 64 layout,
/// whose warps issue an ldmatrix for each 1.3 mma.sync (2.7 here).
constexpr int64_t kExpertGroupRows = 128;
constexpr int64_t kExpertGroupOutputTile = 128;

/// Slots an expert from which the routed experts are sorted into tiles:
/// a decode step of 16 rows (128 slots over 256 experts, about 100 of them
/// chosen) reads each chosen expert once instead of once a slot, a fifth
/// fewer bytes for the price of the sort's few kernels; at 64 rows (about
/// 221 chosen of 512 slots) less than half.
constexpr double kExpertGroupedSlots = 0.5;

/// The most a fused producer's tile may take of a block's shared memory
/// (48 KiB a block without opting in to more, for all its buffers): a
/// decode GEMV's input row (8 KiB for 4096 bf16) joins its region, a
/// tensor-core product's 128 rows of it (1 MiB) do not, nor do 8 rows of
/// a 2048-wide one (32 KiB, at Batch 8), which with their norm's f32 rows
/// and the GEMV's own buffers took 52 KiB.
constexpr int64_t kMaxFusedTileBytes = 24 * 1024;

void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// The linnet ops lowered, dispatch regions formed with the GPU's block
/// tiles, on tensors.
void addLinalgStage(OpPassManager &pm, const CudaPipelineOptions &options) {
  LinnetCudaCheckTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  pm.addPass(createLinnetCudaCheckTarget(target));
  // A decode step's mixture of experts, specialized to its one row; a
  // layer's DeltaNet or attention, called once.
  pm.addPass(createLinnetCodegenInlineCalls());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createConvertElementwiseToLinalgPass());
  addCleanup(funcPm);
  funcPm.addPass(createLinnetCodegenPrepare());
  funcPm.addPass(createLinnetCodegenParallelScatters());
  // A rope's sine and cosine of an argument reduced here need no local
  // array: they fuse with their readers.
  funcPm.addPass(createLinnetCudaReduceTrigonometric());
  funcPm.addPass(createLinnetCodegenWriteStatesInPlace());
  funcPm.addPass(createLinnetCudaFoldKeepdimReshapes());
  LinnetCudaVersionProductsOptions versions;
  versions.threadsPerBlock = options.threadsPerBlock;
  funcPm.addPass(createLinnetCudaVersionProducts(versions));
  LinnetCudaSelectLoweringConfigOptions tiling;
  tiling.threadsPerBlock = options.threadsPerBlock;
  // First only the ops tiled as ops; everything else once the other linnet
  // ops are linalg too, so that what they become fuses with its neighbours.
  LinnetCudaSelectLoweringConfigOptions specialTiling = tiling;
  specialTiling.specialOpsOnly = true;
  funcPm.addPass(createLinnetCudaSelectLoweringConfig(specialTiling));
  // A reduction shares a kernel with its consumer; a region of one tile
  // stays a kernel with its producers, not folded.
  LinnetCodegenFormDispatchRegionsOptions regions;
  regions.fuseReductions = true;
  regions.mapToBlocks = true;
  regions.maxFusedTileBytes = kMaxFusedTileBytes;
  // The kernels of the ops lowered inside their regions (the delta rule,
  // attention, the routed experts' products) take in their producers too.
  regions.fuseIntoLoweredRegions = true;
  // Through real reshapes too: a head's channels, the heads' features.
  regions.fuseThroughReshapes = true;
  funcPm.addPass(createLinnetCodegenFormDispatchRegions(regions));
  // The ops tiled as ops (a decode step's delta rule and attention) are
  // lowered inside their regions, a kernel each; the others where they are,
  // and what they become gets its tiles and regions.
  // A decode's experts' down projection (a row per slot) is left for the
  // combination that weighs its slots: that region takes in a tile of it,
  // each block all slots of its outputs, so it is no kernel of its own.
  LinnetLowerToLinalgOptions lowering;
  lowering.expertOutputTile = kExpertOutputTile;
  lowering.expertGroupRows = kExpertGroupRows;
  lowering.expertGroupOutputTile = kExpertGroupOutputTile;
  lowering.expertGroupedSlots = kExpertGroupedSlots;
  lowering.expertParallelSort = true;
  lowering.keepSlotProducts = true;
  lowering.slotLoopsInRegions = true;
  // A prompt's delta rule stays an op until its kernel's warps run it.
  lowering.keepSequenceScans = true;
  // A prompt's attention too, until its kernel's warps run it on the
  // tensor cores (TensorCoreAttention.h).
  lowering.keepPromptAttention = true;
  // A prompt's attention scores and weights in bf16, so that the weights'
  // product with the values takes the tensor cores and the scores, a
  // block's largest tensors, move half the bytes.
  lowering.attentionRoundedWeights = true;
  lowering.attentionPromptKeyBlock = options.attentionPromptKeyBlock;
  funcPm.addPass(createLinnetLowerToLinalg(lowering));
  addCleanup(funcPm);
  // What reads a prompt's routed products takes their forms with them: the
  // gathers back into slot order fuse with their readers, the down
  // projection's choice folds and its sort is the gate and up projection's.
  funcPm.addPass(createLinnetCodegenVersionTails());
  // A split of the gate and up products gathered back: each half its own
  // gather, which the SiLU product's region takes in.
  funcPm.addPass(createLinnetCodegenSliceProducers());
  addCleanup(funcPm);
  // Their reshapes of unit axes (a mixture of experts' sum back to [B, S,
  // H]) are read through as the model's were.
  funcPm.addPass(createLinnetCudaFoldKeepdimReshapes());
  // A rotated key's row, a concatenation, is copied into its cache slot by
  // a linalg op (here, after the last cleanup, which would fold the copy
  // away), whose region computes the pieces into the cache itself.
  LinnetCodegenWriteStatesInPlaceOptions states;
  states.copyConcatenations = true;
  funcPm.addPass(createLinnetCodegenWriteStatesInPlace(states));
  funcPm.addPass(createLinnetCudaSelectLoweringConfig(tiling));
  regions.fuseTileableProducers = true;
  funcPm.addPass(createLinnetCodegenFormDispatchRegions(regions));
  addCleanup(funcPm);
  // The products taken in are lowered inside their regions (one not taken
  // in, where it is, a region of its own that takes in its producers);
  // what they become gets its tiles.
  lowering.keepSlotProducts = false;
  funcPm.addPass(createLinnetLowerToLinalg(lowering));
  addCleanup(funcPm);
  funcPm.addPass(createLinnetCudaSelectLoweringConfig(tiling));
  regions.fuseTileableProducers = false;
  funcPm.addPass(createLinnetCodegenFormDispatchRegions(regions));
  addCleanup(funcPm);
}

/// Bufferized (as on the CPU), every dispatch region a kernel.
void addKernelsStage(OpPassManager &pm, const CudaPipelineOptions &options) {
  codegen::addBufferization(pm);
  LinnetCudaMapDispatchRegionsOptions mapping;
  mapping.threadsPerBlock = options.threadsPerBlock;
  pm.nest<func::FuncOp>().addPass(createLinnetCudaMapDispatchRegions(mapping));
  LinnetCudaPlanHostOptions host;
  host.threadsPerBlock = options.threadsPerBlock;
  host.synchronize = !options.emulated;
  pm.addPass(createLinnetCudaPlanHost(host));
  pm.addPass(createLinnetCudaMergeLaunches());
  if (options.chainLaunches) {
    // Folded first: a grid the host computes from constants (a merged
    // kernel's parts, a copy's element count) is then a constant.
    addCleanup(pm);
    // PTX 8.1 raised a kernel's parameters from 4 KiB to 32 KiB; each
    // limit less a margin, as kMaxKernelParameterBytes is of 4 KiB.
    int ptx = 0;
    llvm::StringRef(options.features).drop_front(4).getAsInteger(10, ptx);
    LinnetCudaChainLaunchesOptions chaining;
    chaining.parameterBytes =
        ptx >= 81 ? 30 * 1024 : linnet::kMaxKernelParameterBytes;
    pm.addPass(createLinnetCudaChainLaunches(chaining));
  }
  if (options.emulated) {
    pm.nest<func::FuncOp>().addPass(createLinnetCudaEmulateLaunches());
    addCleanup(pm);
    return;
  }
  pm.addPass(createLowerAffinePass());
  addCleanup(pm);
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
}

/// The kernels through NVVM to a cubin (ptxas), the host side to LLVM: the
/// passes of upstream's gpu-lower-to-nvvm-pipeline (MLIR22_NOTES section 4),
/// spelled out because that pipeline cannot be told where the toolkit is
/// (ptxas, and libdevice for math functions such as `__nv_expf`).
void addBinaryStage(OpPassManager &pm, const CudaPipelineOptions &options) {
  if (options.emulated) {
    CpuPipelineOptions host;
    host.runtimeAllocation = options.runtimeAllocation;
    buildCpuPipelineOnBuffers(pm, host);
    return;
  }
  pm.addPass(createLinnetCudaAlignWorkgroupBuffers());
  pm.addPass(createLinnetCudaLowerGridWaits());
  pm.addPass(createLinnetCudaLowerBf16Mma());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  addCleanup(pm);
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  addCleanup(kernels);
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // The host's buffers come from the runtime (a GPU's managed memory), as
  // the CPU's do from its heap.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.runtimeAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  addCleanup(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
  buildHostTranslationPreparation(pm);
}

/// Textual options of `linnet-cuda-pipeline`.
struct CudaPipelineCliOptions
    : public PassPipelineOptions<CudaPipelineCliOptions> {
  Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("Last stage to run: linalg, kernels or binary"),
      llvm::cl::init("binary")};
  Option<int64_t> threadsPerBlock{*this, "threads-per-block",
                                  llvm::cl::desc("Threads of each block"),
                                  llvm::cl::init(256)};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The GPU the cubin is for"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("The PTX version"),
                               llvm::cl::init("+ptx81")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What each kernel becomes: bin (a cubin) or isa (PTX)"),
      llvm::cl::init("bin")};
  Option<std::string> device{
      *this, "device",
      llvm::cl::desc("gpu (kernels for a GPU) or emulated (the kernels run by "
                     "the host)"),
      llvm::cl::init("gpu")};
  Option<bool> runtimeAllocation{
      *this, "runtime-allocation",
      llvm::cl::desc("With device=emulated: allocate through the runtime's "
                     "checked functions instead of malloc"),
      llvm::cl::init(false)};
  Option<int64_t> attentionPromptKeyBlock{
      *this, "attention-prompt-key-block",
      llvm::cl::desc("Keys per block of a prompt's attention (online "
                     "softmax)"),
      llvm::cl::init(1024)};
  Option<bool> chainLaunches{
      *this, "chain-launches",
      llvm::cl::desc("Make consecutive dependent launches one chained "
                     "kernel with grid waits between its phases"),
      llvm::cl::init(true)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("The CUDA toolkit (ptxas, libdevice); default "
                     "$CUDA_HOME, else /usr/local/cuda"),
      llvm::cl::init("")};
};

} // namespace

std::string defaultCudaToolkit() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return "/usr/local/cuda";
}

void buildCudaPipeline(OpPassManager &pm, const CudaPipelineOptions &options,
                       CudaStage stopAfter) {
  addLinalgStage(pm, options);
  if (stopAfter == CudaStage::Linalg)
    return;
  addKernelsStage(pm, options);
  if (stopAfter == CudaStage::Kernels)
    return;
  addBinaryStage(pm, options);
}

void buildCudaBinaryStage(OpPassManager &pm,
                          const CudaPipelineOptions &options) {
  addBinaryStage(pm, options);
}

void registerCudaPipelines() {
  registerLinnetCudaPasses();
  PassPipelineRegistration<CudaPipelineCliOptions>(
      "linnet-cuda-pipeline",
      "Lower linalg on tensors to GPU kernels and a cubin for CUDA",
      [](OpPassManager &pm, const CudaPipelineCliOptions &cli) {
        CudaPipelineOptions options;
        options.threadsPerBlock = cli.threadsPerBlock;
        options.chip = cli.chip;
        options.features = cli.features;
        options.format = cli.format;
        options.emulated = cli.device == "emulated";
        options.runtimeAllocation = cli.runtimeAllocation;
        options.chainLaunches = cli.chainLaunches;
        options.attentionPromptKeyBlock = cli.attentionPromptKeyBlock;
        if (!cli.toolkit.empty())
          options.toolkit = cli.toolkit;
        CudaStage stage = CudaStage::Binary;
        if (cli.stopAfter == "linalg")
          stage = CudaStage::Linalg;
        else if (cli.stopAfter == "kernels")
          stage = CudaStage::Kernels;
        buildCudaPipeline(pm, options, stage);
      });
}

} // namespace linnet
