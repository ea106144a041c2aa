//===- Value.h - The values a chat template computes with -------*- C++ -*-===//
//
// A chat template is a Jinja program that Hugging Face runs in Python, so its
// values behave as Python's do: `None`, booleans that are also integers,
// arbitrary strings, lists and tuples, dicts that keep their insertion order,
// Jinja's `Undefined` (what a missing key reads as) and namespaces. Printing
// a value (`{{ x }}`) is Python's `str`, `tojson` is `json.dumps` as
// transformers configures it; both are spelled here so that a rendered prompt
// is the same bytes as transformers' apply_chat_template.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEMPLATE_VALUE_H
#define LINNET_TEMPLATE_VALUE_H

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace linnet::tmpl {

class Value;
struct CallArguments;

/// A built-in function, a bound method or a macro.
using Callable = std::function<llvm::Expected<Value>(CallArguments &)>;

/// A dict's entries in insertion order (as Python's dicts keep them). Keys
/// are strings: JSON's are, and templates index by name.
struct Dict {
  std::vector<std::pair<std::string, Value>> entries;
  const Value *find(llvm::StringRef key) const;
  void set(llvm::StringRef key, Value value);
};

class Value {
public:
  enum class Kind {
    Undefined,
    None,
    Bool,
    Int,
    Float,
    String,
    List,
    Dict,
    Namespace,
    Callable
  };

  Value() = default;
  static Value undefined(std::string hint = "") {
    Value v;
    v.text = std::move(hint);
    return v;
  }
  static Value none() { return make(Kind::None); }
  static Value boolean(bool b) {
    Value v = make(Kind::Bool);
    v.integer = b;
    return v;
  }
  static Value fromInt(int64_t i) {
    Value v = make(Kind::Int);
    v.integer = i;
    return v;
  }
  static Value fromFloat(double d) {
    Value v = make(Kind::Float);
    v.real = d;
    return v;
  }
  static Value string(std::string s) {
    Value v = make(Kind::String);
    v.text = std::move(s);
    return v;
  }
  static Value list(std::vector<Value> items, bool tuple = false) {
    Value v = make(Kind::List);
    v.items = std::make_shared<std::vector<Value>>(std::move(items));
    v.tuple = tuple;
    return v;
  }
  /// `items` as the iterator or view `type` (see pythonType).
  static Value lazy(std::vector<Value> items, llvm::StringRef type) {
    Value v = list(std::move(items));
    v.pythonType = type.str();
    if (!type.starts_with("dict_"))
      v.exhausted = std::make_shared<bool>(false);
    return v;
  }
  bool isIterator() const { return exhausted != nullptr; }
  static Value dict(Dict d = {}) {
    Value v = make(Kind::Dict);
    v.map = std::make_shared<Dict>(std::move(d));
    return v;
  }
  static Value nameSpace(Dict d = {}) {
    Value v = make(Kind::Namespace);
    v.map = std::make_shared<Dict>(std::move(d));
    return v;
  }
  static Value callable(std::string name, Callable fn) {
    Value v = make(Kind::Callable);
    v.text = std::move(name);
    v.function = std::make_shared<Callable>(std::move(fn));
    return v;
  }

  Kind kind = Kind::Undefined;
  bool tuple = false; ///< a List written or made as a tuple
  /// A List that Python holds as a lazy iterator or a dict view (the
  /// type's name: `generator` from map and select, `dict_items` from
  /// .items()), which JSON cannot hold and which prints as Python prints
  /// it; an iterator is true even when empty, has no length and is used up
  /// by the first loop over it.
  std::string pythonType;
  std::shared_ptr<bool> exhausted; ///< an iterator's: looped over already
  /// A String that is markupsafe's Markup (from `safe` or `escape`): adding
  /// a plain string to it escapes that string, as jinja2 does.
  bool markup = false;
  int64_t integer = 0; ///< Bool and Int
  double real = 0;     ///< Float
  std::string text;    ///< String; a Callable's name; Undefined's hint
  std::shared_ptr<std::vector<Value>> items; ///< List
  std::shared_ptr<Dict> map;                 ///< Dict and Namespace
  std::shared_ptr<Callable> function;        ///< Callable

  bool is(Kind k) const { return kind == k; }
  bool isUndefined() const { return kind == Kind::Undefined; }
  /// Bool, Int or Float: Python's numbers.
  bool isNumber() const {
    return kind == Kind::Bool || kind == Kind::Int || kind == Kind::Float;
  }
  double asDouble() const {
    return kind == Kind::Float ? real : double(integer);
  }

  /// Python's truth value (Undefined is false).
  bool truthy() const;
  /// Python's `str(value)`; Undefined prints as nothing.
  std::string str() const;
  /// Python's `repr(value)`.
  std::string repr() const;
  /// The Python type's name, for errors (`str`, `dict`, `NoneType`).
  llvm::StringRef typeName() const;
  /// "an int", "a str": the type name as messages say it.
  std::string typeWithArticle() const;

private:
  static Value make(Kind k) {
    Value v;
    v.kind = k;
    return v;
  }
};

/// What a call passes: positional values, then `name=value` pairs.
struct CallArguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
};

/// Python's `==`.
bool equals(const Value &a, const Value &b);

/// A Python float as `repr` writes it (the shortest string that reads back
/// as the same double: `0.1`, `1.0`, `1e-05`, `inf`).
std::string formatPythonFloat(double d);

/// How `tojson` writes: Python's json.dumps with ensure_ascii=False (as
/// transformers' chat templates call it).
struct JSONStyle {
  std::optional<std::string> indent; ///< none: on one line
  std::string itemSeparator = ", ", keySeparator = ": ";
  bool sortKeys = false;
};
/// `value` as JSON, or an error naming the first value JSON cannot hold.
llvm::Expected<std::string> toJSON(const Value &value, const JSONStyle &style);

/// A JSON document as values, its objects' keys in the document's order.
/// Errors are `id`'s and name `name` (a file), the line and the column.
llvm::Expected<Value> parseJSONValue(llvm::StringRef text, llvm::StringRef name,
                                     ErrorId id);

} // namespace linnet::tmpl

#endif // LINNET_TEMPLATE_VALUE_H
