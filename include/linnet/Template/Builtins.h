//===- Builtins.h - The filters, tests and globals of chat templates -*- C++
//-*-===//
//
// One table each for Jinja's filters (`x | trim`), tests (`x is string`) and
// global functions (`namespace(...)`, `range`, transformers'
// `raise_exception` and `strftime_now`), plus the methods of strings and
// dicts that templates call (`.startswith`, `.items()`). A name the tables
// do not hold is refused when the template is parsed, as Jinja refuses it.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEMPLATE_BUILTINS_H
#define LINNET_TEMPLATE_BUILTINS_H

#include "linnet/Basic/Errors.h"
#include "linnet/Template/Value.h"

#include "llvm/ADT/StringRef.h"

namespace linnet::tmpl {

struct FilterFunction {
  llvm::StringRef name;
  llvm::Expected<Value> (*apply)(const Value &input, CallArguments &arguments);
};
struct TestFunction {
  llvm::StringRef name;
  llvm::Expected<bool> (*apply)(const Value &input, CallArguments &arguments);
};

const FilterFunction *findFilter(llvm::StringRef name);
const TestFunction *findTest(llvm::StringRef name);
/// The globals every render sees (namespace, range, dict, raise_exception,
/// strftime_now).
Dict globalFunctions();
/// `object.name` where `object` is a string, list or dict and `name` one of
/// its Python methods; none when it is not one.
std::optional<Value> boundMethod(const Value &object, llvm::StringRef name);

/// An error a builtin (or the renderer's arithmetic) finds, before the
/// renderer adds the template's line and column to it.
class BuiltinError : public llvm::ErrorInfo<BuiltinError> {
public:
  static char ID;
  BuiltinError(ErrorId id, std::string message)
      : id(id), message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  ErrorId id;
  std::string message;
};
/// A value a builtin cannot take (`[TemplateRenderFailed]`).
llvm::Error renderError(const llvm::Twine &message);

/// markupsafe's escape: & < > " ' as entities.
std::string escapeHTML(llvm::StringRef text);

/// Python's `<`: numbers with numbers, strings, lists item by item.
llvm::Expected<bool> lessThan(const Value &a, const Value &b);
/// Python's `a in b`.
llvm::Expected<bool> contains(const Value &container, const Value &item);
/// What a for loop iterates over: a list's items, a dict's keys, a string's
/// characters (Undefined: none).
llvm::Expected<std::vector<Value>> iterate(const Value &value);
/// Jinja's attribute access `object.name` (an item for a dict, a method,
/// or Undefined).
llvm::Expected<Value> getAttribute(const Value &object, llvm::StringRef name);
/// Jinja's `object[key]` (Undefined when missing).
llvm::Expected<Value> getItem(const Value &object, const Value &key);

} // namespace linnet::tmpl

#endif // LINNET_TEMPLATE_BUILTINS_H
