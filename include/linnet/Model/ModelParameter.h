//===- ModelParameter.h - A parameter or state of a bound model --*- C++
//-*-===//
//
// The runtime sees a bound model's weights and states as a flat list of
// these (the manifest's), in the order of the generated entries' arguments;
// Sema's listParameters and listStates make the list.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_MODEL_MODELPARAMETER_H
#define LINNET_MODEL_MODELPARAMETER_H

#include "linnet/Model/ElementType.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

/// One `param` of one block instance of a bound model.
struct ModelParameter {
  /// The subs' names from the root joined with '.', array elements as their
  /// index, then the param's name: `groups.0.linear.1.linear_attn.A_log`.
  std::string path;
  std::vector<int64_t> shape;             ///< bound sizes
  ElementType element = ElementType::F32; ///< Float generics substituted
  bool optional = false;                  ///< `param bias: ...?`
  /// The name of the block declaring it (`GatedRmsNorm`).
  std::string block;
  /// A state's axis of cached positions (a KV cache's `MaxSeq`), whose
  /// entries past a row's token count are never read: a snapshot of the
  /// row keeps only the ones before it. None for parameters and for states
  /// that do not grow with the context.
  std::optional<unsigned> contextAxis;

  /// The last part of the path: the name the block declares it by.
  llvm::StringRef name() const;
  uint64_t elementCount() const;
  /// `[64, 32] bf16`, for messages.
  std::string typeText() const;
};

} // namespace linnet

#endif // LINNET_MODEL_MODELPARAMETER_H
