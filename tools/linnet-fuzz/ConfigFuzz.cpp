//===- ConfigFuzz.cpp - libFuzzer target for config.json ------------------===//
//
// Feeds arbitrary bytes, as a checkpoint's `config.json`, to what reads one:
// bindModel binding the real model (models/qwen3_5_moe, loaded once with
// the real stdlib) through its checkpoint binding, the session sizes of
// the bound model, a built model's check that a checkpoint's config agrees
// with the sizes it was built for (ModelManifest::checkConfigAgrees), and
// the loader's layer-pattern check. Any crash, sanitizer report or hang
// here is a bug that a malformed or hostile config.json could trigger.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Basic/JSON.h"
#include "linnet/Model/CheckpointBinding.h"
#include "linnet/Runtime/ModelManifest.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/ModuleLoader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace linnet;

namespace {

constexpr const char *kModelDir = LINNET_SOURCE_DIR "/models/qwen3_5_moe";
/// A tiny checkpoint's config (from test/reference/make_checkpoint.py), the
/// one the manifest's model is built for.
constexpr const char *kBuiltConfig =
    LINNET_SOURCE_DIR "/test/fuzz/corpus/config/tiny_f32.json";

/// The model, loaded and checked once per process, a manifest built from
/// it, and the folder the input is written to as `config.json`.
struct LoadedModel {
  llvm::SourceMgr sourceMgr;
  std::string messages;
  llvm::raw_string_ostream os{messages};
  DiagnosticEngine diags{sourceMgr, os};
  Program program;
  ModelManifest manifest;
  std::optional<CheckpointBinding> binding;
  llvm::SmallString<128> folder, config;

  LoadedModel() {
    ModuleLoader loader(
        diags, {LINNET_SOURCE_DIR "/stdlib", LINNET_SOURCE_DIR "/models"});
    if (!loader.loadInput(kModelDir, program))
      die();
    loader.resolveImports(program);
    if (!checkDeclarations(program, diags) || diags.hadError())
      die();
    auto bound = bindModel(program, {kBuiltConfig}, diags);
    if (!bound)
      die();
    manifest.model = bound->root->qualifiedName();
    manifest.generics = bound->generics;
    for (const BoundGeneric &generic : bound->generics)
      manifest.fromConfig.push_back(
          llvm::StringRef(generic.origin).contains("config.json: "));
    llvm::SmallString<256> bindingPath(kModelDir);
    llvm::sys::path::append(bindingPath, kCheckpointBindingFile);
    auto text = llvm::MemoryBuffer::getFile(bindingPath, /*IsText=*/true);
    if (!text)
      die();
    manifest.bindingPath = std::string(bindingPath);
    manifest.bindingText = (*text)->getBuffer().str();
    auto parsed = manifest.binding();
    if (!parsed)
      die(llvm::toString(parsed.takeError()));
    binding = std::move(*parsed);

    if (llvm::sys::fs::createUniqueDirectory("linnet-fuzz-config", folder))
      die();
    config = folder;
    llvm::sys::path::append(config, "config.json");
  }
  ~LoadedModel() { llvm::sys::fs::remove_directories(folder); }

  [[noreturn]] void die(const std::string &why = "") {
    llvm::errs() << "linnet-fuzz-config: cannot load " << kModelDir << ": "
                 << messages << why << "\n";
    std::abort();
  }
};

LoadedModel &model() {
  static LoadedModel loaded;
  return loaded;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  model();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  LoadedModel &loaded = model();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(loaded.config, ec);
    if (ec)
      std::abort();
    os << text;
  }

  // Diagnostics of this input only: a SourceMgr of its own (bindModel adds
  // a malformed config to it) that also knows the model's sources, which
  // binding diagnostics point into.
  llvm::SourceMgr sourceMgr;
  for (unsigned i = 1; i <= loaded.sourceMgr.getNumBuffers(); ++i)
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(
            loaded.sourceMgr.getMemoryBuffer(i)->getMemBufferRef(),
            /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
  std::string messages;
  llvm::raw_string_ostream os(messages);
  DiagnosticEngine diags(sourceMgr, os);

  std::vector<std::string> bindArgs = {std::string(loaded.config)};
  if (auto bound = bindModel(loaded.program, bindArgs, diags)) {
    auto sizes = SessionSizes::of(bound->generics);
    if (!sizes)
      llvm::consumeError(sizes.takeError());
    printBoundModel(*bound, os);
  }
  if (llvm::Error error = loaded.manifest.checkConfigAgrees(
          loaded.folder, [](const llvm::Twine &) {}))
    llvm::consumeError(std::move(error));

  // The loader checks the config section's layer pattern.
  if (auto document = parseJSON(text)) {
    if (const llvm::json::Object *root = document->getAsObject()) {
      if (llvm::Error error = loaded.binding->checkLayerTypes(
              loaded.binding->config().sectionOf(*root), "config.json"))
        llvm::consumeError(std::move(error));
    }
  } else {
    llvm::consumeError(document.takeError());
  }
  return 0;
}
