//===- Errors.h - Errors outside the sources, with catalogue IDs -*- C++
//-*-===//
//
// Errors found outside a model's sources (by the runtime: tokens, scripts,
// calls, checkpoints, memory; by the targets) are llvm::Errors whose message
// ends with an ID from ErrorKinds.def (`[TokenOutOfVocabulary]`), so that a
// user can search for it, as the front end's diagnostics carry theirs.
// Callers that add context only prefix the message, so the ID stays last.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_BASIC_ERRORS_H
#define LINNET_BASIC_ERRORS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace linnet {

enum class ErrorId {
#define LINNET_ERROR(Id, About) Id,
#include "linnet/Basic/ErrorKinds.def"
};

/// `message [Id]`.
llvm::Error makeError(ErrorId id, const llvm::Twine &message);

/// `context` + the error's message (whose ID stays at its end).
llvm::Error withContext(const llvm::Twine &context, llvm::Error error);

/// One entry of the catalogue: the ID and what it is about.
struct ErrorKind {
  llvm::StringRef id, about;
  bool internal = false; ///< no input can cause it
};
/// Every entry, in catalogue order.
llvm::ArrayRef<ErrorKind> errorCatalogue();

} // namespace linnet

#endif // LINNET_BASIC_ERRORS_H
