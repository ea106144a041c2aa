//===- ParameterStore.cpp - Binding and validating a checkpoint -----------===//
//
// Two passes: the first resolves every parameter to checkpoint tensors and
// checks them, collecting every problem; only when there is none does the
// second hand out pointers and make the copies. Nothing reads tensor data
// before the whole checkpoint has been validated.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/ParameterStore.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"
#include "linnet/Model/CheckpointBinding.h"
#include "linnet/Runtime/FloatConversion.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>

using namespace linnet;
namespace json = llvm::json;

std::optional<TensorDType> linnet::tensorDTypeFor(ElementType element) {
  switch (element) {
  case ElementType::BF16:
    return TensorDType::BF16;
  case ElementType::F16:
    return TensorDType::F16;
  case ElementType::F32:
    return TensorDType::F32;
  case ElementType::F64:
    return TensorDType::F64;
  case ElementType::I8:
    return TensorDType::I8;
  case ElementType::I16:
    return TensorDType::I16;
  case ElementType::I32:
    return TensorDType::I32;
  case ElementType::I64:
    return TensorDType::I64;
  case ElementType::I1:
    return TensorDType::Bool;
  }
  return std::nullopt;
}

static bool isConvertible(TensorDType dtype) {
  return dtype == TensorDType::BF16 || dtype == TensorDType::F16 ||
         dtype == TensorDType::F32;
}

bool linnet::convertFloats(const void *source, TensorDType from,
                           void *destination, ElementType to, uint64_t count) {
  if (!isConvertible(from) ||
      (to != ElementType::BF16 && to != ElementType::F16 &&
       to != ElementType::F32))
    return false;
  const char *in = static_cast<const char *>(source);
  char *out = static_cast<char *>(destination);
  for (uint64_t i = 0; i < count; ++i) {
    float value;
    uint16_t half;
    switch (from) {
    case TensorDType::BF16:
      std::memcpy(&half, in + 2 * i, 2);
      value = bf16ToFloat(half);
      break;
    case TensorDType::F16:
      std::memcpy(&half, in + 2 * i, 2);
      value = f16ToFloat(half);
      break;
    default:
      std::memcpy(&value, in + 4 * i, 4);
      break;
    }
    switch (to) {
    case ElementType::BF16:
      half = floatToBF16(value);
      std::memcpy(out + 2 * i, &half, 2);
      break;
    case ElementType::F16:
      half = floatToF16(value);
      std::memcpy(out + 2 * i, &half, 2);
      break;
    default:
      std::memcpy(out + 4 * i, &value, 4);
      break;
    }
  }
  return true;
}

namespace {

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// How one parameter is found in the checkpoint.
struct Resolution {
  enum Kind { Direct, Stacked, Zeros } kind = Direct;
  const TensorView *tensor = nullptr;                    ///< Direct
  std::vector<std::vector<const TensorView *>> elements; ///< Stacked
  std::string source;
};

class Binder {
public:
  Binder(const CheckpointBinding &binding, const Checkpoint &checkpoint,
         llvm::StringRef folder, std::string prefix)
      : binding(binding), checkpoint(checkpoint), folder(folder),
        prefix(std::move(prefix)) {}

  std::optional<Resolution> resolve(const ModelParameter &param);

  std::vector<std::string> problems;
  llvm::StringSet<> used;

private:
  /// Checks one tensor against the shape and element a parameter needs.
  bool check(const TensorView &tensor, const ModelParameter &param,
             llvm::ArrayRef<int64_t> shape);

