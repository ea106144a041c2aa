//===- ModelCompiler.cpp - From sources to lowered MLIR -------------------===//
//
// `emit`, `run` and (later) `build` share one path: check the bodies, bind
// the generics, prove the obligations, generate the entries' IR, then lower
// it stage by stage with the linnet passes and the CPU target's pipeline.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Conversion/Passes.h"
#include "linnet/IRGen/IRGen.h"
#include "linnet/InitLinnet.h"
#include "linnet/Target/CPU/CpuPipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace linnet;
using namespace linnet::driver;

bool linnet::driver::compileModel(
    DriverSession &session, llvm::ArrayRef<std::string> bindArgs,
    const std::vector<std::string> &entries, LoweringStage stage,
    const CpuPipelineOptions &cpuOptions, CompiledModel &compiled,
    llvm::function_ref<bool(const BoundModel &)> beforeGeneration,
    const CudaPipelineOptions *cuda,
    llvm::function_ref<void(mlir::ModuleOp)> atKernels,
    mlir::OwningOpRef<mlir::ModuleOp> *emulated) {
  DiagnosticEngine &diags = session.diags;
  compiled.checked = checkBodies(session.program, diags);
  if (diags.hadError())
    return false;
  compiled.bound = bindModel(session.program, bindArgs, diags);
  if (!compiled.bound ||
      !proveObligations(compiled.checked, *compiled.bound, diags))
    return false;
  compiled.parameters = listParameters(session.program, *compiled.bound);
  if (beforeGeneration && !beforeGeneration(*compiled.bound))
    return false;
  compiled.times.lap("check, bind, prove");

  mlir::DialectRegistry registry;
  registerLinnetDialects(registry);
  compiled.context.appendDialectRegistry(registry);
  compiled.context.loadAllAvailableDialects();
  compiled.module =
      generateIR(compiled.context, session.program, compiled.checked,
                 *compiled.bound, compiled.parameters, entries, diags);
  if (!compiled.module)
    return false;
  compiled.times.lap("IR generation");
  if (stage == LoweringStage::Linnet)
    return true;

  mlir::PassManager toLinalg(&compiled.context);
  // Attention and the delta rule stay ops: the target tiles them as ops.
  LinnetLowerToLinalgOptions lowering;
  lowering.keepTileable = true;
  toLinalg.addPass(createLinnetLowerToLinalg(lowering));
  toLinalg.addPass(mlir::createCanonicalizerPass());
  toLinalg.addPass(mlir::createCSEPass());
  bool toKernels =
      stage == LoweringStage::Loops || stage == LoweringStage::Kernels;
  // Stopping at Kernels to show the module to `atKernels`, then on.
  bool pauseAtKernels = cuda && atKernels && !toKernels &&
                        stage != LoweringStage::Linalg && !cuda->emulated;
  mlir::PassManager pm(&compiled.context);
  if (stage != LoweringStage::Linalg && cuda)
    buildCudaPipeline(pm, *cuda,
                      toKernels || pauseAtKernels ? CudaStage::Kernels
                                                  : CudaStage::Binary);
  else if (stage != LoweringStage::Linalg)
    buildCpuPipeline(pm, cpuOptions,
                     stage == LoweringStage::Loops ? CpuStage::Loops
                                                   : CpuStage::LLVM);
  // MLIR's own diagnostics (a pass failing) go to standard error with
  // their locations, which are Linnet source locations.
  auto failed = [] {
    reportError(ErrorId::LoweringFailed,
                "lowering failed (a compiler bug); the messages above say "
                "where");
    return false;
  };
  if (mlir::failed(toLinalg.run(*compiled.module)))
    return failed();
  if (emulated) {
    // The same plan for the emulated device, from the same linalg.
    CudaPipelineOptions onHost = *cuda;
    onHost.emulated = true;
    *emulated = compiled.module->clone();
    mlir::PassManager emulation(&compiled.context);
    buildCudaPipeline(emulation, onHost, CudaStage::Binary);
    if (mlir::failed(emulation.run(**emulated)))
      return failed();
  }
  if (mlir::failed(pm.run(*compiled.module)))
    return failed();
  if (pauseAtKernels) {
    atKernels(*compiled.module);
    mlir::PassManager rest(&compiled.context);
    buildCudaBinaryStage(rest, *cuda);
    if (mlir::failed(rest.run(*compiled.module)))
      return failed();
  }
  compiled.times.lap("MLIR lowering (linalg to LLVM dialect)");
  return true;
}
