//===- RuntimeErrors.h - Runtime errors with catalogue IDs -------*- C++
//-*-===//
//
// The runtime's errors are llvm::Errors whose message ends with the error's
// ID (`[TokenOutOfVocabulary]`, RuntimeErrors.def). Callers that add context
// only prefix the message, so the ID stays last, as in the front end's
// diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_RUNTIMEERRORS_H
#define LINNET_RUNTIME_RUNTIMEERRORS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace linnet {

enum class RuntimeErrorId {
#define LINNET_RUNTIME_ERROR(Id, About) Id,
#include "linnet/Runtime/RuntimeErrors.def"
};

/// `message [Id]`.
llvm::Error runtimeError(RuntimeErrorId id, const llvm::Twine &message);

/// `context` + the error's message (whose ID stays at its end).
llvm::Error withContext(const llvm::Twine &context, llvm::Error error);

/// Every runtime error: its ID and what it is about, in catalogue order.
struct RuntimeErrorInfo {
  llvm::StringRef id, about;
};
llvm::ArrayRef<RuntimeErrorInfo> runtimeErrorCatalogue();

} // namespace linnet

#endif // LINNET_RUNTIME_RUNTIMEERRORS_H
