//===- Parser.cpp - Jinja statements and expressions from tokens ----------===//
//
// Recursive descent with jinja2 3.1's grammar and precedence (conditional,
// or, and, not, comparisons, + -, ~, * / // %, **, unary, then postfix
// `.x` `[i]` `(...)`, and filters and tests binding tighter than any binary
// operator). Filter and test names are looked up here, as Jinja does when it
// compiles a template, so a misspelt one is an error before any render.
//
//===----------------------------------------------------------------------===//

#include "linnet/Template/Ast.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>

using namespace linnet;
using namespace linnet::tmpl;

namespace {

/// Deeper nesting than this is refused: recursion per level would otherwise
/// let a hostile template overflow the stack.
constexpr unsigned kMaxNesting = 200;

/// Jinja's tags that linnet does not implement (refused by name).
constexpr llvm::StringLiteral kUnsupportedTags[] = {
    "raw",  "include", "import", "from",       "extends", "block",
    "call", "with",    "do",     "autoescape", "trans",   "pluralize"};

class TemplateParser {
public:
  TemplateParser(llvm::ArrayRef<Token> tokens, llvm::StringRef fileName)
      : tokens(tokens), fileName(fileName) {}

  llvm::Expected<Body> parseAll();

private:
  llvm::ArrayRef<Token> tokens;
  llvm::StringRef fileName;
  size_t index = 0;
  unsigned nesting = 0;
  /// Inside an `if` or a conditional expression, where jinja2 lets a filter
  /// or test that does not exist pass until a render reaches it.
  bool soft = false;
  /// Filters and tests that do not exist, outside soft contexts: the first
  /// is the template's error once it is parsed.
  std::vector<std::pair<Location, std::string>> unknownNames;

  void noteUnknown(Location location, std::string what) {
    if (!soft)
      unknownNames.emplace_back(location, std::move(what));
  }
  struct SoftScope {
    TemplateParser &parser;
    bool saved;
    SoftScope(TemplateParser &parser, bool value)
        : parser(parser), saved(parser.soft) {
      parser.soft = value;
    }
    ~SoftScope() { parser.soft = saved; }
  };

  const Token &current() const { return tokens[index]; }
  const Token &peek(size_t ahead = 1) const {
    return tokens[std::min(index + ahead, tokens.size() - 1)];
  }
  void advance() {
    if (current().kind != Token::Kind::End)
      ++index;
  }
  bool skipOperator(llvm::StringRef op) {
    if (!current().isOperator(op))
      return false;
    advance();
    return true;
  }
  bool skipName(llvm::StringRef name) {
    if (!current().isName(name))
      return false;
    advance();
    return true;
  }

  std::string describe(const Token &token) const {
    switch (token.kind) {
    case Token::Kind::Text:
      return "text";
    case Token::Kind::VariableBegin:
      return "`{{`";
    case Token::Kind::VariableEnd:
      return "`}}`";
    case Token::Kind::BlockBegin:
      return "`{%`";
    case Token::Kind::BlockEnd:
      return "`%}`";
    case Token::Kind::End:
      return "the end of the template";
    case Token::Kind::String:
      return "a string";
    default:
      return "`" + token.text + "`";
    }
  }
  llvm::Error error(const Token &token, const llvm::Twine &message) const {
    return templateError(ErrorId::TemplateMalformed, fileName, token.location,
                         message);
  }
  llvm::Error expected(llvm::StringRef what) const {
    return error(current(),
                 "expected " + what + ", found " + describe(current()));
  }
  llvm::Error expectOperator(llvm::StringRef op) {
    if (skipOperator(op))
      return llvm::Error::success();
    return expected(("`" + op + "`").str());
  }
  llvm::Error expectBlockEnd() {
    if (current().kind == Token::Kind::BlockEnd) {
      advance();
      return llvm::Error::success();
    }
    return expected("`%}`");
  }
  llvm::Expected<std::string> expectName(llvm::StringRef what) {
    if (current().kind != Token::Kind::Name)
      return expected(what);
    std::string name = current().text;
    advance();
    return name;
  }

