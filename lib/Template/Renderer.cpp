//===- Renderer.cpp - Running a parsed chat template ----------------------===//
//
// Walks the statements with Jinja's scoping: a for loop's body and a macro's
// body each get a fresh scope per iteration or call (so `set` inside them
// does not leak, which is why templates use namespaces), `if` gets none.
// Undefined values print as nothing and test false, but reading an
// attribute of one, or computing with it, is an error, as with jinja2's
// default Undefined. Hostile templates are bounded: macro calls nest at
// most kMaxCallDepth deep, a render takes at most its step budget
// (statements, loop iterations, loop filter tests; real templates take a few
// per message) and writes at most kMaxOutputBytes.
//
//===----------------------------------------------------------------------===//

#include "linnet/Template/Template.h"

#include "linnet/Template/Ast.h"
#include "linnet/Template/Lexer.h"
#include "linnet/Template/Unicode.h"

#include <cmath>

using namespace linnet;
using namespace linnet::tmpl;

struct Template::Parsed {
  std::string fileName;
  Body body;
};

Template::Template() = default;
Template::~Template() = default;
Template::Template(Template &&) = default;
Template &Template::operator=(Template &&) = default;

llvm::Expected<Template> Template::parse(llvm::StringRef source,
                                         llvm::StringRef fileName) {
  auto tokens = lexTemplate(source, fileName);
  if (!tokens)
    return tokens.takeError();
  auto body = parseTemplateTokens(*tokens, fileName);
  if (!body)
    return body.takeError();
  Template result;
  result.parsed = std::make_unique<Parsed>();
  result.parsed->fileName = fileName.str();
  result.parsed->body = std::move(*body);
  return std::move(result);
}

namespace {

constexpr unsigned kMaxCallDepth = 100;
constexpr size_t kMaxOutputBytes = 64u << 20;

struct Frame {
  Dict variables;
  std::shared_ptr<Frame> parent;
};
using FramePtr = std::shared_ptr<Frame>;

enum class Flow { Normal, Break, Continue };

class Renderer {
public:
  Renderer(llvm::StringRef fileName, uint64_t maxSteps)
      : fileName(fileName), maxSteps(maxSteps) {}

  llvm::Expected<std::string> run(const Body &body, const Dict &variables);

private:
  llvm::StringRef fileName;
  std::string *out = nullptr;
  unsigned callDepth = 0;
  uint64_t steps = 0;
  uint64_t maxSteps;

  llvm::Error failAt(Location location, const llvm::Twine &message) const {
    return templateError(ErrorId::TemplateRenderFailed, fileName, location,
                         message);
  }
  /// A builtin's error with this location; errors already located (from a
  /// macro's body) pass as they are.
  llvm::Error locate(llvm::Error error, Location location) const {
    return llvm::handleErrors(
        std::move(error), [&](const BuiltinError &builtin) -> llvm::Error {
          return templateError(builtin.id, fileName, location, builtin.message);
        });
  }
  llvm::Error undefinedError(const Value &value, Location location) const {
    return failAt(location,
                  value.text.empty() ? "a value is undefined" : value.text);
  }

  llvm::Expected<Flow> renderBody(const Body &body, const FramePtr &frame);
  /// One step of the render's budget; an error once it is spent.
  llvm::Error chargeStep(Location location);
  llvm::Expected<Flow> renderNode(const Node &node, const FramePtr &frame);
  llvm::Expected<Flow> renderFor(const Node &node, const FramePtr &frame);
  llvm::Error renderSet(const Node &node, const FramePtr &frame);
  llvm::Expected<std::string> capture(const Body &body, const FramePtr &frame);
  /// What a `set` or `filter` block's body writes, through its filters.
  llvm::Expected<Value> captureFiltered(const Node &node,
                                        const FramePtr &frame);
  llvm::Expected<Value> applyFilters(const std::vector<ExprPtr> &filters,
                                     Value input, const FramePtr &frame);
  Value defineMacro(const Node &node, const FramePtr &frame);

