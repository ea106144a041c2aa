//===- BuildCommand.cpp - `linnet build` ----------------------------------===//
//
// Turns a model into one standalone executable: every entry compiled ahead
// of time to an object file (with packed wrappers, ObjectFile.cpp), a
// generated table holding the model's manifest and each entry's wrapper,
// and liblinnet-standalone.a (the runtime and its main()), linked by
// clang++ against LLVM's static support library and the OpenMP runtime.
// The binary takes `linnet run`'s options minus the model's path and
// `--bind`, and needs no compiler or sources when it runs.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Basic/OutputFile.h"

#include "linnet/Runtime/ModelManifest.h"
#include "linnet/Runtime/RuntimeCalls.h"
#include "linnet/Runtime/Session.h"
#include "linnet/Target/CPU/CompileCache.h"
#include "linnet/Target/CPU/CpuExecutable.h"
#include "linnet/Target/CUDA/CudaPipeline.h"
#include "linnet/Target/CUDA/KernelReport.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>
#include <thread>

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;

cl::SubCommand linnet::driver::buildCommand(
    "build", "Compile a model into a standalone executable");

namespace {

cl::opt<std::string> buildInput(cl::Positional, cl::desc("<file or folder>"),
                                cl::sub(buildCommand), cl::Required);
cl::list<std::string> buildIncludes("I", cl::desc("Add a module search root"),
                                    cl::value_desc("dir"), cl::Prefix,
                                    cl::sub(buildCommand));
cl::list<std::string>
    buildBindings("bind",
                  cl::desc("Bind root generics: a config.json, or "
                           "Name=Value (repeatable; later ones override)"),
                  cl::value_desc("config.json|Name=Value"),
                  cl::sub(buildCommand));
cl::opt<std::string> buildTarget("target",
                                 cl::desc("The target: cpu (the default), or "
                                          "cuda (kernels for sm_90a GPUs)"),
                                 cl::value_desc("name"), cl::init("cpu"),
                                 cl::sub(buildCommand));
cl::opt<std::string>
    buildCpu("cpu",
             cl::desc("The CPU the code is generated for (default "
                      "x86-64-v3, which runs on any x86-64 with AVX2)"),
             cl::value_desc("name"), cl::init("x86-64-v3"),
             cl::sub(buildCommand));
cl::opt<std::string> buildOutput("o", cl::desc("The executable to write"),
                                 cl::value_desc("file"), cl::sub(buildCommand),
                                 cl::Required);
cl::opt<bool> buildReport(
    "report",
    cl::desc("With --target cuda: print each kernel's registers, stack, "
             "shared memory, launch shape and operand bytes, and each "
             "entry's launches"),
    cl::sub(buildCommand));
cl::opt<int64_t> buildReportTokens(
    "report-tokens",
    cl::desc("With --report: take each entry as called with one row of N "
             "tokens (a prompt's buffers and grids then have sizes)"),
    cl::value_desc("N"), cl::init(0), cl::sub(buildCommand));
cl::opt<bool> buildVerbose("v",
                           cl::desc("Print the link command and the time of "
                                    "each stage"),
                           cl::sub(buildCommand));

/// liblinnet-standalone.a: beside an installed linnet (`bin/../lib`, which
/// is also where the build tree puts it), else where CMake built it.
std::string standaloneLibrary(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&standaloneLibrary));
  llvm::SmallString<256> beside(llvm::sys::path::parent_path(exe));
  llvm::sys::path::remove_filename(beside);
  llvm::sys::path::append(beside, "lib", "liblinnet-standalone.a");
  if (llvm::sys::fs::exists(beside))
    return std::string(beside);
  return LINNET_STANDALONE_LIBRARY;
}

/// What the emulated device's plan prefixes its symbols with, so that it
/// links beside the GPU's: `prefill` is `emulated_prefill`, its C interface
/// `_mlir_ciface_emulated_prefill` (and so its packed wrapper
/// `_linnet_packed_emulated_prefill`).
constexpr const char *kEmulatedPrefix = "emulated_";