  const CheckpointBinding &binding;
  const Checkpoint &checkpoint;
  llvm::StringRef folder;
  std::string prefix;
};

bool Binder::check(const TensorView &tensor, const ModelParameter &param,
                   llvm::ArrayRef<int64_t> shape) {
  used.insert(tensor.name);
  bool ok = true;
  if (llvm::ArrayRef<int64_t>(tensor.shape) != shape) {
    problems.push_back("tensor `" + tensor.name + "` in `" + tensor.file +
                       "` has shape " + shapeText(tensor.shape) +
                       "; parameter `" + param.path + "` needs " +
                       shapeText(shape));
    ok = false;
  }
  auto wanted = tensorDTypeFor(param.element);
  if (wanted && tensor.dtype == *wanted)
    return ok;
  bool floatParam =
      isFloatType(param.element) && param.element != ElementType::F64;
  if (shape.size() == 1 && floatParam && isConvertible(tensor.dtype))
    return ok; // converted when loaded
  std::string need = wanted ? tensorDTypeName(*wanted).str() : "?";
  if (shape.size() == 1 && floatParam)
    problems.push_back("tensor `" + tensor.name + "` in `" + tensor.file +
                       "` is " + tensorDTypeName(tensor.dtype).str() +
                       "; parameter `" + param.path +
                       "` needs a float tensor (BF16, F16 or F32)");
  else
    problems.push_back("tensor `" + tensor.name + "` in `" + tensor.file +
                       "` is " + tensorDTypeName(tensor.dtype).str() +
                       "; parameter `" + param.path + "` needs " + need +
                       (shape.size() == 1
                            ? ""
                            : ", since tensors of rank 2 or more are used as "
                              "stored, not converted"));
  return false;
}

std::optional<Resolution> Binder::resolve(const ModelParameter &param) {
  auto unprefixed = binding.checkpointName(param.path);
  if (!unprefixed) {
    problems.push_back(llvm::toString(unprefixed.takeError()));
    return std::nullopt;
  }
  std::string name = binding.withPrefix(*unprefixed, prefix);
  Resolution resolution;
  resolution.source = name;
  if (const TensorView *tensor = checkpoint.find(name)) {
    resolution.tensor = tensor;
    if (!check(*tensor, param, param.shape))
      return std::nullopt;
    return resolution;
  }

  // The stacked layout: element e of dimension 0 is its parts for e,
  // concatenated on their dimension 0.
  auto firstParts = binding.stackedPartNames(*unprefixed, 0);
  if (firstParts && !param.shape.empty()) {
    bool present = false;
    for (const std::string &part : *firstParts)
      present |= checkpoint.find(binding.withPrefix(part, prefix)) != nullptr;
    if (present) {
      int64_t parts = int64_t(firstParts->size());
      std::vector<int64_t> partShape(param.shape.begin() + 1,
                                     param.shape.end());
      if (partShape.empty() || partShape[0] % parts != 0) {
        problems.push_back("parameter `" + param.path + "` (" +
                           param.typeText() + ") cannot be assembled from " +
                           std::to_string(parts) + " parts per element of `" +
                           name + "`");
        return std::nullopt;
      }
      partShape[0] /= parts;
      resolution.kind = Resolution::Stacked;
      resolution.source.clear();
      bool ok = true;
      for (int64_t e = 0; e < param.shape[0]; ++e) {
        std::vector<const TensorView *> element;
        std::vector<std::string> partNames =
            binding.stackedPartNames(*unprefixed, e).value_or(*firstParts);
        for (const std::string &part : partNames) {
          std::string partName = binding.withPrefix(part, prefix);
          if (e == 0 || e == param.shape[0] - 1)
            resolution.source +=
                (resolution.source.empty() ? "" : ", ") + partName;
          else if (e == 1 && element.empty())
            resolution.source += ", ...";
          const TensorView *tensor = checkpoint.find(partName);
          if (!tensor) {
            problems.push_back(
                "checkpoint `" + folder.str() + "` has no tensor `" + partName +
                "`; parameter `" + param.path +
                "` is assembled from it (per-expert layout of `" + name +
                "`) and needs it as " + shapeText(partShape) + " " +
                elementTypeName(param.element).str());
            ok = false;
            continue;
          }
          ok &= check(*tensor, param, partShape);
          element.push_back(tensor);
        }
        resolution.elements.push_back(std::move(element));
      }
      if (!ok)
        return std::nullopt;
      return resolution;
    }
  }

  if (param.optional) {
    resolution.kind = Resolution::Zeros;
    resolution.source = "zeros";
    return resolution;
  }
  std::string alternative;
  if (firstParts) {
    for (const std::string &part : *firstParts)
      alternative += (alternative.empty() ? "" : ", ") + std::string("`") +
                     binding.withPrefix(part, prefix) + "`";
    alternative = " (nor its per-expert parts " + alternative + ", ...)";
  }
  problems.push_back("checkpoint `" + folder.str() + "` has no tensor `" +
                     name + "`" + alternative + "; parameter `" + param.path +
                     "` needs it as " + param.typeText());
  return std::nullopt;
}

/// Reads `config.json` beside the checkpoint, if there is one, and checks
/// its layer pattern.
llvm::Error checkConfig(const CheckpointBinding &binding,
                        llvm::StringRef folder) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, "config.json");
  if (!llvm::sys::fs::exists(path))
    return llvm::Error::success();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return makeError(ErrorId::CheckpointConfigMalformed,
                     "cannot read `" + path +
                         "`: " + buffer.getError().message());
  auto config = parseJSON((*buffer)->getBuffer());
  if (!config)
    return makeError(ErrorId::CheckpointConfigMalformed,
                     "`" + path + "` is not valid JSON: " +
                         llvm::toString(config.takeError()));
  const json::Object *object = config->getAsObject();
  if (!object)
    return makeError(ErrorId::CheckpointConfigMalformed,
                     "`" + path + "`: the top level is not an object");
  return binding.checkLayerTypes(binding.config().sectionOf(*object), path);
}

} // namespace