  llvm::Expected<Value> evaluate(const Expr &expr, const FramePtr &frame);
  /// A filter's or test's `function` applied to `input` with `expr`'s
  /// arguments (operands from 1 on); an unknown one, which jinja2 reports
  /// only when it runs in an `if`, is an error here too.
  template <typename Function>
  auto applyBuiltin(const Expr &expr, const Function *function,
                    llvm::StringRef what, const Value &input,
                    const FramePtr &frame)
      -> decltype(function->apply(input, std::declval<CallArguments &>())) {
    if (!function)
      return failAt(expr.location,
                    "there is no " + what + " named `" + expr.name + "`");
    auto arguments = evaluateArguments(expr, 1, frame);
    if (!arguments)
      return arguments.takeError();
    auto result = function->apply(input, *arguments);
    if (!result)
      return locate(result.takeError(), expr.location);
    return result;
  }
  llvm::Expected<CallArguments> evaluateArguments(const Expr &expr,
                                                  size_t firstOperand,
                                                  const FramePtr &frame);
  llvm::Expected<Value> evaluateCall(const Expr &expr, const FramePtr &frame);
  llvm::Expected<Value> evaluateBinary(const Expr &expr, const Value &left,
                                       const Value &right);
  llvm::Expected<Value> evaluateSlice(const Expr &expr, const FramePtr &frame);
  llvm::Expected<bool> compare(const Expr &expr, llvm::StringRef op,
                               const Value &left, const Value &right);

