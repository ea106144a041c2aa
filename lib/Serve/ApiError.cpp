//===- ApiError.cpp - An error a client hears as OpenAI-style JSON --------===//

#include "linnet/Serve/ApiError.h"

#include "llvm/Support/JSON.h"

using namespace linnet;
using namespace linnet::serve;

char ApiError::ID = 0;

llvm::Error ApiError::make(int status, llvm::StringRef type,
                           llvm::StringRef param, ErrorId id,
                           const llvm::Twine &message) {
  return llvm::make_error<ApiError>(status, type.str(), param.str(),
                                    llvm::toString(makeError(id, message)));
}

std::string ApiError::json() const {
  llvm::json::Object error{{"message", text},
                           {"type", type},
                           {"param", param.empty() ? llvm::json::Value(nullptr)
                                                   : llvm::json::Value(param)},
                           {"code", status}};
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(llvm::json::Object{{"error", std::move(error)}});
  return out;
}
