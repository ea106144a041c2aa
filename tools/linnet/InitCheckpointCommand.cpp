//===- InitCheckpointCommand.cpp - `linnet init-checkpoint` ---------------===//
//
// Writes a random checkpoint for a model in the exact Hugging Face layout
// that `check --checkpoint` and `run` read: a config.json built from the
// bound generics (the config→generic map of the model's checkpoint binding,
// inverted, over the binding's config template) and a model.safetensors
// whose names come from the binding's parameter map. Tests and benchmarks
// need checkpoints of any size without downloading one.
//
// The values are RandomWeights' for the seed, the ones `--random-weights`
// fills a run with. Optional parameters are not written (a run takes them
// as zeros).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Basic/JSON.h"
#include "linnet/Basic/OutputFile.h"
#include "linnet/Basic/ProgressBar.h"
#include "linnet/Model/CheckpointBinding.h"
#include "linnet/Runtime/FloatConversion.h"
#include "linnet/Runtime/ParameterStore.h"
#include "linnet/Runtime/RandomWeights.h"
#include "linnet/Runtime/Safetensors.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/ModelParameters.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;
namespace json = llvm::json;

cl::SubCommand linnet::driver::initCheckpointCommand(
    "init-checkpoint", "Write a random checkpoint for a model");

namespace {

cl::opt<std::string> modelPath(cl::Positional, cl::desc("<file or folder>"),
                               cl::sub(initCheckpointCommand), cl::Required);
cl::list<std::string> initIncludeDirs("I", cl::desc("Add a module search root"),
                                      cl::value_desc("dir"), cl::Prefix,
                                      cl::sub(initCheckpointCommand));
cl::list<std::string>
    initBindings("bind",
                 cl::desc("Bind root generics: a config.json, or Name=Value "
                          "(repeatable; later ones override)"),
                 cl::value_desc("config.json|Name=Value"),
                 cl::sub(initCheckpointCommand));
cl::opt<uint64_t> seed("seed", cl::desc("Random seed (default 0)"), cl::init(0),
                       cl::sub(initCheckpointCommand));
cl::opt<std::string>
    dtypeOption("dtype",
                cl::desc("Storage dtype, bf16 or f32 (default: the bound T)"),
                cl::value_desc("bf16|f32"), cl::sub(initCheckpointCommand));
cl::opt<std::string> prefixOption(
    "prefix",
    cl::desc("Name prefix: one the binding accepts (default: its first)"),
    cl::value_desc("prefix"), cl::sub(initCheckpointCommand));
cl::opt<std::string>
    expertsLayout("experts-layout",
                  cl::desc("fused (default) or per-expert tensors"),
                  cl::value_desc("fused|per-expert"), cl::init("fused"),
                  cl::sub(initCheckpointCommand));
cl::opt<std::string> outputDir("o", cl::desc("The checkpoint folder to write"),
                               cl::value_desc("dir"), cl::Required,
                               cl::sub(initCheckpointCommand));

llvm::StringRef configDtypeName(ElementType element) {
  switch (element) {
  case ElementType::BF16:
    return "bfloat16";
  case ElementType::F16:
    return "float16";
  default:
    return "float32";
  }
}

std::optional<json::Value> readConfig(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return std::nullopt;
  auto value = parseJSON((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  return std::move(*value);
}

} // namespace

int linnet::driver::runInitCheckpoint(const char *argv0) {
  DriverSession session;
  if (!session.load(argv0, modelPath, initIncludeDirs))
    return 1;
  std::optional<CheckpointBinding> binding = loadRootBinding(session);
  if (!binding)
    return 1;
  const BlockDecl *root = findRootBlock(session.program, session.diags);
  // Sizes a checkpoint does not hold (`Batch`) take the binding's defaults
  // unless given.
  std::vector<std::string> bindArgs = binding->config().defaultBindings();
  bindArgs.insert(bindArgs.end(), initBindings.begin(), initBindings.end());
  std::optional<ElementType> storage;
  if (!dtypeOption.empty()) {
    if (dtypeOption != "bf16" && dtypeOption != "f32")
      return reportError(ErrorId::OptionInvalid,
                         "`--dtype " + dtypeOption +
                             "`: expected `bf16` or `f32`");
    storage = *parseElementType(dtypeOption);
    // The stored dtype is the model's element type.
    for (const GenericDecl &generic : root->generics)
      if (generic.kind == GenericKind::Float)
        bindArgs.push_back(generic.name + "=" + dtypeOption.getValue());
  }
  if (expertsLayout != "fused" && expertsLayout != "per-expert")
    return reportError(ErrorId::OptionInvalid,
                       "`--experts-layout " + expertsLayout +
                           "`: expected `fused` or `per-expert`");
  std::optional<BoundModel> bound =
      bindModel(session.program, bindArgs, session.diags);
  if (!bound)
    return 1;
  // A checkpoint for sizes the model refuses would be of no use.
  CheckedProgram checked = checkBodies(session.program, session.diags);
  if (session.diags.hadError() ||
      !proveObligations(checked, *bound, session.diags))
    return 1;

  std::string prefix = prefixOption.empty() ? binding->prefixes().front()
                                            : prefixOption.getValue();
  if (!llvm::is_contained(binding->prefixes(), prefix)) {
    std::string accepted;
    for (const std::string &known : binding->prefixes())
      accepted += (accepted.empty() ? "`" : ", `") + known + "`";
    return reportError(ErrorId::OptionInvalid,
                       "`--prefix " + prefix +
                           "` is not a prefix the "
                           "checkpoint binding accepts (" +
                           accepted + ")");
  }

  // config.json: the given config (or the binding's template), with every
  // field the generics come from set to the bound values.
  std::map<std::string, int64_t> dims;
  for (const BoundGeneric &generic : bound->generics)
    if (generic.kind == GenericKind::Dim)
      dims[generic.name] = generic.size;
  auto fields = binding->config().fieldsFor(dims);
  if (!fields)
    return reportError(fields.takeError());
  json::Value config = json::Object();
  if (const json::Object *layout = binding->config().templateObject())
    config = json::Object(*layout);
  for (const std::string &arg : initBindings)
    if (!llvm::StringRef(arg).contains('=') && llvm::sys::fs::exists(arg))
      if (auto given = readConfig(arg); given && given->getAsObject())
        config = std::move(*given);
  json::Object *section =
      &binding->config().sectionToWrite(*config.getAsObject());
  for (const auto &[field, value] : *fields)
    (*section)[field] = value;
  if (!binding->layerTypesField().empty()) {
    auto count = fields->find(binding->layerCountField());
    if (count != fields->end()) {
      json::Array types;
      for (const std::string &type : binding->layerTypes(count->second))
        types.push_back(type);
      (*section)[binding->layerTypesField()] = std::move(types);
    }
  }
  for (const BoundGeneric &generic : bound->generics)
    if (generic.kind == GenericKind::Float) {
      storage = storage.value_or(generic.element);
      if (const ConfigRule *rule = binding->config().find(generic.name))
        for (const std::string &field : rule->fields)
          (*section)[field] = configDtypeName(generic.element);
    }
  if (storage && *storage != ElementType::BF16 && *storage != ElementType::F32)
    return reportError(ErrorId::ParameterNotDrawable,
                       "the model's element type is `" +
                           elementTypeName(*storage) +
                           "`; init-checkpoint writes `bf16` or `f32`");

  // The tensors, in the order of the parameters: only their header entries
  // are kept, the values are drawn as they are written.
  std::vector<ModelParameter> params = listParameters(session.program, *bound);
  std::vector<TensorEntry> entries;
  std::vector<const ModelParameter *> written;
  uint64_t dataBytes = 0;
  for (const ModelParameter &param : params) {
    if (param.optional)
      continue;
    auto unprefixed = binding->checkpointName(param.path);
    if (!unprefixed)
      return reportError(unprefixed.takeError());
    auto dtype = tensorDTypeFor(param.element);
    if (!dtype || !isFloatType(param.element))
      return reportError(ErrorId::ParameterNotDrawable,
                         "parameter `" + param.path + "` is " +
                             param.typeText() +
                             "; init-checkpoint writes float tensors only");
    uint64_t elementBytes = elementTypeBytes(param.element);
    written.push_back(&param);
    dataBytes += param.elementCount() * elementBytes;
    // Per-expert tensors are consecutive slices of the fused one, so the
    // data is the same either way; only the header differs.
    auto parts = binding->stackedPartNames(*unprefixed, 0);
    if (expertsLayout == "per-expert" && parts && param.shape.size() >= 2 &&
        param.shape[1] % int64_t(parts->size()) == 0) {
      std::vector<int64_t> partShape(param.shape.begin() + 1,
                                     param.shape.end());
      partShape[0] /= int64_t(parts->size());
      uint64_t partElements = 1;
      for (int64_t dim : partShape)
        partElements *= uint64_t(dim);
      for (int64_t e = 0; e < param.shape[0]; ++e)
        for (const std::string &part :
             binding->stackedPartNames(*unprefixed, e).value_or(*parts))
          entries.push_back({binding->withPrefix(part, prefix), *dtype,
                             partShape, partElements * elementBytes});
      continue;
    }
    entries.push_back({binding->withPrefix(*unprefixed, prefix), *dtype,
                       param.shape, param.elementCount() * elementBytes});
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return reportError(ErrorId::OutputUnwritable,
                       "cannot create `" + outputDir + "`: " + ec.message());
  llvm::SmallString<256> configPath(outputDir.getValue());
  llvm::sys::path::append(configPath, "config.json");
  llvm::SmallString<256> weightsPath(outputDir.getValue());
  llvm::sys::path::append(weightsPath, "model.safetensors");

  // Both files are written under temporary names and renamed once complete,
  // so a failure (a full disk, a signal) leaves no partial checkpoint.
  auto weights =
      llvm::sys::fs::TempFile::create(weightsPath + ".partial-%%%%%%");
  if (!weights)
    return reportError(
        ErrorId::OutputUnwritable,
        "cannot write `" + weightsPath +
            "`: " + llvm::errorToErrorCode(weights.takeError()).message());
  // The stream is closed before the file is kept or discarded.
  auto writeWeights = [&]() -> std::error_code {
    llvm::raw_fd_ostream os(weights->FD, /*shouldClose=*/false);
    // Unbuffered: nothing is left to flush (and fail) in the destructor.
    os.SetUnbuffered();
    auto failed = [&]() {
      std::error_code ec = os.error();
      os.clear_error();
      return ec;
    };
    os << safetensorsHeader(entries, {{"format", "pt"}});
    RandomWeights random(seed);
    ProgressBar progress("writing the weights", dataBytes);
    constexpr uint64_t kSliceValues = 1 << 22;
    std::string bytes;
    for (const ModelParameter *param : written) {
      uint64_t elements = param->elementCount();
      unsigned elementBytes = elementTypeBytes(param->element);
      for (uint64_t start = 0; start < elements; start += kSliceValues) {
        uint64_t count = std::min(kSliceValues, elements - start);
        bytes.resize(count * elementBytes);
        random.fill(*param, start, count, bytes.data());
        os << bytes;
        if (std::error_code ec = failed())
          return ec;
        progress.advance(bytes.size());
      }
    }
    return failed();
  };
  if (std::error_code ec = writeWeights()) {
    llvm::consumeError(weights->discard());
    return reportError(ErrorId::OutputUnwritable,
                       "cannot write `" + weightsPath + "`: " + ec.message());
  }
  std::string configText = llvm::formatv("{0:2}", config).str() + "\n";
  if (llvm::Error error = writeOutputFile(
          configPath, [&](llvm::raw_ostream &os) { os << configText; })) {
    llvm::consumeError(weights->discard());
    return reportError(std::move(error));
  }
  if (std::error_code ec = llvm::errorToErrorCode(weights->keep(weightsPath)))
    return reportError(ErrorId::OutputUnwritable,
                       "cannot write `" + weightsPath + "`: " + ec.message());
  return 0;
}
