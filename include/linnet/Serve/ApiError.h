//===- ApiError.h - An error a client hears as OpenAI JSON ------*- C++ -*-===//
//
// A request the server refuses is answered with the HTTP status that says
// why and a body clients of the OpenAI API already parse:
// `{"error": {"message", "type", "param", "code"}}`. The message ends with
// linnet's catalogue ID, as every runtime error does.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_APIERROR_H
#define LINNET_SERVE_APIERROR_H

#include "linnet/Basic/Errors.h"

#include "llvm/Support/Error.h"

#include <string>

namespace linnet::serve {

class ApiError : public llvm::ErrorInfo<ApiError> {
public:
  static char ID;
  ApiError(int status, std::string type, std::string param, std::string message)
      : status(status), type(std::move(type)), param(std::move(param)),
        text(std::move(message)) {}

  /// An ApiError whose message is `message [Id]`.
  static llvm::Error make(int status, llvm::StringRef type,
                          llvm::StringRef param, ErrorId id,
                          const llvm::Twine &message);

  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

  /// The response body.
  std::string json() const;

  int status;
  std::string type, param, text;
};

} // namespace linnet::serve

#endif // LINNET_SERVE_APIERROR_H