void prefixDefinedSymbols(mlir::ModuleOp module, llvm::StringRef prefix) {
  llvm::StringRef interface = "_mlir_ciface_";
  std::vector<std::pair<mlir::Operation *, std::string>> renames;
  for (mlir::Operation &op : module.getBody()->getOperations()) {
    auto function = llvm::dyn_cast<mlir::LLVM::LLVMFuncOp>(op);
    auto global = llvm::dyn_cast<mlir::LLVM::GlobalOp>(op);
    if (function && function.isExternal())
      continue; // a declaration: the runtime's, shared by both plans
    if (!function && !global)
      continue;
    llvm::StringRef name = mlir::SymbolTable::getSymbolName(&op).getValue();
    renames.emplace_back(
        &op,
        name.starts_with(interface)
            ? (interface + prefix + name.drop_front(interface.size())).str()
            : (prefix + name).str());
  }
  for (auto &[op, name] : renames) {
    auto newName = mlir::StringAttr::get(module.getContext(), name);
    if (mlir::failed(
            mlir::SymbolTable::replaceAllSymbolUses(op, newName, module)))
      llvm::report_fatal_error("cannot rename a symbol of the emulated plan");
    mlir::SymbolTable::setSymbolName(op, newName);
  }
}

/// The C++ source that gives the runtime the model's manifest and the
/// packed wrapper of each entry (StandaloneMain.cpp declares them).
/// `gpuChip` is the GPU the kernels are for (empty: the CPU target);
/// `withEmulated`, whether the binary holds the emulated device's plan too.
std::string entryTable(const ModelManifest &manifest, llvm::StringRef gpuChip,
                       bool withEmulated) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by `linnet build` for `" << manifest.model << "`.\n"
     << "extern \"C\" const char linnet_gpu_chip[] = \"" << gpuChip << "\";\n"
     << "struct LinnetEntry { const char *name; void (*packed)(void **); };\n";
  for (const std::string &entry : manifest.entries)
    os << "extern \"C\" void _linnet_packed_" << entry << "(void **);\n";
  os << "extern \"C\" const LinnetEntry linnet_entries[] = {\n";
  for (const std::string &entry : manifest.entries)
    os << "  {\"" << entry << "\", _linnet_packed_" << entry << "},\n";
  os << "  {nullptr, nullptr}};\n";
  // A GPU binary's second plan: the same kernels for the emulated device.
  if (withEmulated)
    for (const std::string &entry : manifest.entries)
      os << "extern \"C\" void _linnet_packed_" << kEmulatedPrefix << entry
         << "(void **);\n";
  os << "extern \"C\" const LinnetEntry linnet_emulated_entries[] = {\n";
  if (withEmulated)
    for (const std::string &entry : manifest.entries)
      os << "  {\"" << entry << "\", _linnet_packed_" << kEmulatedPrefix
         << entry << "},\n";
  os << "  {nullptr, nullptr}};\n";
  std::string json;
  llvm::raw_string_ostream(json) << manifest.toJSON();
  os << "extern \"C\" const char linnet_manifest[] = {";
  for (size_t i = 0; i < json.size(); ++i)
    os << (i % 24 ? "" : "\n  ") << int(static_cast<signed char>(json[i]))
       << ",";
  os << "0};\n"
     << "extern \"C\" const unsigned long linnet_manifest_size = "
     << json.size() << ";\n";
  return text;
}

uint64_t bytesOf(const std::vector<ModelParameter> &list) {
  uint64_t bytes = 0;
  for (const ModelParameter &each : list)
    bytes += each.elementCount() * elementTypeBytes(each.element);
  return bytes;
}

/// What the model needs in device memory: the weights, and the states of
/// every slot, each slot a fixed part and a part per token of context (the
/// states' growth when the model is bound again with one more `MaxSeq`).
void printMemoryBudget(llvm::raw_ostream &os, DriverSession &session,
                       const CompiledModel &compiled) {
  uint64_t weights = bytesOf(compiled.parameters);
  uint64_t states = bytesOf(listStates(session.program, *compiled.bound));
  os << "memory budget: weights " << formatBytes(weights) << ", states "
     << formatBytes(states);
  llvm::Expected<SessionSizes> sizes =
      SessionSizes::of(compiled.bound->generics);
  if (!sizes) {
    llvm::consumeError(sizes.takeError());
    os << "\n";
    return;
  }
  std::vector<std::string> longer(buildBindings.begin(), buildBindings.end());
  longer.push_back("MaxSeq=" + std::to_string(sizes->maxSeq + 1));
  DiagnosticEngine quiet(session.sourceMgr, llvm::nulls());
  std::optional<BoundModel> rebound = bindModel(session.program, longer, quiet);
  uint64_t batch = uint64_t(sizes->batch), maxSeq = uint64_t(sizes->maxSeq);
  os << " (" << batch << (batch == 1 ? " slot" : " slots") << " of " << maxSeq
     << " tokens: " << formatBytes(states / batch) << " a slot";
  if (rebound) {
    uint64_t perToken =
        (bytesOf(listStates(session.program, *rebound)) - states) / batch;
    os << ", " << formatBytes(states / batch - perToken * maxSeq)
       << " fixed and " << formatBytes(perToken) << " a token of context";
  }
  os << "); " << formatBytes(weights + states)
     << " before intermediate buffers\n";
}

} // namespace

