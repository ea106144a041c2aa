//===- RuntimeErrors.cpp - Runtime errors with catalogue IDs --------------===//

#include "linnet/Runtime/RuntimeErrors.h"

using namespace linnet;

namespace {

const RuntimeErrorInfo catalogue[] = {
#define LINNET_RUNTIME_ERROR(Id, About) {#Id, About},
#include "linnet/Runtime/RuntimeErrors.def"
};

} // namespace

llvm::Error linnet::runtimeError(RuntimeErrorId id,
                                 const llvm::Twine &message) {
  return llvm::createStringError(message + " [" + catalogue[size_t(id)].id +
                                 "]");
}

llvm::Error linnet::withContext(const llvm::Twine &context, llvm::Error error) {
  return llvm::createStringError(context + llvm::toString(std::move(error)));
}

llvm::ArrayRef<RuntimeErrorInfo> linnet::runtimeErrorCatalogue() {
  return catalogue;
}
