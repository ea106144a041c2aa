//===- ConfigConstants.h - Numbers a model's source fixes --------*- C++
//-*-===//
//
// A checkpoint binding lists, under `config.constants`, the numbers the
// model's source writes as literals (rope theta, the rotary factor, norm
// epsilons) with the config fields that hold them. Binding (`linnet`) and
// the standalone runtime (a built binary) both refuse a config that says
// otherwise; this is the one reading of those rules they share.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_MODEL_CONFIGCONSTANTS_H
#define LINNET_MODEL_CONFIGCONSTANTS_H

#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace linnet {

/// One constant as a config states it.
struct ConfigConstant {
  std::string name;  ///< the rule's name: `rope_theta`
  std::string field; ///< the field found, as the rule writes it
  /// The config's value; null when the config has none of the fields
  /// (`field` is then the first of them).
  const llvm::json::Value *value = nullptr;
  double expected = 0;
  std::string used; ///< where the model uses it, for messages
  /// The value is a number equal to `expected` (to 1e-9 relatively).
  bool agrees = false;
};

/// For each rule of `constants` (in name order), the first of its `fields`
/// (dotted paths through nested objects) present in `section`. A rule whose
/// fields are all absent is returned with no `value` (the model's own value
/// applies, which callers say in a warning). Rules without a `fields` list
/// or a numeric `value` are named in `malformed`.
std::vector<ConfigConstant>
readConfigConstants(const llvm::json::Object &constants,
                    const llvm::json::Object &section,
                    std::vector<std::string> &malformed);

} // namespace linnet

#endif // LINNET_MODEL_CONFIGCONSTANTS_H
