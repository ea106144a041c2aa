//===- GenerationConfig.h - A checkpoint's generation_config.json -*- C++
//-*-===//
//
// A Hugging Face checkpoint says how its model is meant to generate: the ids
// that end a reply (`eos_token_id`) and the sampling its authors chose
// (`do_sample`, `temperature`, `top_k`, `top_p`, ...). transformers' generate
// applies them unless told otherwise, and so do `linnet run`, built binaries
// and the server when they speak text; the command line or a request
// overrides each value alone.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_GENERATIONCONFIG_H
#define LINNET_RUNTIME_GENERATIONCONFIG_H

#include "linnet/Runtime/Sampler.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace linnet {

struct GenerationConfig {
  /// Where it was read from; empty when the folder has no such file.
  std::string path;
  /// `eos_token_id`: an id or a list of them.
  std::vector<int32_t> stopIds;
  /// The sampling a reply gets by default. Without the file: greedy with
  /// no cuts. With it, as transformers reads it: greedy unless `do_sample`
  /// is true, then `temperature` (default 1), `top_k` (50), `top_p` (1),
  /// `min_p` (none); `repetition_penalty` (1) either way.
  SamplingOptions sampling;

  /// `folder`/generation_config.json, or the defaults when there is none.
  /// [GenerationConfigMalformed] names the file and the field.
  static llvm::Expected<GenerationConfig> loadFolder(llvm::StringRef folder);
  /// The file's contents `text`, read from `path`.
  static llvm::Expected<GenerationConfig> parse(llvm::StringRef text,
                                                llvm::StringRef path);

  /// The defaults in words, for a note (`temperature 0.6, top-k 20, ...`),
  /// or `greedy`.
  std::string describeSampling() const;
};

} // namespace linnet

#endif // LINNET_RUNTIME_GENERATIONCONFIG_H
