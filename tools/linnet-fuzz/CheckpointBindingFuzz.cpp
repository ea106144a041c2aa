//===- CheckpointBindingFuzz.cpp - libFuzzer target for name maps ---------===//
//
// Feeds arbitrary bytes to CheckpointBinding::parse, which reads a model's
// `checkpoint_binding.json`, and then asks the parsed binding what the
// loader and `init-checkpoint` ask it: the checkpoint name of parameter
// paths like the model's, the prefix a checkpoint's names use, the stacked
// parts of fused tensors, the layer pattern checked against a config, and
// the config fields that give a set of generics. Any crash, sanitizer
// report or hang here is a bug that a broken binding file could trigger.
//
//===----------------------------------------------------------------------===//

#include "linnet/Model/CheckpointBinding.h"

using namespace linnet;
namespace json = llvm::json;

namespace {

/// Linnet parameter paths of the shapes the model has.
const char *const kParameterPaths[] = {
    "embed_tokens.weight",
    "norm.weight",
    "lm_head.weight",
    "groups.0.linear.0.linear_attn.A_log",
    "groups.0.linear.2.linear_attn.conv_weight",
    "groups.1.linear.1.mlp.gate_up_proj",
    "groups.1.full.self_attn.q_proj.weight",
    "groups.2.full.mlp.shared_expert.gate.weight",
    "layers.7.mlp.down_proj",
    "a.b.c.d.e.f.g.h",
    "",
};

/// Checkpoint tensor names, prefixed and not.
const char *const kTensorNames[] = {
    "model.language_model.layers.0.linear_attn.A_log",
    "model.visual.blocks.0.attn.qkv.weight",
    "lm_head.weight",
    "model.layers.3.mlp.experts.gate_up_proj",
    "layers.3.mlp.experts.down_proj",
    "mtp.fc.weight",
};

void consume(llvm::Error error) { llvm::consumeError(std::move(error)); }
template <typename T> void consume(llvm::Expected<T> &value) {
  if (!value)
    llvm::consumeError(value.takeError());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto binding = CheckpointBinding::parse(text, "checkpoint_binding.json");
  if (!binding) {
    llvm::consumeError(binding.takeError());
    return 0;
  }

  for (const char *path : kParameterPaths) {
    auto name = binding->checkpointName(path);
    consume(name);
    if (name) {
      for (const std::string &prefix : binding->prefixes())
        (void)binding->withPrefix(*name, prefix);
      (void)binding->isIgnored(*name);
      for (int64_t index : {0, 1, 7})
        (void)binding->stackedPartNames(*name, index);
    }
  }
  std::vector<std::string> names(std::begin(kTensorNames),
                                 std::end(kTensorNames));
  (void)binding->detectPrefix(names);
  (void)binding->detectPrefix({});

  // A config section with the layer pattern of a small model, and one with
  // a pattern of the wrong length.
  (void)binding->layerTypes(8);
  json::Array types;
  for (const std::string &type : binding->layerTypes(8))
    types.push_back(type);
  json::Object section;
  if (!binding->layerTypesField().empty()) {
    section[binding->layerTypesField()] = json::Value(std::move(types));
    if (!binding->layerCountField().empty())
      section[binding->layerCountField()] = 8;
  }
  consume(binding->checkLayerTypes(section, "config.json"));
  if (!binding->layerTypesField().empty())
    section[binding->layerTypesField()] = json::Array{"linear_attention", 3};
  consume(binding->checkLayerTypes(section, "config.json"));

  // The generics of a small model, and of one too large to divide evenly.
  for (int64_t scale : {1, 3}) {
    std::map<std::string, int64_t> generics = {
        {"Vocab", 64 * scale}, {"H", 32 * scale},      {"Heads", 4},
        {"KvHeads", 2},        {"HeadDim", 8 * scale}, {"KeyHeads", 2},
        {"ValueHeads", 4},     {"KeyDim", 8},          {"ValueDim", 8},
        {"Conv", 64 * scale},  {"Width", 4},           {"Experts", 4},
        {"TopK", 2},           {"ExpertInner", 16},    {"SharedInner", 16},
        {"Groups", 2 * scale}, {"MaxSeq", 16},         {"Batch", 1}};
    auto fields = binding->config().fieldsFor(generics);
    consume(fields);
  }
  for (const char *generic : {"T", "Vocab"})
    (void)binding->config().find(generic);
  (void)binding->config().templateObject();
  (void)binding->config().defaultBindings();
  // A config read by the rules: the small model's sizes at the top level.
  json::Object config;
  for (const ConfigRule &rule : binding->config().rules())
    for (const std::string &field : rule.fields)
      config[field] = 4;
  ConfigReading reading = binding->config().read(config);
  (void)reading.find("H");
  return 0;
}
