//===- Driver.h - What the driver's commands share ---------------*- C++
//-*-===//
//
// Every subcommand of `linnet` lives in a file of its own with its own
// options (LLVM's cl::SubCommand); this header is what they share: loading
// and checking a model's sources, and the entry point of each command.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TOOLS_LINNET_DRIVER_H
#define LINNET_TOOLS_LINNET_DRIVER_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Basic/Errors.h"
#include "linnet/Runtime/ModelManifest.h"
#include "linnet/Runtime/ModelRun.h"
#include "linnet/Runtime/ParameterStore.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/BodyChecker.h"
#include "linnet/Sema/ModelParameters.h"
#include "linnet/Sema/Program.h"
#include "linnet/Target/CPU/CpuPipeline.h"
#include "linnet/Target/CUDA/CudaPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <string>
#include <vector>

namespace linnet::driver {

/// The standard library and model library: next to the sources in a build
/// tree, or under share/linnet in an installation.
std::vector<std::string> defaultRoots(const char *argv0);

/// The stages every command runs first: load the sources, check the
/// declarations.
struct DriverSession {
  llvm::SourceMgr sourceMgr;
  DiagnosticEngine diags{sourceMgr, llvm::errs()};
  Program program;

  bool load(const char *argv0, llvm::StringRef input,
            llvm::ArrayRef<std::string> includeDirs);
};

/// How far `compileModel` lowers: the stages `linnet emit --stage` prints.
enum class LoweringStage {
  Linnet,  ///< IR generation: func, linalg, tensor, linnet ops
  Linalg,  ///< linnet ops lowered to linalg/tensor/scf, still on tensors
  Loops,   ///< the CPU target: bufferized loops and vectors
  LLVM,    ///< the LLVM dialect
  Kernels, ///< the CUDA target: every dispatch region a GPU kernel
  Binary,  ///< the CUDA target: a cubin per kernel, the host in LLVM
};

/// The wall-clock seconds of each stage a command ran, in order, for
/// `build -v`: `lap(name)` ends the stage begun at the previous lap.
class StageTimes {
public:
  void lap(llvm::StringRef stage);
  void print(llvm::raw_ostream &os, llvm::StringRef command) const;

private:
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, double>> stages;
};

/// A model checked, bound, and lowered to MLIR.
struct CompiledModel {
  StageTimes times;
  mlir::MLIRContext context;
  CheckedProgram checked;
  std::optional<BoundModel> bound;
  std::vector<ModelParameter> parameters;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Checks the bodies of `session`'s program, binds it (`bindArgs` as for
/// `--bind`), proves its obligations, generates `entries` and lowers them to
/// `stage`, below linalg with the CPU pipeline's `cpuOptions`. Reports every
/// problem; false then.
/// `beforeGeneration`, when given, runs once the model is bound, before the
/// (slow) generation and lowering: where a command checks its inputs (and
/// may still change `entries`, which is read after it).
/// With `cuda`, the CUDA target's pipeline (`cpuOptions` unused): on its
/// emulated device, whose stage LLVM is host code like the CPU's.
/// `atKernels`, when given with `cuda` and a stage past Kernels, sees the
/// module at stage Kernels (launches and kernels before they are compiled).
/// `emulated`, when given with `cuda` on the GPU and stage LLVM, receives
/// the same model lowered for the emulated device as well.
bool compileModel(
    DriverSession &session, llvm::ArrayRef<std::string> bindArgs,
    const std::vector<std::string> &entries, LoweringStage stage,
    const CpuPipelineOptions &cpuOptions, CompiledModel &compiled,
    llvm::function_ref<bool(const BoundModel &)> beforeGeneration = nullptr,
    const CudaPipelineOptions *cuda = nullptr,
    llvm::function_ref<void(mlir::ModuleOp)> atKernels = nullptr,
    mlir::OwningOpRef<mlir::ModuleOp> *emulated = nullptr);

/// The checkpoint binding beside the root block's module
/// (`checkpoint_binding.json`), or nothing once the problem is reported.
std::optional<CheckpointBinding> loadRootBinding(DriverSession &session);

/// `linnet: error: message [Id]` for problems that have no source location
/// (options, files on disk, checkpoints); returns 1, the exit status.
int reportError(ErrorId id, const llvm::Twine &message);
/// The same for an error that carries its ID (each of a list of errors).
int reportError(llvm::Error error);

// Commands defined outside linnet.cpp; each returns the exit status.
extern llvm::cl::SubCommand initCheckpointCommand;
int runInitCheckpoint(const char *argv0);
extern llvm::cl::SubCommand emitCommand;
int runEmit(const char *argv0);
extern llvm::cl::SubCommand runCommand;
int runRun(const char *argv0);
extern llvm::cl::SubCommand serveCommand;
int runServe(const char *argv0);

/// Where `linnet run` and `linnet serve` get the model and its weights.
struct ModelSource {
  std::string input;
  std::vector<std::string> includes;
  std::string checkpoint;
  std::optional<uint64_t> randomWeights;
  std::vector<std::string> bindings;
  std::string target = "cpu";
  std::optional<std::string> device;
  bool timings = false;
};
/// Binds and checks the model of `source`, prepares `options` (the
/// checkpoint, the session), compiles the entries the run uses with the
/// JIT and hands them to `execute`; the exit status.
int runModel(
    const char *argv0, const ModelSource &source, RunOptions options,
    llvm::function_ref<llvm::Error(ModelRun &, const PackedEntryLookup &)>
        execute);

extern llvm::cl::SubCommand buildCommand;
int runBuild(const char *argv0);
extern llvm::cl::SubCommand tokenizeCommand;
int runTokenize(const char *argv0);
extern llvm::cl::SubCommand templateCommand;
int runTemplate(const char *argv0);

/// The runtime's view of a bound model (ModelRun, a built binary): the
/// generics, parameters, states, every entry of the root and the checkpoint
/// binding's text.
llvm::Expected<ModelManifest> buildManifest(const Program &program,
                                            const BoundModel &bound);

} // namespace linnet::driver

#endif // LINNET_TOOLS_LINNET_DRIVER_H