int linnet::driver::runBuild(const char *argv0) {
  // The CUDA target: the GPU plan (kernels as fatbinaries in `.nv_fatbin`,
  // the host side calling the runtime's driver); the host code is for the
  // CPU `--cpu` names.
  std::optional<CudaPipelineOptions> cuda;
  if (buildTarget == "cuda") {
    cuda.emplace();
    cuda->format = "fatbin";
  } else if (buildTarget != "cpu") {
    return reportError(ErrorId::OptionInvalid,
                       "--target: `" + buildTarget +
                           "` is not a target `build` knows (cpu, cuda)");
  }
  if (buildReport && !cuda)
    return reportError(
        ErrorId::OptionInvalid,
        "--report describes GPU kernels: it needs --target cuda");
  if (buildReportTokens.getNumOccurrences() && !buildReport)
    return reportError(ErrorId::OptionInvalid,
                       "--report-tokens sizes the report: it needs --report");
  if (buildReportTokens.getNumOccurrences() &&
      (buildReportTokens < 1 || buildReportTokens > (int64_t(1) << 24)))
    return reportError(ErrorId::OptionInvalid,
                       "--report-tokens: " + std::to_string(buildReportTokens) +
                           " is not a token count from 1 to 16777216");
  if (llvm::Error error = checkObjectCpu(buildCpu))
    return reportError(withContext("--cpu: ", std::move(error)));
  // The tools come first, so that a missing one costs no compile time.
  std::string library = standaloneLibrary(argv0);
  if (!llvm::sys::fs::exists(library))
    return reportError(ErrorId::StandaloneLibraryMissing,
                       "the runtime library `" + library +
                           "` does not exist; build the `linnet-standalone` "
                           "target");
  auto linker = llvm::sys::findProgramByName("clang++-22");
  if (!linker)
    linker = llvm::sys::findProgramByName("clang++-22",
                                          {LINNET_LLVM_LIBRARY_DIR "/../bin"});
  if (!linker)
    return reportError(ErrorId::LinkerMissing,
                       "cannot find `clang++-22`, which links the binary; "
                       "install clang-22 or put it on PATH");
  auto openmp = findOpenMPRuntime();
  if (!openmp)
    return reportError(openmp.takeError());

  llvm::SmallString<256> workDir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("linnet-build", workDir)) {
    llvm::SmallString<256> temp;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, temp);
    return reportError(ErrorId::OutputUnwritable,
                       "cannot create a temporary folder in `" + temp +
                           "`: " + ec.message());
  }
  llvm::scope_exit cleanUp([&] { llvm::sys::fs::remove_directories(workDir); });

  // Created first, so that `-v` times the parse of the sources too.
  CompiledModel compiled;
  DriverSession session;
  if (!session.load(argv0, buildInput, buildIncludes))
    return 1;
  compiled.times.lap("parse and resolve the sources");
  ModelManifest manifest;
  std::vector<std::string> entries;
  auto describe = [&](const BoundModel &bound) {
    auto built = buildManifest(session.program, bound);
    if (!built) {
      reportError(built.takeError());
      return false;
    }
    manifest = std::move(*built);
    entries = manifest.entries;
    return true;
  };
  CpuPipelineOptions cpuOptions = cpuPipelineOptionsFor(buildCpu);
  // A GPU binary also carries the emulated device's plan, so that it can
  // be checked where there is no GPU (`--device emulated`).
  mlir::OwningOpRef<mlir::ModuleOp> emulated;
  std::vector<EntryLaunches> launches;
  auto atKernels = [&](mlir::ModuleOp module) {
    launches = collectEntryLaunches(
        module, buildReportTokens.getNumOccurrences()
                    ? std::optional<int64_t>(buildReportTokens)
                    : std::nullopt);
  };
  if (!compileModel(session, buildBindings, entries, LoweringStage::LLVM,
                    cpuOptions, compiled, describe, cuda ? &*cuda : nullptr,
                    buildReport
                        ? llvm::function_ref<void(mlir::ModuleOp)>(atKernels)
                        : nullptr,
                    cuda ? &emulated : nullptr))
    return 1;
  if (buildReport) {
    llvm::Expected<llvm::StringMap<KernelResources>> kernels =
        readModuleResources(*compiled.module);
    if (!kernels)
      return reportError(withContext("cannot read the kernels' cubins: ",
                                     kernels.takeError()));
    // What decode is sized by on an H200: it copies at about 4.3 of its
    // 4.8 TB/s, and a launch costs about 2 us (MLIR22_NOTES.md 6). A grid
    // wait is modelled, not measured: the last block's arrival and the
    // poll that sees it, two round trips to L2 of well under half a
    // microsecond each, with a block barrier either side: 1 us.
    constexpr double kBandwidth = 4.3e12, kLaunch = 2e-6, kGridWait = 1e-6;
    printKernelReport(llvm::outs(), launches, *kernels, kBandwidth, kLaunch,
                      kGridWait);
    printMemoryBudget(llvm::outs(), session, compiled);
    llvm::outs().flush();
  }

  llvm::SmallString<256> table(workDir);
  llvm::sys::path::append(table, "entries.cpp");
  // One part of code generation per core, at most 8.
  unsigned parts = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  std::string cacheWarning;
  std::unique_ptr<CompileCache> cache =
      CompileCache::fromEnvironment(cacheWarning);
  if (!cacheWarning.empty())
    llvm::errs() << "linnet build: warning: " << cacheWarning << "\n";
  llvm::Expected<std::vector<std::string>> objects = writeObjectFiles(
      *compiled.module, workDir, buildCpu, parts, 3, cache.get());
  if (!objects)
    return reportError(withContext("cannot write the model's object files: ",
                                   objects.takeError()));
  if (emulated) {
    prefixDefinedSymbols(*emulated, kEmulatedPrefix);
    llvm::SmallString<256> emulatedDir(workDir);
    llvm::sys::path::append(emulatedDir, "emulated");
    if (std::error_code ec = llvm::sys::fs::create_directory(emulatedDir))
      return reportError(ErrorId::OutputUnwritable, "cannot create `" +
                                                        emulatedDir +
                                                        "`: " + ec.message());
    // Unoptimized: a check of the plan, not a fast path; at O3 it doubled
    // the full size's build (130 s against 84).
    llvm::Expected<std::vector<std::string>> more = writeObjectFiles(
        *emulated, emulatedDir, buildCpu, parts, 0, cache.get());
    if (!more)
      return reportError(
          withContext("cannot write the emulated device's object files: ",
                      more.takeError()));
    objects->insert(objects->end(), more->begin(), more->end());
  }
  compiled.times.lap("LLVM optimization and code generation");
  if (llvm::Error error = writeOutputFile(table, [&](llvm::raw_ostream &os) {
        os << entryTable(manifest, cuda ? cuda->chip : "", bool(emulated));
      }))
    return reportError(std::move(error));

  std::string llvmLibraries = LINNET_LLVM_LIBRARY_DIR;
  std::string rpath =
      "-Wl,-rpath," + llvm::sys::path::parent_path(*openmp).str();
  std::vector<std::string> args = {*linker, "-O2", std::string(table)};
  args.insert(args.end(), objects->begin(), objects->end());
  args.insert(args.end(),
              {library, llvmLibraries + "/libLLVMSupport.a",
               llvmLibraries + "/libLLVMDemangle.a", "-fopenmp=libomp",
               "-L" + llvm::sys::path::parent_path(*openmp).str(), rpath, "-lm",
               "-lpthread", "-o", buildOutput});
  // LLVM's x86 backend calls __truncsfbf2 for bf16 vector code on CPUs
  // without AVX512-BF16, and Debian 12's libgcc lacks it: compiler-rt's
  // builtins (linked statically) provide it; libgcc stays the unwinder.
  args.insert(args.begin() + 1, {"--rtlib=compiler-rt", "--unwindlib=libgcc"});
#ifdef LINNET_SANITIZED
  // This linnet and its liblinnet-standalone.a carry ASan and UBSan (the
  // fuzz build): the binary links their runtimes too.
  args.insert(args.begin() + 1, "-fsanitize=address,undefined");
#endif
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  if (buildVerbose) {
    for (const std::string &arg : args)
      llvm::errs() << arg << " ";
    llvm::errs() << "\n";
  }
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*linker, argRefs, std::nullopt, {}, 0,
                                         0, &message);
  if (status != 0)
    return reportError(ErrorId::LinkFailed,
                       "linking `" + buildOutput + "` failed" +
                           (message.empty() ? "" : ": " + message) +
                           "; the linker's messages are above");
  compiled.times.lap("link");
  if (buildVerbose)
    compiled.times.print(llvm::errs(), "build");
  return 0;
}
