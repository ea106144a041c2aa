//===- Driver.cpp - What the driver's commands share ----------------------===//
//
// Loading a model's sources is the same first step for every command.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/ModuleLoader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

using namespace linnet;
using namespace linnet::driver;

std::vector<std::string> linnet::driver::defaultRoots(const char *argv0) {
  std::vector<std::string> roots;
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultRoots));
  llvm::SmallString<256> prefix(llvm::sys::path::parent_path(exe));
  llvm::sys::path::remove_filename(prefix); // bin/ -> prefix
  for (const char *library : {"stdlib", "models"}) {
    llvm::SmallString<256> installed(prefix);
    llvm::sys::path::append(installed, "share", "linnet", library);
    if (llvm::sys::fs::is_directory(installed))
      roots.push_back(std::string(installed));
    else
      roots.push_back(std::string(LINNET_SOURCE_DIR) + "/" + library);
  }
  return roots;
}

bool DriverSession::load(const char *argv0, llvm::StringRef input,
                         llvm::ArrayRef<std::string> includeDirs) {
  std::vector<std::string> roots(includeDirs.begin(), includeDirs.end());
  for (std::string &root : defaultRoots(argv0))
    roots.push_back(std::move(root));
  ModuleLoader loader(diags, roots);
  if (!loader.loadInput(std::string(input), program))
    return false;
  loader.resolveImports(program);
  checkDeclarations(program, diags);
  return !diags.hadError();
}

void linnet::driver::StageTimes::lap(llvm::StringRef stage) {
  auto now = std::chrono::steady_clock::now();
  stages.emplace_back(stage.str(),
                      std::chrono::duration<double>(now - last).count());
  last = now;
}

void linnet::driver::StageTimes::print(llvm::raw_ostream &os,
                                       llvm::StringRef command) const {
  double total = 0;
  for (const auto &[stage, seconds] : stages) {
    os << llvm::format("linnet %s: %-34s %7.2f s\n", command.str().c_str(),
                       stage.c_str(), seconds);
    total += seconds;
  }
  os << llvm::format("linnet %s: %-34s %7.2f s\n", command.str().c_str(),
                     "total", total);
}

int linnet::driver::reportError(ErrorId id, const llvm::Twine &message) {
  return reportError(makeError(id, message));
}

int linnet::driver::reportError(llvm::Error error) {
  llvm::handleAllErrors(std::move(error), [](const llvm::ErrorInfoBase &info) {
    llvm::WithColor::error(llvm::errs(), "linnet") << info.message() << "\n";
  });
  return 1;
}

/// Each state's axis that grows with `MaxSeq`: the model bound again with
/// one more, the axis whose size is one more.
static void markContextAxes(const Program &program, const BoundModel &bound,
                            std::vector<ModelParameter> &states) {
  std::vector<std::string> sizes;
  bool hasMaxSeq = false;
  for (const BoundGeneric &generic : bound.generics) {
    int64_t size = generic.size;
    if (generic.name == "MaxSeq") {
      hasMaxSeq = true;
      ++size;
    }
    sizes.push_back(generic.name + "=" +
                    (generic.kind == GenericKind::Float
                         ? elementTypeName(generic.element).str()
                         : std::to_string(size)));
  }
  if (!hasMaxSeq)
    return;
  llvm::SourceMgr sources;
  DiagnosticEngine quiet(sources, llvm::nulls());
  std::optional<BoundModel> longer = bindModel(program, sizes, quiet);
  if (!longer)
    return;
  std::vector<ModelParameter> grown = listStates(program, *longer);
  if (grown.size() != states.size())
    return;
  for (auto [state, other] : llvm::zip_equal(states, grown)) {
    if (state.shape.size() != other.shape.size())
      continue;
    std::optional<unsigned> axis;
    unsigned changed = 0;
    for (unsigned i = 1; i < state.shape.size(); ++i)
      if (other.shape[i] != state.shape[i]) {
        ++changed;
        if (other.shape[i] == state.shape[i] + 1)
          axis = i;
      }
    if (changed == 1 && axis)
      state.contextAxis = axis;
  }
}

llvm::Expected<ModelManifest>
linnet::driver::buildManifest(const Program &program, const BoundModel &bound) {
  ModelManifest manifest;
  manifest.model = bound.root->qualifiedName();
  manifest.generics = bound.generics;
  for (const BoundGeneric &generic : bound.generics) {
    // `DIR/config.json: hidden_size`: a checkpoint's config must agree; a
    // value from `--bind Name=Value`, the binding's defaults or the source
    // is fixed by the build.
    llvm::StringRef origin(generic.origin);
    manifest.fromConfig.push_back(!origin.starts_with("--bind") &&
                                  origin.contains("config.json: "));
  }
  manifest.parameters = listParameters(program, bound);
  manifest.states = listStates(program, bound);
  markContextAxes(program, bound, manifest.states);
  for (const MemberDecl &member : bound.root->members)
    if (auto *fn = std::get_if<FnDecl>(&member); fn && fn->isEntry)
      manifest.entries.push_back(fn->name);
  llvm::SmallString<256> bindingPath(
      llvm::sys::path::parent_path(bound.root->module->path));
  llvm::sys::path::append(bindingPath, kCheckpointBindingFile);
  auto buffer = llvm::MemoryBuffer::getFile(bindingPath, /*IsText=*/true);
  if (!buffer)
    return makeError(ErrorId::BindingRulesInvalid,
                     "cannot read `" + bindingPath +
                         "`: " + buffer.getError().message());
  manifest.bindingPath = std::string(bindingPath);
  manifest.bindingText = (*buffer)->getBuffer().str();
  return manifest;
}

std::optional<CheckpointBinding>
linnet::driver::loadRootBinding(DriverSession &session) {
  const BlockDecl *root = findRootBlock(session.program, session.diags);
  if (!root)
    return std::nullopt;
  llvm::SmallString<256> path(llvm::sys::path::parent_path(root->module->path));
  llvm::sys::path::append(path, kCheckpointBindingFile);
  auto binding = CheckpointBinding::load(path);
  if (!binding) {
    reportError(binding.takeError());
    return std::nullopt;
  }
  return std::move(*binding);
}