  Value lookup(llvm::StringRef name, const FramePtr &frame) const {
    for (const Frame *f = frame.get(); f; f = f->parent.get())
      if (const Value *value = f->variables.find(name))
        return *value;
    return Value::undefined("`" + name.str() + "` is undefined");
  }
};

llvm::Expected<std::string> Renderer::run(const Body &body,
                                          const Dict &variables) {
  auto globals = std::make_shared<Frame>();
  globals->variables = globalFunctions();
  for (const auto &[name, value] : variables.entries)
    globals->variables.set(name, value);
  auto top = std::make_shared<Frame>();
  top->parent = globals;
  std::string result;
  out = &result;
  auto flow = renderBody(body, top);
  if (!flow)
    return flow.takeError();
  return result;
}

llvm::Expected<Flow> Renderer::renderBody(const Body &body,
                                          const FramePtr &frame) {
  for (const auto &node : body) {
    auto flow = renderNode(*node, frame);
    if (!flow || *flow != Flow::Normal)
      return flow;
  }
  return Flow::Normal;
}

llvm::Expected<Value> Renderer::captureFiltered(const Node &node,
                                                const FramePtr &frame) {
  auto text = capture(node.body, frame);
  if (!text)
    return text.takeError();
  return applyFilters(node.filters, Value::string(*text), frame);
}

llvm::Expected<std::string> Renderer::capture(const Body &body,
                                              const FramePtr &frame) {
  std::string captured;
  std::string *saved = out;
  out = &captured;
  auto flow = renderBody(body, frame);
  out = saved;
  if (!flow)
    return flow.takeError();
  return captured;
}

llvm::Expected<Value>
Renderer::applyFilters(const std::vector<ExprPtr> &filters, Value input,
                       const FramePtr &frame) {
  for (const auto &filter : filters) {
    auto result = applyBuiltin(*filter, filter->filter, "filter", input, frame);
    if (!result)
      return result.takeError();
    input = std::move(*result);
  }
  return input;
}

llvm::Error Renderer::chargeStep(Location location) {
  if (++steps > maxSteps)
    return failAt(location, "the template takes more than " +
                                llvm::Twine(maxSteps) +
                                " steps (statements, loop iterations and "
                                "loop filters)");
  return llvm::Error::success();
}

llvm::Expected<Flow> Renderer::renderNode(const Node &node,
                                          const FramePtr &frame) {
  if (auto error = chargeStep(node.location))
    return std::move(error);
  if (out->size() > kMaxOutputBytes)
    return failAt(node.location, "the template writes more than " +
                                     llvm::Twine(kMaxOutputBytes >> 20) +
                                     " MiB");
  switch (node.kind) {
  case Node::Kind::Text:
    *out += node.text;
    return Flow::Normal;
  case Node::Kind::Output: {
    auto value = evaluate(*node.expr, frame);
    if (!value)
      return value.takeError();
    *out += value->str();
    return Flow::Normal;
  }
  case Node::Kind::If:
    for (const auto &[condition, body] : node.branches) {
      auto value = evaluate(*condition, frame);
      if (!value)
        return value.takeError();
      if (value->truthy())
        return renderBody(body, frame);
    }
    return renderBody(node.otherwise, frame);
  case Node::Kind::For:
    return renderFor(node, frame);
  case Node::Kind::Set:
    if (auto error = renderSet(node, frame))
      return std::move(error);
    return Flow::Normal;
  case Node::Kind::SetBlock: {
    auto value = captureFiltered(node, frame);
    if (!value)
      return value.takeError();
    frame->variables.set(node.targets[0], *value);
    return Flow::Normal;
  }
  case Node::Kind::Macro:
    frame->variables.set(node.text, defineMacro(node, frame));
    return Flow::Normal;
  case Node::Kind::FilterBlock: {
    auto value = captureFiltered(node, frame);
    if (!value)
      return value.takeError();
    *out += value->str();
    return Flow::Normal;
  }
  case Node::Kind::Generation:
    return renderBody(node.body, frame);
  case Node::Kind::Break:
    return Flow::Break;
  case Node::Kind::Continue:
    return Flow::Continue;
  }
  return Flow::Normal;
}

llvm::Error bindTargets(const std::vector<std::string> &targets,
                        const Value &value, Frame &frame) {
  if (targets.size() == 1) {
    frame.variables.set(targets[0], value);
    return llvm::Error::success();
  }
  auto items = iterate(value);
  if (!items)
    return items.takeError();
  if (items->size() != targets.size())
    return renderError("cannot unpack " + llvm::Twine(items->size()) +
                       " values into " + llvm::Twine(targets.size()) +
                       " names");
  for (size_t i = 0; i < targets.size(); ++i)
    frame.variables.set(targets[i], (*items)[i]);
  return llvm::Error::success();
}

/// The members of a for loop's `loop`, in the order renderFor fills them.
constexpr llvm::StringLiteral kLoopFields[] = {
    "index",  "index0", "revindex", "revindex0", "first",    "last",
    "length", "depth",  "depth0",   "previtem",  "nextitem", "cycle"};

llvm::Expected<Flow> Renderer::renderFor(const Node &node,
                                         const FramePtr &frame) {
  auto iterable = evaluate(*node.expr, frame);
  if (!iterable)
    return iterable.takeError();
  auto all = iterate(*iterable);
  if (!all)
    return locate(all.takeError(), node.expr->location);
  std::vector<Value> items;
  if (node.condition) {
    for (const Value &item : *all) {
      auto scope = std::make_shared<Frame>();
      scope->parent = frame;
      if (auto error = chargeStep(node.location))
        return std::move(error);
      if (auto error = bindTargets(node.targets, item, *scope))
        return locate(std::move(error), node.location);
      auto keep = evaluate(*node.condition, scope);
      if (!keep)
        return keep.takeError();
      if (keep->truthy())
        items.push_back(item);
    }
  } else {
    items = std::move(*all);
  }
  // As jinja2 compiles for-else: the else body runs unless some iteration
  // reached the end of the loop body, so a loop whose every iteration ends
  // in `continue` (or that breaks at once) renders it too.
  bool completedAnIteration = false;
  int64_t length = int64_t(items.size());
  Value loop;
  for (int64_t i = 0; i < length; ++i) {
    if (auto error = chargeStep(node.location))
      return std::move(error);
    auto scope = std::make_shared<Frame>();
    scope->parent = frame;
    if (auto error = bindTargets(node.targets, items[i], *scope))
      return locate(std::move(error), node.location);
    // One loop object, updated in place each iteration, as jinja2's
    // LoopContext is.
    if (i == 0) {
      Dict fields;
      for (llvm::StringRef name : kLoopFields)
        fields.set(name, Value::none());
      loop = Value::dict(std::move(fields));
      // cycle() reads the iteration from the loop object it belongs to.
      std::weak_ptr<Dict> owner = loop.map;
      loop.map->entries[11].second = Value::callable(
          "loop.cycle",
          [owner](CallArguments &arguments) -> llvm::Expected<Value> {
            if (arguments.positional.empty())
              return renderError("loop.cycle() needs at least one value");
            auto fields = owner.lock();
            if (!fields)
              return renderError("loop.cycle() outside its loop");
            return arguments
                .positional[size_t(fields->entries[1].second.integer) %
                            arguments.positional.size()];
          });
    }
    auto &fields = loop.map->entries;
    fields[0].second = Value::fromInt(i + 1);
    fields[1].second = Value::fromInt(i);
    fields[2].second = Value::fromInt(length - i);
    fields[3].second = Value::fromInt(length - i - 1);
    fields[4].second = Value::boolean(i == 0);
    fields[5].second = Value::boolean(i == length - 1);
    fields[6].second = Value::fromInt(length);
    fields[7].second = Value::fromInt(1);
    fields[8].second = Value::fromInt(0);
    fields[9].second =
        i > 0 ? items[i - 1] : Value::undefined("there is no previous item");
    fields[10].second = i + 1 < length
                            ? items[i + 1]
                            : Value::undefined("there is no next item");
    scope->variables.set("loop", loop);
    auto flow = renderBody(node.body, scope);
    if (!flow)
      return flow.takeError();
    if (*flow == Flow::Break)
      break;
    if (*flow == Flow::Normal)
      completedAnIteration = true;
  }
  if (!completedAnIteration && !node.otherwise.empty())
    return renderBody(node.otherwise, frame);
  return Flow::Normal;
}

llvm::Error Renderer::renderSet(const Node &node, const FramePtr &frame) {
  auto value = evaluate(*node.expr, frame);
  if (!value)
    return value.takeError();
  if (node.setsAttribute) {
    Value target = lookup(node.targets[0], frame);
    if (!target.is(Value::Kind::Namespace))
      return failAt(node.location, "cannot set an attribute of `" +
                                       node.targets[0] + "`, " +
                                       target.typeWithArticle() +
                                       "; only a namespace() takes attributes");
    target.map->set(node.targets[1], std::move(*value));
    return llvm::Error::success();
  }
  if (auto error = bindTargets(node.targets, *value, *frame))
    return locate(std::move(error), node.location);
  return llvm::Error::success();
}

Value Renderer::defineMacro(const Node &node, const FramePtr &frame) {
  const Node *macro = &node;
  // The frame is held weakly: the macro is stored in it, and a strong
  // reference would make a cycle that is never freed.
  std::weak_ptr<Frame> weakFrame = frame;
  return Value::callable(
      node.text,
      [this, macro,
       weakFrame](CallArguments &arguments) -> llvm::Expected<Value> {
        FramePtr defining = weakFrame.lock();
        if (callDepth >= kMaxCallDepth)
          return renderError("macro calls nest deeper than " +
                             llvm::Twine(kMaxCallDepth));
        if (arguments.positional.size() > macro->parameters.size())
          return renderError(
              "macro `" + macro->text + "` takes " +
              llvm::Twine(macro->parameters.size()) + " arguments, " +
              llvm::Twine(arguments.positional.size()) + " given");
        auto scope = std::make_shared<Frame>();
        scope->parent = defining;
        for (const auto &keyword : arguments.keywords) {
          bool known = llvm::any_of(macro->parameters, [&](const auto &p) {
            return p.first == keyword.first;
          });
          if (!known)
            return renderError("macro `" + macro->text +
                               "` has no parameter `" + keyword.first + "`");
        }
        for (size_t i = 0; i < macro->parameters.size(); ++i) {
          const auto &[name, defaultValue] = macro->parameters[i];
          const Value *given = nullptr;
          if (i < arguments.positional.size())
            given = &arguments.positional[i];
          for (const auto &[keyword, value] : arguments.keywords)
            if (keyword == name)
              given = &value;
          if (given) {
            scope->variables.set(name, *given);
          } else if (defaultValue) {
            auto value = evaluate(*defaultValue, scope);
            if (!value)
              return value.takeError();
            scope->variables.set(name, *value);
          } else {
            scope->variables.set(
                name, Value::undefined("`" + name + "` is undefined (macro `" +
                                       macro->text + "` was not given it)"));
          }
        }
        ++callDepth;
        auto text = capture(macro->body, scope);
        --callDepth;
        if (!text)
          return text.takeError();
        return Value::string(std::move(*text));
      });
}

llvm::Expected<CallArguments>
Renderer::evaluateArguments(const Expr &expr, size_t firstOperand,
                            const FramePtr &frame) {
  CallArguments arguments;
  for (size_t i = firstOperand; i < expr.operands.size(); ++i) {
    auto value = evaluate(*expr.operands[i], frame);
    if (!value)
      return value.takeError();
    arguments.positional.push_back(std::move(*value));
  }
  for (const auto &[name, argument] : expr.keywords) {
    auto value = evaluate(*argument, frame);
    if (!value)
      return value.takeError();
    arguments.keywords.emplace_back(name, std::move(*value));
  }
  return std::move(arguments);
}

llvm::Expected<Value> Renderer::evaluateCall(const Expr &expr,
                                             const FramePtr &frame) {
  auto callee = evaluate(*expr.operands[0], frame);
  if (!callee)
    return callee.takeError();
  if (callee->isUndefined())
    return undefinedError(*callee, expr.location);
  if (!callee->is(Value::Kind::Callable))
    return failAt(expr.location,
                  callee->typeWithArticle() + " cannot be called");
  auto arguments = evaluateArguments(expr, 1, frame);
  if (!arguments)
    return arguments.takeError();
  auto result = (*callee->function)(*arguments);
  if (!result)
    return locate(result.takeError(), expr.location);
  return result;
}

llvm::Expected<bool> Renderer::compare(const Expr &expr, llvm::StringRef op,
                                       const Value &left, const Value &right) {
  if (op == "==")
    return equals(left, right);
  if (op == "!=")
    return !equals(left, right);
  if (op == "in" || op == "not in") {
    auto found = contains(right, left);
    if (!found)
      return locate(found.takeError(), expr.location);
    return op == "in" ? *found : !*found;
  }
  if (left.isUndefined())
    return undefinedError(left, expr.location);
  if (right.isUndefined())
    return undefinedError(right, expr.location);
  bool swap = op == ">" || op == "<=";
  auto less = swap ? lessThan(right, left) : lessThan(left, right);
  if (!less)
    return locate(less.takeError(), expr.location);
  if (op == "<" || op == ">")
    return *less;
  return !*less; // <= is !(right < left), >= is !(left < right)
}

/// Python's integer arithmetic, refusing results past 64 bits.
llvm::Expected<Value> checkedInteger(bool overflow, int64_t result,
                                     llvm::StringRef op) {
  if (overflow)
    return renderError("`" + op + "` overflows 64-bit integers");
  return Value::fromInt(result);
}

llvm::Expected<Value> Renderer::evaluateBinary(const Expr &expr,
                                               const Value &left,
                                               const Value &right) {
  llvm::StringRef op = expr.name;
  if (left.isUndefined())
    return undefinedError(left, expr.location);
  if (right.isUndefined())
    return undefinedError(right, expr.location);
  auto unsupported = [&]() -> llvm::Error {
    return failAt(expr.location, "unsupported operand types for `" + op +
                                     "`: " + left.typeName() + " and " +
                                     right.typeName());
  };
  bool integers = (left.is(Value::Kind::Int) || left.is(Value::Kind::Bool)) &&
                  (right.is(Value::Kind::Int) || right.is(Value::Kind::Bool));
  if (left.isNumber() && right.isNumber()) {
    int64_t a = left.integer, b = right.integer, r = 0;
    double x = left.asDouble(), y = right.asDouble();
    if (op == "+")
      return integers ? checkedInteger(__builtin_add_overflow(a, b, &r), r, op)
                      : Value::fromFloat(x + y);
    if (op == "-")
      return integers ? checkedInteger(__builtin_sub_overflow(a, b, &r), r, op)
                      : Value::fromFloat(x - y);
    if (op == "*")
      return integers ? checkedInteger(__builtin_mul_overflow(a, b, &r), r, op)
                      : Value::fromFloat(x * y);
    if (op == "/" || op == "//" || op == "%") {
      if (y == 0)
        return failAt(expr.location, "division by zero");
      if (op == "/")
        return Value::fromFloat(x / y);
      if (integers) {
        if (a == INT64_MIN && b == -1)
          return checkedInteger(true, 0, op);
        int64_t quotient = a / b, remainder = a % b;
        if (remainder != 0 && ((remainder < 0) != (b < 0))) {
          --quotient;
          remainder += b;
        }
        return Value::fromInt(op == "//" ? quotient : remainder);
      }
      double remainder = std::fmod(x, y);
      if (remainder != 0 && ((remainder < 0) != (y < 0)))
        remainder += y;
      if (op == "%")
        return Value::fromFloat(remainder);
      return Value::fromFloat(std::floor(x / y));
    }
    if (op == "**") {
      if (integers && b >= 0) {
        int64_t result = 1;
        for (int64_t i = 0; i < b; ++i)
          if (__builtin_mul_overflow(result, a, &result))
            return checkedInteger(true, 0, op);
          else if (result == 0 || result == 1)
            break;
        return Value::fromInt(result);
      }
      return Value::fromFloat(std::pow(x, y));
    }
    return unsupported();
  }
  if (op == "+") {
    if (left.is(Value::Kind::String) && right.is(Value::Kind::String)) {
      if (!left.markup && !right.markup)
        return Value::string(left.text + right.text);
      Value markup =
          Value::string((left.markup ? left.text : escapeHTML(left.text)) +
                        (right.markup ? right.text : escapeHTML(right.text)));
      markup.markup = true;
      return markup;
    }
    if (left.is(Value::Kind::List) && right.is(Value::Kind::List) &&
        left.tuple == right.tuple) {
      std::vector<Value> items = *left.items;
      items.insert(items.end(), right.items->begin(), right.items->end());
      return Value::list(std::move(items), left.tuple);
    }
  }
  if (op == "*") {
    const Value *sequence = &left, *count = &right;
    if (left.is(Value::Kind::Int))
      std::swap(sequence, count);
    if (count->is(Value::Kind::Int) || count->is(Value::Kind::Bool)) {
      int64_t times = std::max<int64_t>(0, count->integer);
      size_t unit = sequence->is(Value::Kind::String) ? sequence->text.size()
                    : sequence->is(Value::Kind::List) ? sequence->items->size()
                                                      : 0;
      if (unit && uint64_t(times) > kMaxOutputBytes / unit)
        return failAt(expr.location, "the repetition would be longer than " +
                                         llvm::Twine(kMaxOutputBytes >> 20) +
                                         " Mi items");
      if (sequence->is(Value::Kind::String)) {
        std::string text;
        for (int64_t i = 0; i < times; ++i)
          text += sequence->text;
        return Value::string(std::move(text));
      }
      if (sequence->is(Value::Kind::List)) {
        std::vector<Value> items;
        for (int64_t i = 0; i < times; ++i)
          items.insert(items.end(), sequence->items->begin(),
                       sequence->items->end());
        return Value::list(std::move(items), sequence->tuple);
      }
    }
  }
  if (op == "%" && left.is(Value::Kind::String))
    return templateError(ErrorId::TemplateUnsupported, fileName, expr.location,
                         "`%` string formatting is Python that linnet does "
                         "not implement");
  return unsupported();
}

/// Python's slice bounds for a sequence of `length` items.
llvm::Expected<std::vector<int64_t>> sliceIndices(const Value &start,
                                                  const Value &stop,
                                                  const Value &stepValue,
                                                  int64_t length) {
  auto integer = [](const Value &v, int64_t &out) -> bool {
    if (v.is(Value::Kind::None) || v.isUndefined())
      return false;
    out = v.integer;
    return true;
  };
  for (const Value *v : {&start, &stop, &stepValue})
    if (!v->is(Value::Kind::None) && !v->isUndefined() &&
        !v->is(Value::Kind::Int) && !v->is(Value::Kind::Bool))
      return renderError("slice indices must be integers or none, not " +
                         v->typeName());
  int64_t step = 1;
  integer(stepValue, step);
  if (step == 0)
    return renderError("slice step cannot be zero");
  int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? length - 1 : length;
  auto clamp = [&](const Value &v, int64_t fallback) {
    int64_t index;
    if (!integer(v, index))
      return fallback;
    if (index < 0)
      index = std::max(index + length, lower);
    else
      index = std::min(index, upper);
    return index;
  };
  int64_t begin = clamp(start, step < 0 ? upper : lower);
  int64_t end = clamp(stop, step < 0 ? lower : upper);
  std::vector<int64_t> indices;
  if (step > 0)
    for (int64_t i = begin; i < end; i += step)
      indices.push_back(i);
  else
    for (int64_t i = begin; i > end; i += step)
      indices.push_back(i);
  return indices;
}

llvm::Expected<Value> Renderer::evaluateSlice(const Expr &expr,
                                              const FramePtr &frame) {
  auto object = evaluate(*expr.operands[0], frame);
  if (!object)
    return object.takeError();
  if (object->isUndefined())
    return undefinedError(*object, expr.location);
  Value bounds[3] = {Value::none(), Value::none(), Value::none()};
  for (int i = 0; i < 3; ++i)
    if (expr.operands[i + 1]) {
      auto value = evaluate(*expr.operands[i + 1], frame);
      if (!value)
        return value.takeError();
      bounds[i] = std::move(*value);
    }
  if (object->is(Value::Kind::String)) {
    std::vector<size_t> offsets = codePointOffsets(object->text);
    auto indices = sliceIndices(bounds[0], bounds[1], bounds[2],
                                int64_t(offsets.size() - 1));
    if (!indices)
      return locate(indices.takeError(), expr.location);
    std::string text;
    for (int64_t i : *indices)
      text.append(object->text, offsets[i], offsets[i + 1] - offsets[i]);
    return Value::string(std::move(text));
  }
  if (object->is(Value::Kind::List)) {
    auto indices = sliceIndices(bounds[0], bounds[1], bounds[2],
                                int64_t(object->items->size()));
    if (!indices)
      return locate(indices.takeError(), expr.location);
    std::vector<Value> items;
    for (int64_t i : *indices)
      items.push_back((*object->items)[i]);
    return Value::list(std::move(items), object->tuple);
  }
  return failAt(expr.location, object->typeWithArticle() + " cannot be sliced");
}

llvm::Expected<Value> Renderer::evaluate(const Expr &expr,
                                         const FramePtr &frame) {
  switch (expr.kind) {
  case Expr::Kind::Literal:
    return expr.literal;
  case Expr::Kind::Name:
    return lookup(expr.name, frame);
  case Expr::Kind::Attribute: {
    auto object = evaluate(*expr.operands[0], frame);
    if (!object)
      return object.takeError();
    if (object->isUndefined())
      return undefinedError(*object, expr.location);
    auto value = getAttribute(*object, expr.name);
    if (!value)
      return locate(value.takeError(), expr.location);
    return value;
  }
  case Expr::Kind::Item: {
    auto object = evaluate(*expr.operands[0], frame);
    if (!object)
      return object.takeError();
    if (object->isUndefined())
      return undefinedError(*object, expr.location);
    auto key = evaluate(*expr.operands[1], frame);
    if (!key)
      return key.takeError();
    auto value = getItem(*object, *key);
    if (!value)
      return locate(value.takeError(), expr.location);
    return value;
  }
  case Expr::Kind::Slice:
    return evaluateSlice(expr, frame);
  case Expr::Kind::Call:
    return evaluateCall(expr, frame);
  case Expr::Kind::Filter: {
    auto input = evaluate(*expr.operands[0], frame);
    if (!input)
      return input.takeError();
    return applyBuiltin(expr, expr.filter, "filter", *input, frame);
  }
  case Expr::Kind::Test: {
    auto input = evaluate(*expr.operands[0], frame);
    if (!input)
      return input.takeError();
    auto result = applyBuiltin(expr, expr.test, "test", *input, frame);
    if (!result)
      return result.takeError();
    return Value::boolean(*result != expr.negated);
  }
  case Expr::Kind::Unary: {
    auto operand = evaluate(*expr.operands[0], frame);
    if (!operand)
      return operand.takeError();
    if (operand->isUndefined())
      return undefinedError(*operand, expr.location);
    if (!operand->isNumber())
      return failAt(expr.location, "bad operand type for unary `" + expr.name +
                                       "`: " + operand->typeName());
    if (expr.name == "+")
      return operand->is(Value::Kind::Bool) ? Value::fromInt(operand->integer)
                                            : *operand;
    if (operand->is(Value::Kind::Float))
      return Value::fromFloat(-operand->real);
    if (operand->integer == INT64_MIN)
      return failAt(expr.location, "`-` overflows 64-bit integers");
    return Value::fromInt(-operand->integer);
  }
  case Expr::Kind::Binary: {
    auto left = evaluate(*expr.operands[0], frame);
    if (!left)
      return left.takeError();
    auto right = evaluate(*expr.operands[1], frame);
    if (!right)
      return right.takeError();
    auto result = evaluateBinary(expr, *left, *right);
    if (!result)
      return locate(result.takeError(), expr.location);
    return result;
  }
  case Expr::Kind::Compare: {
    auto left = evaluate(*expr.operands[0], frame);
    if (!left)
      return left.takeError();
    for (size_t i = 0; i < expr.comparisons.size(); ++i) {
      auto right = evaluate(*expr.operands[i + 1], frame);
      if (!right)
        return right.takeError();
      auto holds = compare(expr, expr.comparisons[i], *left, *right);
      if (!holds)
        return holds.takeError();
      if (!*holds)
        return Value::boolean(false);
      left = std::move(right);
    }
    return Value::boolean(true);
  }
  case Expr::Kind::And:
  case Expr::Kind::Or: {
    auto left = evaluate(*expr.operands[0], frame);
    if (!left)
      return left.takeError();
    if (left->truthy() == (expr.kind == Expr::Kind::Or))
      return left;
    return evaluate(*expr.operands[1], frame);
  }
  case Expr::Kind::Not: {
    auto operand = evaluate(*expr.operands[0], frame);
    if (!operand)
      return operand.takeError();
    return Value::boolean(!operand->truthy());
  }
  case Expr::Kind::Conditional: {
    auto condition = evaluate(*expr.operands[1], frame);
    if (!condition)
      return condition.takeError();
    if (condition->truthy())
      return evaluate(*expr.operands[0], frame);
    if (expr.operands[2])
      return evaluate(*expr.operands[2], frame);
    return Value::undefined("the conditional expression has no else");
  }
  case Expr::Kind::List:
  case Expr::Kind::Tuple: {
    std::vector<Value> items;
    for (const auto &operand : expr.operands) {
      auto value = evaluate(*operand, frame);
      if (!value)
        return value.takeError();
      items.push_back(std::move(*value));
    }
    return Value::list(std::move(items), expr.kind == Expr::Kind::Tuple);
  }
  case Expr::Kind::Dict: {
    Dict dict;
    for (size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
      auto key = evaluate(*expr.operands[i], frame);
      if (!key)
        return key.takeError();
      if (!key->is(Value::Kind::String))
        return templateError(ErrorId::TemplateUnsupported, fileName,
                             expr.operands[i]->location,
                             "a dict key that is " + key->typeWithArticle() +
                                 "; linnet's dicts take string keys");
      auto value = evaluate(*expr.operands[i + 1], frame);
      if (!value)
        return value.takeError();
      dict.set(key->text, std::move(*value));
    }
    return Value::dict(std::move(dict));
  }
  case Expr::Kind::Concat: {
    std::string text;
    for (const auto &operand : expr.operands) {
      auto value = evaluate(*operand, frame);
      if (!value)
        return value.takeError();
      text += value->str();
    }
    return Value::string(std::move(text));
  }
  }
  return Value();
}

} // namespace

llvm::Expected<std::string> Template::render(const Dict &variables,
                                             uint64_t maxSteps) const {
  return Renderer(parsed->fileName, maxSteps).run(parsed->body, variables);
}
