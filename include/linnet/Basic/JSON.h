//===- JSON.h - Reading JSON from outside within fixed limits ---*- C++ -*-===//
//
// Every JSON document linnet reads comes from outside (config.json, a
// safetensors header, model.safetensors.index.json, checkpoint_binding.json,
// run scripts). llvm::json::parse recurses once per nesting level, so a
// deeply nested document overflows the stack; this is the one parser every
// loader calls, with the limits checked first.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_BASIC_JSON_H
#define LINNET_BASIC_JSON_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>

namespace linnet {

/// The deepest nesting of arrays and objects a JSON input may have: real
/// configs and scripts use at most four levels.
constexpr unsigned kMaxJSONDepth = 64;
/// The largest JSON input: a run script of 64 rows at the full context is
/// about 120 MB.
constexpr uint64_t kMaxJSONBytes = 256ull << 20;

/// `text` parsed as JSON once its size and nesting are within the limits.
/// Errors read `[line:column, byte=offset]: message`, like llvm::json's own.
llvm::Expected<llvm::json::Value> parseJSON(llvm::StringRef text);

} // namespace linnet

#endif // LINNET_BASIC_JSON_H
