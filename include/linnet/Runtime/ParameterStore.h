//===- ParameterStore.h - A checkpoint bound to a model's parameters -*- C++
//-*-===//
//
// Before anything runs, every parameter of the bound model is found in the
// checkpoint (through the model's checkpoint binding) and checked for
// presence, shape and dtype; all mismatches are reported together. What
// passes is handed out as one contiguous, row-major, aligned buffer per
// parameter, in the order of listParameters: a pointer into the mapped file
// when its bytes can be used as they are, otherwise an owned copy
// (converted 1-D tensors, assembled per-expert layouts, zeros for absent
// optional parameters).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_PARAMETERSTORE_H
#define LINNET_RUNTIME_PARAMETERSTORE_H

#include "linnet/Model/CheckpointBinding.h"
#include "linnet/Model/ModelParameter.h"
#include "linnet/Runtime/Safetensors.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace linnet {

/// One parameter's data, ready for the generated code.
struct LoadedParameter {
  const ModelParameter *param = nullptr;
  /// Contiguous, row-major, of `param->element`, aligned to its size.
  const void *data = nullptr;
  uint64_t bytes = 0;
  /// The checkpoint name(s) it came from (`zeros` for an absent optional
  /// parameter); for messages.
  std::string source;
  /// False when `data` points into the mapped checkpoint.
  bool owned = false;
};

/// How many of a parameter's values are not finite.
struct NonFiniteValues {
  const LoadedParameter *parameter = nullptr;
  uint64_t nans = 0, infinities = 0;
};

/// `5 non-finite values of 2048 (3 NaN, 2 infinite)`, for messages.
std::string describeNonFinite(uint64_t nans, uint64_t infinities,
                              uint64_t total);

/// The safetensors dtype that stores `element` (`F32` for f32).
std::optional<TensorDType> tensorDTypeFor(ElementType element);

class ParameterStore {
public:
  /// Binds the checkpoint in `checkpointDir` (`model.safetensors`, or the
  /// shards of `model.safetensors.index.json`, and its `config.json`'s layer
  /// pattern) to `params` (listParameters of the model) through `binding`.
  /// Every problem with the checkpoint is one error message of the returned
  /// error (llvm::handleAllErrors visits them in order). Checkpoint tensors
  /// the model does not use and the binding does not ignore are written to
  /// `warnings`, one line each.
  static llvm::Expected<std::unique_ptr<ParameterStore>>
  load(const CheckpointBinding &binding, std::vector<ModelParameter> params,
       llvm::StringRef checkpointDir, llvm::raw_ostream &warnings);

  /// In the order of listParameters.
  llvm::ArrayRef<LoadedParameter> parameters() const { return loaded; }
  /// Every floating-point parameter holding a NaN or an infinity, in the
  /// order of listParameters. Reads every weight: for `check --checkpoint`.
  std::vector<NonFiniteValues> nonFiniteParameters() const;
  /// The name prefix the checkpoint uses (`model.language_model.`).
  const std::string &prefix() const { return namePrefix; }

private:
  ParameterStore() = default;

  Checkpoint checkpoint;
  std::vector<ModelParameter> params;
  std::vector<LoadedParameter> loaded;
  std::vector<std::unique_ptr<uint64_t[]>> ownedBuffers;
  std::string namePrefix;
};

/// Converts `count` floats from `from` (BF16, F16 or F32) to `to` (bf16, f16
/// or f32), rounding to nearest even when narrowing. Returns false for any
/// other pair.
bool convertFloats(const void *source, TensorDType from, void *destination,
                   ElementType to, uint64_t count);

} // namespace linnet

#endif // LINNET_RUNTIME_PARAMETERSTORE_H
