//===- ModelManifest.h - What running a bound model needs to know -*- C++
//-*-===//
//
// Running a compiled model needs a few facts that the compiler derives from
// the sources: the bound generics, the parameters and states in argument
// order, the entries compiled, and the model's checkpoint binding. The
// manifest holds exactly those, as data with a JSON form, so that the same
// runtime code serves `linnet run` (which builds the manifest from the bound
// program) and a binary made by `linnet build` (which carries it as bytes
// and has no sources to read).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_MODELMANIFEST_H
#define LINNET_RUNTIME_MODELMANIFEST_H

#include "linnet/Model/BoundGeneric.h"
#include "linnet/Model/CheckpointBinding.h"
#include "linnet/Model/ModelParameter.h"
#include "linnet/Runtime/Session.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace linnet {

/// A bound model as the runtime sees it.
struct ModelManifest {
  /// The root block's qualified name, for messages.
  std::string model;
  /// In the root's declaration order; `origin` says where each value came
  /// from, and `fromConfig` whether a checkpoint's config.json must agree
  /// with it (a value given by `--bind` or a default is fixed by the build).
  std::vector<BoundGeneric> generics;
  std::vector<bool> fromConfig;
  /// listParameters and listStates.
  std::vector<ModelParameter> parameters;
  std::vector<ModelParameter> states;
  /// The entries compiled into the code that runs the model.
  std::vector<std::string> entries;
  /// The checkpoint binding: its path (for messages) and its text.
  std::string bindingPath;
  std::string bindingText;

  llvm::json::Value toJSON() const;
  static llvm::Expected<ModelManifest> parse(llvm::StringRef text);

  /// The checkpoint binding the manifest carries.
  llvm::Expected<CheckpointBinding> binding() const;
  /// `Batch`, `MaxSeq` and `Vocab`.
  llvm::Expected<SessionSizes> sizes() const {
    return SessionSizes::of(generics);
  }
  /// The element type of the Float generic `T` (the logits' element), f32
  /// when there is none.
  ElementType logitElement() const;
  bool hasEntry(llvm::StringRef name) const;

  /// Checks that the checkpoint's config.json in `checkpointDir` gives every
  /// generic that came from a config the value the model was built with, and
  /// the binding's constants their value. The error names the generic:
  /// `config.json binds `H` to 64, but this binary was built for 32`. A
  /// constant the config does not give is a `warning` (the model's value
  /// applies).
  llvm::Error checkConfigAgrees(
      llvm::StringRef checkpointDir,
      llvm::function_ref<void(const llvm::Twine &)> warning) const;
};

} // namespace linnet

#endif // LINNET_RUNTIME_MODELMANIFEST_H
