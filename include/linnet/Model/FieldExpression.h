//===- FieldExpression.h - Integer expressions over named fields -*- C++
//-*-===//
//
// Checkpoint bindings write sizes as expressions over config fields
// (`2 * linear_num_key_heads * linear_key_head_dim + ...`,
// `num_hidden_layers / 4`) and checkpoint names with index expressions
// (`layers.{4 * g + j}`). One evaluator serves binding (Sema) and the
// runtime's names and config checks: `+ - * /`, parentheses, integers and
// names, in exact rational arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_MODEL_FIELDEXPRESSION_H
#define LINNET_MODEL_FIELDEXPRESSION_H

#include "linnet/Model/Rational.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace linnet {

class FieldExpression {
public:
  /// Why an evaluation failed: the expression is malformed, a name has no
  /// value or a value that is not an integer, or the arithmetic overflows.
  enum class Failure { BadExpression, MissingField, NotInteger, Overflow };

  /// What a name is worth: its integer value, or nothing with `failure`
  /// set to MissingField or NotInteger. A lookup that wants every missing
  /// name (not only the first) records it and returns a stand-in value.
  using Lookup =
      llvm::function_ref<std::optional<int64_t>(llvm::StringRef, Failure &)>;

  /// The exact value of `text`, or nothing with `failure` and `problem`
  /// set (for a name: the name).
  std::optional<Rational> evaluate(llvm::StringRef text, Lookup lookup);

  Failure failure = Failure::BadExpression;
  std::string problem;
  /// Every name read, with its value, for messages.
  std::vector<std::pair<std::string, int64_t>> fieldsRead;

private:
  std::optional<Rational> fail(Failure kind, const std::string &message);
  void skipSpaces();
  std::optional<Rational> arithmetic(std::optional<Rational> result,
                                     bool division);
  std::optional<Rational> sum();
  std::optional<Rational> product();
  std::optional<Rational> factor();

  llvm::StringRef text;
  Lookup lookup = nullptr;
  size_t pos = 0;
};

/// The exact value of `text` with names looked up in `fields`; `missing`
/// collects every name `fields` lacks (then the result is an error).
llvm::Expected<Rational>
evaluateRational(llvm::StringRef text,
                 const std::map<std::string, int64_t> &fields,
                 std::vector<std::string> *missing = nullptr);

/// Evaluates `+ - * /`, parentheses, integers and names looked up in
/// `fields`, exactly; `missing` collects names `fields` lacks (then the
/// result is an error).
llvm::Expected<int64_t>
evaluateIntegerExpression(llvm::StringRef text,
                          const std::map<std::string, int64_t> &fields,
                          std::vector<std::string> *missing = nullptr);

} // namespace linnet

#endif // LINNET_MODEL_FIELDEXPRESSION_H
