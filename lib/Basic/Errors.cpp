//===- Errors.cpp - Errors outside the sources, with catalogue IDs --------===//

#include "linnet/Basic/Errors.h"

using namespace linnet;

namespace {

const ErrorKind catalogue[] = {
#define LINNET_ERROR(Id, About) {#Id, About, false},
#define LINNET_INTERNAL_ERROR(Id, About) {#Id, About, true},
#include "linnet/Basic/ErrorKinds.def"
};

} // namespace

llvm::Error linnet::makeError(ErrorId id, const llvm::Twine &message) {
  return llvm::createStringError(message + " [" + catalogue[size_t(id)].id +
                                 "]");
}

llvm::Error linnet::withContext(const llvm::Twine &context, llvm::Error error) {
  return llvm::createStringError(context + llvm::toString(std::move(error)));
}

llvm::ArrayRef<ErrorKind> linnet::errorCatalogue() { return catalogue; }