  struct Nested {
    TemplateParser &parser;
    explicit Nested(TemplateParser &parser) : parser(parser) {
      ++parser.nesting;
    }
    ~Nested() { --parser.nesting; }
  };
  llvm::Error checkNesting() const {
    if (nesting <= kMaxNesting)
      return llvm::Error::success();
    return templateError(ErrorId::TemplateUnsupported, fileName,
                         current().location,
                         "the template nests deeper than " +
                             llvm::Twine(kMaxNesting) + " levels");
  }

  // Statements.
  /// After `{% else`: its `%}`, then the body up to `{% closing`.
  llvm::Error parseOtherwise(Node &node, llvm::StringRef closing,
                             std::string &endTag);
  llvm::Expected<Body> parseBody(llvm::ArrayRef<llvm::StringRef> endTags,
                                 std::string &endTag);
  llvm::Expected<std::unique_ptr<Node>> parseStatement();
  llvm::Error parseIf(Node &node);
  llvm::Error parseFor(Node &node);
  llvm::Error parseSet(Node &node);
  llvm::Error parseMacro(Node &node);
  llvm::Error parseFilterChain(std::vector<ExprPtr> &filters);
  llvm::Error parseEnd(Node &node, llvm::StringRef endTag);

  // Expressions.
  ExprPtr make(Expr::Kind kind, const Token &at) {
    auto expr = std::make_unique<Expr>();
    expr->kind = kind;
    expr->location = at.location;
    return expr;
  }
  llvm::Expected<ExprPtr> parseExpression(bool withConditional = true);
  llvm::Expected<ExprPtr> parseTuple(bool withConditional = true,
                                     bool explicitParentheses = false);
  llvm::Expected<ExprPtr> parseConditional();
  /// `operand (op operand)*` for one of `operators`, grouped from the left.
  llvm::Expected<ExprPtr> parseLeftAssociative(
      Expr::Kind kind, llvm::ArrayRef<llvm::StringRef> operators,
      llvm::function_ref<llvm::Expected<ExprPtr>()> parseOperand);
  llvm::Expected<ExprPtr> parseOr();
  llvm::Expected<ExprPtr> parseAnd();
  llvm::Expected<ExprPtr> parseNot();
  llvm::Expected<ExprPtr> parseCompare();
  llvm::Expected<ExprPtr> parseSum();
  llvm::Expected<ExprPtr> parseConcat();
  llvm::Expected<ExprPtr> parseProduct();
  llvm::Expected<ExprPtr> parsePower();
  llvm::Expected<ExprPtr> parseUnary(bool withFilter);
  llvm::Expected<ExprPtr> parsePrimary();
  llvm::Expected<ExprPtr> parsePostfix(ExprPtr node);
  llvm::Expected<ExprPtr> parseFilterAndTest(ExprPtr node);
  llvm::Expected<ExprPtr> parseFilter(ExprPtr input);
  llvm::Error parseCallArguments(Expr &call);
  llvm::Expected<ExprPtr> parseSubscript(ExprPtr object);
};

bool isTagEnd(const Token &token) {
  return token.kind == Token::Kind::BlockEnd ||
         token.kind == Token::Kind::VariableEnd;
}

llvm::Expected<Body>
TemplateParser::parseBody(llvm::ArrayRef<llvm::StringRef> endTags,
                          std::string &endTag) {
  Nested nested(*this);
  if (auto err = checkNesting())
    return std::move(err);
  Body body;
  while (true) {
    const Token &token = current();
    switch (token.kind) {
    case Token::Kind::End:
      if (endTags.empty())
        return std::move(body);
      return error(token,
                   "the template ends before `{% " + endTags.back() + " %}`");
    case Token::Kind::Text: {
      auto node = std::make_unique<Node>();
      node->kind = Node::Kind::Text;
      node->location = token.location;
      node->text = token.text;
      body.push_back(std::move(node));
      advance();
      break;
    }
    case Token::Kind::VariableBegin: {
      advance();
      auto node = std::make_unique<Node>();
      node->kind = Node::Kind::Output;
      node->location = token.location;
      auto expr = parseTuple();
      if (!expr)
        return expr.takeError();
      node->expr = std::move(*expr);
      if (current().kind != Token::Kind::VariableEnd)
        return expected("`}}`");
      advance();
      body.push_back(std::move(node));
      break;
    }
    case Token::Kind::BlockBegin: {
      const Token &tag = peek();
      if (tag.kind == Token::Kind::Name &&
          llvm::is_contained(endTags, tag.text)) {
        endTag = tag.text;
        advance();
        advance();
        return std::move(body);
      }
      auto node = parseStatement();
      if (!node)
        return node.takeError();
      body.push_back(std::move(*node));
      break;
    }
    default:
      return expected("text or a tag");
    }
  }
}

llvm::Expected<std::unique_ptr<Node>> TemplateParser::parseStatement() {
  advance(); // {%
  const Token &tag = current();
  auto node = std::make_unique<Node>();
  node->location = tag.location;
  if (tag.kind != Token::Kind::Name)
    return expected("a tag name");
  std::string name = tag.text;
  if (llvm::is_contained(kUnsupportedTags, name))
    return templateError(ErrorId::TemplateUnsupported, fileName, tag.location,
                         "`{% " + name +
                             " %}` is Jinja that linnet does not "
                             "implement");
  advance();
  llvm::Error err = llvm::Error::success();
  if (name == "if") {
    node->kind = Node::Kind::If;
    SoftScope scope(*this, true);
    err = parseIf(*node);
  } else if (name == "for") {
    node->kind = Node::Kind::For;
    err = parseFor(*node);
  } else if (name == "set") {
    err = parseSet(*node);
  } else if (name == "macro") {
    node->kind = Node::Kind::Macro;
    SoftScope scope(*this, false);
    err = parseMacro(*node);
  } else if (name == "filter") {
    node->kind = Node::Kind::FilterBlock;
    if (!(err = parseFilterChain(node->filters)) && !(err = expectBlockEnd()))
      err = parseEnd(*node, "endfilter");
  } else if (name == "generation") {
    node->kind = Node::Kind::Generation;
    if (!(err = expectBlockEnd()))
      err = parseEnd(*node, "endgeneration");
  } else if (name == "break" || name == "continue") {
    node->kind = name == "break" ? Node::Kind::Break : Node::Kind::Continue;
    err = expectBlockEnd();
  } else if (name == "elif" || name == "else" || name.rfind("end", 0) == 0) {
    return error(tag, "`{% " + name +
                          " %}` closes or continues no open "
                          "block here");
  } else {
    return error(tag, "`{% " + name + " %}` is not a Jinja tag");
  }
  if (err)
    return std::move(err);
  return std::move(node);
}

llvm::Error TemplateParser::parseEnd(Node &node, llvm::StringRef endTag) {
  std::string found;
  auto body = parseBody({endTag}, found);
  if (!body)
    return body.takeError();
  node.body = std::move(*body);
  return expectBlockEnd();
}

llvm::Error TemplateParser::parseIf(Node &node) {
  while (true) {
    auto condition = parseTuple(/*withConditional=*/false);
    if (!condition)
      return condition.takeError();
    if (auto err = expectBlockEnd())
      return err;
    std::string endTag;
    auto body = parseBody({"elif", "else", "endif"}, endTag);
    if (!body)
      return body.takeError();
    node.branches.emplace_back(std::move(*condition), std::move(*body));
    if (endTag == "elif")
      continue;
    if (endTag == "else")
      if (auto err = parseOtherwise(node, "endif", endTag))
        return err;
    return expectBlockEnd();
  }
}

llvm::Error TemplateParser::parseOtherwise(Node &node, llvm::StringRef closing,
                                           std::string &endTag) {
  if (auto err = expectBlockEnd())
    return err;
  auto otherwise = parseBody({closing}, endTag);
  if (!otherwise)
    return otherwise.takeError();
  node.otherwise = std::move(*otherwise);
  return llvm::Error::success();
}

llvm::Error TemplateParser::parseFor(Node &node) {
  bool parenthesized = skipOperator("(");
  do {
    auto target = expectName("a loop variable");
    if (!target)
      return target.takeError();
    node.targets.push_back(*target);
  } while (skipOperator(","));
  if (parenthesized)
    if (auto err = expectOperator(")"))
      return err;
  if (!skipName("in"))
    return expected("`in`");
  auto iterable = parseTuple(/*withConditional=*/false);
  if (!iterable)
    return iterable.takeError();
  node.expr = std::move(*iterable);
  if (skipName("if")) {
    auto condition = parseExpression();
    if (!condition)
      return condition.takeError();
    node.condition = std::move(*condition);
  }
  if (current().isName("recursive"))
    return templateError(ErrorId::TemplateUnsupported, fileName,
                         current().location,
                         "recursive loops are Jinja that linnet does not "
                         "implement");
  if (auto err = expectBlockEnd())
    return err;
  std::string endTag;
  SoftScope scope(*this, false);
  auto body = parseBody({"else", "endfor"}, endTag);
  if (!body)
    return body.takeError();
  node.body = std::move(*body);
  if (endTag == "else")
    if (auto err = parseOtherwise(node, "endfor", endTag))
      return err;
  return expectBlockEnd();
}

llvm::Error TemplateParser::parseSet(Node &node) {
  node.kind = Node::Kind::Set;
  auto first = expectName("a variable to set");
  if (!first)
    return first.takeError();
  node.targets.push_back(*first);
  if (skipOperator(".")) {
    auto attribute = expectName("an attribute name");
    if (!attribute)
      return attribute.takeError();
    node.targets.push_back(*attribute);
    node.setsAttribute = true;
  } else {
    while (skipOperator(",")) {
      auto next = expectName("a variable to set");
      if (!next)
        return next.takeError();
      node.targets.push_back(*next);
    }
  }
  if (skipOperator("=")) {
    auto value = parseTuple();
    if (!value)
      return value.takeError();
    node.expr = std::move(*value);
    return expectBlockEnd();
  }
  if (node.targets.size() != 1 || node.setsAttribute)
    return expected("`=`");
  node.kind = Node::Kind::SetBlock;
  if (skipOperator("|"))
    if (auto err = parseFilterChain(node.filters))
      return err;
  if (auto err = expectBlockEnd())
    return err;
  return parseEnd(node, "endset");
}

llvm::Error TemplateParser::parseMacro(Node &node) {
  auto name = expectName("the macro's name");
  if (!name)
    return name.takeError();
  node.text = *name;
  if (auto err = expectOperator("("))
    return err;
  while (!skipOperator(")")) {
    if (!node.parameters.empty())
      if (auto err = expectOperator(","))
        return err;
    auto parameter = expectName("a parameter name");
    if (!parameter)
      return parameter.takeError();
    ExprPtr defaultValue;
    if (skipOperator("=")) {
      auto value = parseExpression();
      if (!value)
        return value.takeError();
      defaultValue = std::move(*value);
    }
    node.parameters.emplace_back(*parameter, std::move(defaultValue));
  }
  if (auto err = expectBlockEnd())
    return err;
  return parseEnd(node, "endmacro");
}

llvm::Error TemplateParser::parseFilterChain(std::vector<ExprPtr> &filters) {
  bool first = true;
  while (first || skipOperator("|")) {
    first = false;
    auto filter = parseFilter(nullptr);
    if (!filter)
      return filter.takeError();
    filters.push_back(std::move(*filter));
  }
  return llvm::Error::success();
}

llvm::Expected<ExprPtr> TemplateParser::parseExpression(bool withConditional) {
  Nested nested(*this);
  if (auto err = checkNesting())
    return std::move(err);
  return withConditional ? parseConditional() : parseOr();
}

llvm::Expected<ExprPtr> TemplateParser::parseTuple(bool withConditional,
                                                   bool explicitParentheses) {
  const Token &start = current();
  std::vector<ExprPtr> items;
  bool sawComma = false;
  while (true) {
    if (!items.empty()) {
      if (!skipOperator(","))
        break;
      sawComma = true;
    }
    if (isTagEnd(current()) ||
        (explicitParentheses && current().isOperator(")")))
      break;
    auto item = parseExpression(withConditional);
    if (!item)
      return item.takeError();
    items.push_back(std::move(*item));
  }
  if (items.size() == 1 && !sawComma)
    return std::move(items[0]);
  if (items.empty() && !explicitParentheses)
    return expected("an expression");
  auto tuple = make(Expr::Kind::Tuple, start);
  tuple->operands = std::move(items);
  return std::move(tuple);
}

llvm::Expected<ExprPtr> TemplateParser::parseConditional() {
  size_t unknownBefore = unknownNames.size();
  auto then = parseOr();
  if (!then)
    return then.takeError();
  ExprPtr node = std::move(*then);
  while (current().isName("if")) {
    const Token &at = current();
    advance();
    // The part before `if` was soft too.
    unknownNames.resize(std::min(unknownNames.size(), unknownBefore));
    SoftScope scope(*this, true);
    auto condition = parseOr();
    if (!condition)
      return condition.takeError();
    ExprPtr otherwise;
    if (skipName("else")) {
      auto value = parseConditional();
      if (!value)
        return value.takeError();
      otherwise = std::move(*value);
    }
    auto conditional = make(Expr::Kind::Conditional, at);
    conditional->operands.push_back(std::move(node));
    conditional->operands.push_back(std::move(*condition));
    conditional->operands.push_back(std::move(otherwise));
    node = std::move(conditional);
  }
  return std::move(node);
}

llvm::Expected<ExprPtr> TemplateParser::parseLeftAssociative(
    Expr::Kind kind, llvm::ArrayRef<llvm::StringRef> operators,
    llvm::function_ref<llvm::Expected<ExprPtr>()> parseOperand) {
  auto isOperator = [&](const Token &token) {
    return llvm::any_of(operators, [&](llvm::StringRef op) {
      return token.isName(op) || token.isOperator(op);
    });
  };
  auto left = parseOperand();
  if (!left)
    return left.takeError();
  ExprPtr node = std::move(*left);
  while (isOperator(current())) {
    auto combined = make(kind, current());
    combined->name = current().text;
    advance();
    auto right = parseOperand();
    if (!right)
      return right.takeError();
    combined->operands.push_back(std::move(node));
    combined->operands.push_back(std::move(*right));
    node = std::move(combined);
  }
  return std::move(node);
}

llvm::Expected<ExprPtr> TemplateParser::parseOr() {
  return parseLeftAssociative(Expr::Kind::Or, {"or"},
                              [this] { return parseAnd(); });
}

llvm::Expected<ExprPtr> TemplateParser::parseAnd() {
  return parseLeftAssociative(Expr::Kind::And, {"and"},
                              [this] { return parseNot(); });
}

llvm::Expected<ExprPtr> TemplateParser::parseNot() {
  if (current().isName("not")) {
    auto negation = make(Expr::Kind::Not, current());
    advance();
    Nested nested(*this);
    if (auto err = checkNesting())
      return std::move(err);
    auto operand = parseNot();
    if (!operand)
      return operand.takeError();
    negation->operands.push_back(std::move(*operand));
    return std::move(negation);
  }
  return parseCompare();
}

llvm::Expected<ExprPtr> TemplateParser::parseCompare() {
  const Token &start = current();
  auto first = parseSum();
  if (!first)
    return first.takeError();
  ExprPtr compare = make(Expr::Kind::Compare, start);
  compare->operands.push_back(std::move(*first));
  while (true) {
    std::string op;
    const Token &token = current();
    if (token.kind == Token::Kind::Operator &&
        (token.text == "==" || token.text == "!=" || token.text == "<" ||
         token.text == ">" || token.text == "<=" || token.text == ">=")) {
      op = token.text;
      advance();
    } else if (token.isName("in")) {
      op = "in";
      advance();
    } else if (token.isName("not") && peek().isName("in")) {
      op = "not in";
      advance();
      advance();
    } else {
      break;
    }
    auto next = parseSum();
    if (!next)
      return next.takeError();
    compare->comparisons.push_back(op);
    compare->operands.push_back(std::move(*next));
  }
  if (compare->comparisons.empty())
    return std::move(compare->operands[0]);
  return std::move(compare);
}

llvm::Expected<ExprPtr> TemplateParser::parseSum() {
  return parseLeftAssociative(Expr::Kind::Binary, {"+", "-"},
                              [this] { return parseConcat(); });
}

llvm::Expected<ExprPtr> TemplateParser::parseConcat() {
  const Token &start = current();
  auto first = parseProduct();
  if (!first)
    return first.takeError();
  if (!current().isOperator("~"))
    return std::move(*first);
  auto concat = make(Expr::Kind::Concat, start);
  concat->operands.push_back(std::move(*first));
  while (skipOperator("~")) {
    auto next = parseProduct();
    if (!next)
      return next.takeError();
    concat->operands.push_back(std::move(*next));
  }
  return std::move(concat);
}

llvm::Expected<ExprPtr> TemplateParser::parseProduct() {
  return parseLeftAssociative(Expr::Kind::Binary, {"*", "/", "//", "%"},
                              [this] { return parsePower(); });
}

llvm::Expected<ExprPtr> TemplateParser::parsePower() {
  return parseLeftAssociative(Expr::Kind::Binary, {"**"}, [this] {
    return parseUnary(/*withFilter=*/true);
  });
}

llvm::Expected<ExprPtr> TemplateParser::parseUnary(bool withFilter) {
  Nested nested(*this);
  if (auto err = checkNesting())
    return std::move(err);
  ExprPtr node;
  if (current().isOperator("-") || current().isOperator("+")) {
    node = make(Expr::Kind::Unary, current());
    node->name = current().text;
    advance();
    auto operand = parseUnary(/*withFilter=*/false);
    if (!operand)
      return operand.takeError();
    node->operands.push_back(std::move(*operand));
  } else {
    auto primary = parsePrimary();
    if (!primary)
      return primary.takeError();
    node = std::move(*primary);
  }
  auto postfix = parsePostfix(std::move(node));
  if (!postfix || !withFilter)
    return postfix;
  return parseFilterAndTest(std::move(*postfix));
}

llvm::Expected<ExprPtr> TemplateParser::parsePrimary() {
  const Token &token = current();
  switch (token.kind) {
  case Token::Kind::Name: {
    auto node = make(Expr::Kind::Literal, token);
    if (token.text == "true" || token.text == "True")
      node->literal = Value::boolean(true);
    else if (token.text == "false" || token.text == "False")
      node->literal = Value::boolean(false);
    else if (token.text == "none" || token.text == "None")
      node->literal = Value::none();
    else {
      node->kind = Expr::Kind::Name;
      node->name = token.text;
    }
    advance();
    return std::move(node);
  }
  case Token::Kind::String: {
    auto node = make(Expr::Kind::Literal, token);
    std::string text;
    while (current().kind == Token::Kind::String) {
      text += current().text;
      advance();
    }
    node->literal = Value::string(std::move(text));
    return std::move(node);
  }
  case Token::Kind::Integer: {
    auto node = make(Expr::Kind::Literal, token);
    int64_t value;
    if (llvm::StringRef(token.text).getAsInteger(10, value))
      return templateError(ErrorId::TemplateUnsupported, fileName,
                           token.location,
                           "`" + token.text + "` does not fit in 64 bits");
    node->literal = Value::fromInt(value);
    advance();
    return std::move(node);
  }
  case Token::Kind::Float: {
    auto node = make(Expr::Kind::Literal, token);
    node->literal = Value::fromFloat(std::strtod(token.text.c_str(), nullptr));
    advance();
    return std::move(node);
  }
  case Token::Kind::Operator:
    if (token.text == "(") {
      advance();
      auto inner = parseTuple(/*withConditional=*/true,
                              /*explicitParentheses=*/true);
      if (!inner)
        return inner.takeError();
      if (auto err = expectOperator(")"))
        return std::move(err);
      return inner;
    }
    if (token.text == "[" || token.text == "{") {
      bool isList = token.text == "[";
      auto node = make(isList ? Expr::Kind::List : Expr::Kind::Dict, token);
      advance();
      llvm::StringRef close = isList ? "]" : "}";
      while (!skipOperator(close)) {
        if (!node->operands.empty())
          if (auto err = expectOperator(","))
            return std::move(err);
        if (skipOperator(close))
          break;
        auto item = parseExpression();
        if (!item)
          return item.takeError();
        node->operands.push_back(std::move(*item));
        if (!isList) {
          if (auto err = expectOperator(":"))
            return std::move(err);
          auto value = parseExpression();
          if (!value)
            return value.takeError();
          node->operands.push_back(std::move(*value));
        }
      }
      return std::move(node);
    }
    [[fallthrough]];
  default:
    return expected("an expression");
  }
}

llvm::Expected<ExprPtr> TemplateParser::parsePostfix(ExprPtr node) {
  while (true) {
    if (current().isOperator(".") || current().isOperator("[")) {
      auto next = parseSubscript(std::move(node));
      if (!next)
        return next.takeError();
      node = std::move(*next);
    } else if (current().isOperator("(")) {
      auto call = make(Expr::Kind::Call, current());
      call->operands.push_back(std::move(node));
      if (auto err = parseCallArguments(*call))
        return std::move(err);
      node = std::move(call);
    } else {
      return std::move(node);
    }
  }
}

llvm::Expected<ExprPtr> TemplateParser::parseSubscript(ExprPtr object) {
  const Token &at = current();
  if (skipOperator(".")) {
    if (current().kind == Token::Kind::Integer) {
      auto item = make(Expr::Kind::Item, at);
      auto index = make(Expr::Kind::Literal, current());
      int64_t value = 0;
      llvm::StringRef(current().text).getAsInteger(10, value);
      index->literal = Value::fromInt(value);
      advance();
      item->operands.push_back(std::move(object));
      item->operands.push_back(std::move(index));
      return std::move(item);
    }
    auto name = expectName("an attribute name");
    if (!name)
      return name.takeError();
    auto attribute = make(Expr::Kind::Attribute, at);
    attribute->name = *name;
    attribute->operands.push_back(std::move(object));
    return std::move(attribute);
  }
  advance(); // [
  std::array<ExprPtr, 3> bounds;
  unsigned colons = 0;
  while (!current().isOperator("]")) {
    if (skipOperator(":")) {
      if (++colons > 2)
        return expected("`]`");
      continue;
    }
    if (bounds[colons])
      return expected("`:` or `]`");
    auto bound = parseExpression();
    if (!bound)
      return bound.takeError();
    bounds[colons] = std::move(*bound);
  }
  advance(); // ]
  if (colons == 0) {
    if (!bounds[0])
      return error(at, "`[]` needs an index");
    auto item = make(Expr::Kind::Item, at);
    item->operands.push_back(std::move(object));
    item->operands.push_back(std::move(bounds[0]));
    return std::move(item);
  }
  auto slice = make(Expr::Kind::Slice, at);
  slice->operands.push_back(std::move(object));
  for (auto &bound : bounds)
    slice->operands.push_back(std::move(bound));
  return std::move(slice);
}

llvm::Error TemplateParser::parseCallArguments(Expr &call) {
  advance(); // (
  bool first = true;
  while (!skipOperator(")")) {
    if (!first)
      if (auto err = expectOperator(","))
        return err;
    first = false;
    if (skipOperator(")"))
      break;
    if (current().isOperator("*") || current().isOperator("**"))
      return templateError(ErrorId::TemplateUnsupported, fileName,
                           current().location,
                           "`*args` and `**kwargs` in calls are Jinja that "
                           "linnet does not implement");
    if (current().kind == Token::Kind::Name && peek().isOperator("=")) {
      std::string name = current().text;
      advance();
      advance();
      auto value = parseExpression();
      if (!value)
        return value.takeError();
      call.keywords.emplace_back(name, std::move(*value));
      continue;
    }
    if (!call.keywords.empty())
      return error(current(), "a positional argument follows a keyword one");
    auto value = parseExpression();
    if (!value)
      return value.takeError();
    call.operands.push_back(std::move(*value));
  }
  return llvm::Error::success();
}

llvm::Expected<ExprPtr> TemplateParser::parseFilter(ExprPtr input) {
  const Token &at = current();
  auto name = expectName("a filter name");
  if (!name)
    return name.takeError();
  std::string full = *name;
  while (current().isOperator(".") && peek().kind == Token::Kind::Name) {
    advance();
    full += "." + current().text;
    advance();
  }
  auto filter = make(Expr::Kind::Filter, at);
  filter->name = full;
  filter->filter = findFilter(full);
  if (!filter->filter)
    noteUnknown(at.location, "there is no filter named `" + full + "`");
  filter->operands.push_back(std::move(input));
  if (current().isOperator("("))
    if (auto err = parseCallArguments(*filter))
      return std::move(err);
  return std::move(filter);
}

llvm::Expected<ExprPtr> TemplateParser::parseFilterAndTest(ExprPtr node) {
  while (true) {
    if (skipOperator("|")) {
      auto filter = parseFilter(std::move(node));
      if (!filter)
        return filter.takeError();
      node = std::move(*filter);
    } else if (current().isName("is")) {
      const Token &at = current();
      advance();
      bool negated = skipName("not");
      auto name = expectName("a test name");
      if (!name)
        return name.takeError();
      auto test = make(Expr::Kind::Test, at);
      test->name = *name;
      test->negated = negated;
      test->test = findTest(*name);
      if (!test->test)
        noteUnknown(at.location, "there is no test named `" + *name + "`");
      test->operands.push_back(std::move(node));
      const Token &next = current();
      if (next.isOperator("(")) {
        if (auto err = parseCallArguments(*test))
          return std::move(err);
      } else if ((next.kind == Token::Kind::Name && !next.isName("else") &&
                  !next.isName("or") && !next.isName("and")) ||
                 next.kind == Token::Kind::String ||
                 next.kind == Token::Kind::Integer ||
                 next.kind == Token::Kind::Float || next.isOperator("[") ||
                 next.isOperator("{")) {
        if (next.isName("is"))
          return error(next, "tests cannot be chained with `is`");
        auto argument = parsePrimary();
        if (!argument)
          return argument.takeError();
        auto postfix = parsePostfix(std::move(*argument));
        if (!postfix)
          return postfix.takeError();
        test->operands.push_back(std::move(*postfix));
      }
      node = std::move(test);
    } else if (current().isOperator("(")) {
      auto call = make(Expr::Kind::Call, current());
      call->operands.push_back(std::move(node));
      if (auto err = parseCallArguments(*call))
        return std::move(err);
      node = std::move(call);
    } else {
      return std::move(node);
    }
  }
}

llvm::Expected<Body> TemplateParser::parseAll() {
  std::string endTag;
  auto body = parseBody({}, endTag);
  if (!body)
    return body.takeError();
  if (!unknownNames.empty())
    return templateError(ErrorId::TemplateMalformed, fileName,
                         unknownNames.front().first,
                         unknownNames.front().second);
  return body;
}

} // namespace

llvm::Expected<Body> tmpl::parseTemplateTokens(llvm::ArrayRef<Token> tokens,
                                               llvm::StringRef fileName) {
  return TemplateParser(tokens, fileName).parseAll();
}
