//===- GenerationConfig.cpp - A checkpoint's generation_config.json -------===//
//
// transformers' GenerationConfig keeps a field's own default when the file
// lacks it (top_k 50 among them), and its generate samples only when
// `do_sample` is true: a temperature without it is ignored.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/GenerationConfig.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdio>

using namespace linnet;

namespace {

llvm::Error malformed(llvm::StringRef path, const llvm::Twine &message) {
  return makeError(ErrorId::GenerationConfigMalformed,
                   "`" + path + "`: " + message);
}

/// The number `name` of `root`, if present and not null.
llvm::Expected<std::optional<double>> number(const llvm::json::Object &root,
                                             llvm::StringRef name,
                                             llvm::StringRef path) {
  const llvm::json::Value *value = root.get(name);
  if (!value || value->kind() == llvm::json::Value::Null)
    return std::nullopt;
  std::optional<double> number = value->getAsNumber();
  if (!number)
    return malformed(path, "`" + name + "` is not a number");
  return number;
}

std::string decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

} // namespace

llvm::Expected<GenerationConfig>
GenerationConfig::loadFolder(llvm::StringRef folder) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, "generation_config.json");
  if (!llvm::sys::fs::exists(path))
    return GenerationConfig();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError(ErrorId::GenerationConfigMalformed,
                     "cannot read `" + path.str().str() +
                         "`: " + buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

llvm::Expected<GenerationConfig> GenerationConfig::parse(llvm::StringRef text,
                                                         llvm::StringRef path) {
  GenerationConfig config;
  config.path = path.str();
  auto parsed = parseJSON(text);
  if (!parsed)
    return makeError(ErrorId::GenerationConfigMalformed,
                     "`" + path + "` is not JSON " +
                         llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return makeError(ErrorId::GenerationConfigMalformed,
                     "`" + path + "` is not a JSON object");

  if (const llvm::json::Value *eos = root->get("eos_token_id");
      eos && eos->kind() != llvm::json::Value::Null) {
    std::vector<const llvm::json::Value *> values;
    if (const llvm::json::Array *list = eos->getAsArray())
      for (const llvm::json::Value &value : *list)
        values.push_back(&value);
    else
      values.push_back(eos);
    for (const llvm::json::Value *value : values) {
      std::optional<int64_t> id = jsonInteger(*value);
      if (!id || *id < 0 || *id > INT32_MAX)
        return malformed(path,
                         "`eos_token_id` is not a token id or a list of them");
      config.stopIds.push_back(int32_t(*id));
    }
  }

  bool sample = false;
  if (const llvm::json::Value *doSample = root->get("do_sample");
      doSample && doSample->kind() != llvm::json::Value::Null) {
    std::optional<bool> flag = doSample->getAsBoolean();
    if (!flag)
      return malformed(path, "`do_sample` is not true or false");
    sample = *flag;
  }
  SamplingOptions &sampling = config.sampling;
  // transformers' defaults for what the file leaves out.
  sampling.temperature = sample ? 1.0 : 0.0;
  sampling.topK = 50;
  struct Field {
    const char *name;
    double *value;
  };
  double topK = 50;
  Field fields[] = {{"temperature", &sampling.temperature},
                    {"top_k", &topK},
                    {"top_p", &sampling.topP},
                    {"min_p", &sampling.minP},
                    {"repetition_penalty", &sampling.repetitionPenalty}};
  for (const Field &field : fields) {
    auto value = number(*root, field.name, path);
    if (!value)
      return value.takeError();
    if (!*value)
      continue;
    // Without do_sample transformers ignores the temperature: greedy.
    if (field.value == &sampling.temperature && !sample)
      continue;
    *field.value = **value;
  }
  if (topK != double(int64_t(topK)))
    return malformed(path, "`top_k` is not a whole number");
  sampling.topK = int64_t(topK);
  if (llvm::Error error = sampling.validate(/*asFields=*/true,
                                            ErrorId::GenerationConfigMalformed))
    return withContext("`" + path + "`: ", std::move(error));
  return config;
}

std::string GenerationConfig::describeSampling() const {
  if (sampling.greedy()) {
    if (sampling.repetitionPenalty == 1)
      return "greedy";
    return "greedy, repetition penalty " + decimal(sampling.repetitionPenalty);
  }
  std::string text = "temperature " + decimal(sampling.temperature);
  if (sampling.topK)
    text += ", top-k " + std::to_string(sampling.topK);
  if (sampling.topP != 1)
    text += ", top-p " + decimal(sampling.topP);
  if (sampling.minP)
    text += ", min-p " + decimal(sampling.minP);
  if (sampling.repetitionPenalty != 1)
    text += ", repetition penalty " + decimal(sampling.repetitionPenalty);
  return text;
}
