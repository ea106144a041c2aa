//===- Binding.h - Binding a model's generics to values ------------*- C++
//-*-===//
//
// A model runs at one size: its root block's generics get values from a
// Hugging Face config.json (through the field map of the model's checkpoint
// binding, `checkpoint_binding.json` beside the root module) and from
// `--bind Name=Value` overrides. Binding then instantiates every block the
// root reaches and checks that each size is a positive integer, which is
// also what the parameter count is computed from.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_BINDING_H
#define LINNET_SEMA_BINDING_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Model/CheckpointBinding.h"
#include "linnet/Sema/Program.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

namespace linnet {

/// One distinct instance of a block in the bound model: its Dim generics'
/// values.
struct BlockInstanceSizes {
  const BlockDecl *block = nullptr;
  std::map<std::string, ShapeExpr> sizes;
};

struct BoundModel {
  const BlockDecl *root = nullptr;
  std::vector<BoundGeneric> generics; ///< in the root's declaration order
  uint64_t parameterCount = 0;
  std::vector<BlockInstanceSizes> instances;
};

/// The block that declares `pub entry` functions; reports when there is none
/// or several.
const BlockDecl *findRootBlock(const Program &program, DiagnosticEngine &diags);

/// Binds the root's generics from `bindArgs` (each a path to a config.json
/// or `Name=Value`, later ones overriding earlier), instantiates the model
/// and counts its parameters. Reports every problem; nothing on failure.
std::optional<BoundModel> bindModel(const Program &program,
                                    llvm::ArrayRef<std::string> bindArgs,
                                    DiagnosticEngine &diags);

/// `34.7B`, `1.2M`, `950K`, `12`.
std::string formatParameterCount(uint64_t count);

/// The `generics`, `entries` and `parameters` sections of `linnet inspect`.
void printBoundModel(const BoundModel &model, llvm::raw_ostream &os);

} // namespace linnet

#endif // LINNET_SEMA_BINDING_H