llvm::Expected<std::unique_ptr<ParameterStore>> ParameterStore::load(
    const CheckpointBinding &bindingRef, std::vector<ModelParameter> params,
    llvm::StringRef checkpointDir, llvm::raw_ostream &warnings) {
  const CheckpointBinding *binding = &bindingRef;
  if (!llvm::sys::fs::is_directory(checkpointDir))
    return makeError(ErrorId::CheckpointMissing,
                     "checkpoint `" + checkpointDir + "` is not a folder");
  if (llvm::Error error = checkConfig(*binding, checkpointDir))
    return std::move(error);
  auto checkpoint = Checkpoint::open(checkpointDir);
  if (!checkpoint)
    return checkpoint.takeError();

  std::unique_ptr<ParameterStore> store(new ParameterStore());
  store->checkpoint = std::move(*checkpoint);
  for (const std::string &note : store->checkpoint.notes)
    warnings << "linnet: warning: " << note << "\n";
  store->params = std::move(params);
  std::vector<std::string> names;
  for (const TensorView *tensor : store->checkpoint.tensors())
    names.push_back(tensor->name);
  store->namePrefix = binding->detectPrefix(names);

  Binder binder(*binding, store->checkpoint, checkpointDir, store->namePrefix);
  std::vector<std::optional<Resolution>> resolutions;
  for (const ModelParameter &param : store->params)
    resolutions.push_back(binder.resolve(param));
  for (const std::string &name : names)
    if (!binder.used.contains(name) && !binding->isIgnored(name))
      warnings << "linnet: warning: checkpoint tensor `" << name
               << "` is not used by the model\n";
  if (!binder.problems.empty()) {
    llvm::Error all = llvm::Error::success();
    for (const std::string &problem : binder.problems)
      all = llvm::joinErrors(std::move(all),
                             makeError(ErrorId::CheckpointMisfit, problem));
    return std::move(all);
  }

  for (size_t i = 0; i < store->params.size(); ++i) {
    const ModelParameter &param = store->params[i];
    const Resolution &resolution = *resolutions[i];
    unsigned elementBytes = elementTypeBytes(param.element);
    LoadedParameter loaded;
    loaded.param = &param;
    loaded.source = resolution.source;
    loaded.bytes = param.elementCount() * elementBytes;
    auto allocate = [&]() {
      store->ownedBuffers.emplace_back(
          new uint64_t[(loaded.bytes + 7) / 8 + 1]());
      loaded.owned = true;
      return reinterpret_cast<char *>(store->ownedBuffers.back().get());
    };
    switch (resolution.kind) {
    case Resolution::Zeros:
      loaded.data = allocate();
      break;
    case Resolution::Direct: {
      const TensorView &tensor = *resolution.tensor;
      auto wanted = tensorDTypeFor(param.element);
      if (wanted && tensor.dtype == *wanted) {
        if (reinterpret_cast<uintptr_t>(tensor.bytes.data()) % elementBytes ==
            0) {
          loaded.data = tensor.bytes.data();
        } else {
          char *copy = allocate();
          std::memcpy(copy, tensor.bytes.data(), tensor.bytes.size());
          loaded.data = copy;
        }
      } else {
        char *copy = allocate();
        convertFloats(tensor.bytes.data(), tensor.dtype, copy, param.element,
                      param.elementCount());
        loaded.data = copy;
      }
      break;
    }
    case Resolution::Stacked: {
      char *copy = allocate();
      char *out = copy;
      for (const auto &element : resolution.elements)
        for (const TensorView *part : element) {
          // Checked: shapes that tile the parameter, a dtype that is its
          // element or (for 1-D parts) converts to it.
          uint64_t count = uint64_t(part->elementCount());
          if (part->dtype == tensorDTypeFor(param.element))
            std::memcpy(out, part->bytes.data(), part->bytes.size());
          else
            convertFloats(part->bytes.data(), part->dtype, out, param.element,
                          count);
          out += count * elementBytes;
        }
      loaded.data = copy;
      break;
    }
    }
    store->loaded.push_back(std::move(loaded));
  }
  return std::move(store);
}

std::string linnet::describeNonFinite(uint64_t nans, uint64_t infinities,
                                      uint64_t total) {
  std::string kinds;
  if (nans)
    kinds = std::to_string(nans) + " NaN";
  if (infinities)
    kinds +=
        (kinds.empty() ? "" : ", ") + std::to_string(infinities) + " infinite";
  uint64_t count = nans + infinities;
  return std::to_string(count) + " non-finite value" + (count == 1 ? "" : "s") +
         " of " + std::to_string(total) + " (" + kinds + ")";
}

std::vector<NonFiniteValues> ParameterStore::nonFiniteParameters() const {
  std::vector<NonFiniteValues> found;
  for (const LoadedParameter &parameter : loaded) {
    NonFiniteValues count;
    count.parameter = &parameter;
    uint64_t n = parameter.param->elementCount();
    auto tally = [&](auto value) {
      count.nans += std::isnan(value);
      count.infinities += std::isinf(value);
    };
    switch (parameter.param->element) {
    case ElementType::F32:
      for (uint64_t i = 0; i < n; ++i)
        tally(static_cast<const float *>(parameter.data)[i]);
      break;
    case ElementType::F64:
      for (uint64_t i = 0; i < n; ++i)
        tally(static_cast<const double *>(parameter.data)[i]);
      break;
    case ElementType::BF16:
      for (uint64_t i = 0; i < n; ++i)
        tally(bf16ToFloat(static_cast<const uint16_t *>(parameter.data)[i]));
      break;
    case ElementType::F16:
      for (uint64_t i = 0; i < n; ++i)
        tally(f16ToFloat(static_cast<const uint16_t *>(parameter.data)[i]));
      break;
    default:
      break;
    }
    if (count.nans || count.infinities)
      found.push_back(count);
  }
  return found;
}
