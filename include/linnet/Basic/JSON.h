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
#include <optional>

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

/// The 64-bit integer `value` holds (an integral number), if any. Every JSON
/// integer linnet reads goes through this instead of getAsInteger: LLVM 22's
/// takes a double of exactly 2^63 (`9223372036854775807.`) as in range and
/// converts it, which is undefined behaviour. Numbers from 2^63 - 512 up
/// (which round to 2^63 as doubles) are refused here, as out of range.
std::optional<int64_t> jsonInteger(const llvm::json::Value &value);
/// The same for `object[key]` (none when the key is absent).
std::optional<int64_t> jsonInteger(const llvm::json::Object &object,
                                   llvm::StringRef key);

} // namespace linnet

#endif // LINNET_BASIC_JSON_H
