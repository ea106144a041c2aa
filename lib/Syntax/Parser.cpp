//===- Parser.cpp - The Linnet grammar in Boost.Spirit X3 -----------------===//
//
// The grammar of docs/language.md, rule for rule. Three concerns shape it
// beyond the EBNF:
//  - PEG backtracking must stay linear: alternatives that share a prefix are
//    factored (`(e)` and `(e, f)`), and the one speculative rule (explicit
//    generic arguments on a call) is wrapped in `attempt[]`.
//  - No input may exhaust the stack: every recursive entry point goes through
//    `nest[]`, and operator chains count their height.
//  - Errors are reported, not thrown across the stage: X3 expectation
//    failures are caught by `on_error` at member, use and block rules, which
//    report one diagnostic; recovery parsers then skip to the next member or
//    block, so later errors are still found.
//
//===----------------------------------------------------------------------===//

#include "linnet/Syntax/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/MemoryBuffer.h"

#include <boost/fusion/include/adapt_struct.hpp>
#include <boost/fusion/include/at_c.hpp>
#include <boost/spirit/home/x3.hpp>

#include <set>

// Fusion adaptations for the nodes parsed as plain sequences. The Located
// base (the source range) is filled by the annotation handler, not parsed.
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::ShapeProductTail, op, operand)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::ShapeProduct, first, rest)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::ShapeSumTail, op, operand)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::ShapeSum, first, rest)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::TensorType, dims, elementType)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::GenericParam, variadic, name, kind,
                          defaultValue)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::ParamMember, name, type, optional)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::StateMember, name, type)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::FnParam, name, type)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::FnMember, isPublic, isEntry, name,
                          generics, params, result, body)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::BlockDecl, name, generics, members)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::UseDecl, module, names)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::LetStmt, pattern, annotation, value)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::AssignStmt, target, indices, value)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::ForStmt, variable, sequence, body)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::RequireStmt, lhs, relation, rhs)
BOOST_FUSION_ADAPT_STRUCT(linnet::ast::Body, statements)

using namespace linnet;

namespace {

namespace x3 = boost::spirit::x3;
using Iterator = const char *;

/// Per-parse state reachable from every rule through the X3 context.
struct ParseState {
  DiagnosticEngine &diags;
  Iterator bufferBegin;
  Iterator bufferEnd;
  unsigned depth = 0;
  /// Where each `marked[]` parser being run began, innermost last: an
  /// action's `_where` holds only the input after its match.
  std::vector<Iterator> marks;
  /// The `{` of every block and body being parsed, innermost last.
  std::vector<Iterator> openBraces;
  /// Where a missing `}` was last reported: the enclosing body and block
  /// end at the same token and must not report it again.
  Iterator reportedUnclosedAt = nullptr;
  /// Integer literals already reported, so backtracking cannot repeat one.
  std::set<Iterator> reportedLiterals;
  /// Where the last member / top-level item that reported an error began;
  /// the recovery parser then skips silently from there.
  Iterator failedMember = nullptr;
  Iterator failedTopLevel = nullptr;
};
struct parse_state_tag;

template <typename Context> ParseState &stateOf(const Context &context) {
  return x3::get<parse_state_tag>(context).get();
}

/// The `what` of the expectation failures thrown by `nest[]` and by an
/// operator chain past its height limit.
constexpr const char *kNestingMarker = "\x01nesting";
constexpr const char *kChainMarker = "\x01chain";

bool isLimitMarker(const std::string &which) {
  return which == kNestingMarker || which == kChainMarker;
}

/// Reports the limit that the failure `which` ran into.
void reportLimit(DiagnosticEngine &diags, const char *where,
                 const std::string &which) {
  if (which == kChainMarker)
    diags.report(llvm::SMLoc::getFromPointer(where), diag::NestingTooDeep,
                 ParserLimits::maxChain,
                 "each operator, call, member or index in a chain adds a "
                 "level; split the chain with `let`");
  else
    diags.report(llvm::SMLoc::getFromPointer(where), diag::NestingTooDeep,
                 ParserLimits::maxNesting,
                 "parentheses, brackets, braces and prefix operators each "
                 "add a level");
}

//===----------------------------------------------------------------------===//
// Lexical helpers
//===----------------------------------------------------------------------===//

bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }

/// Skips whitespace and comments exactly as the X3 skipper does.
Iterator skipTrivia(Iterator it, Iterator end) {
  while (it != end) {
    if (*it == ' ' || *it == '\t' || *it == '\n' || *it == '\r' ||
        *it == '\f' || *it == '\v') {
      ++it;
    } else if (end - it >= 2 && it[0] == '/' && it[1] == '/') {
      while (it != end && *it != '\n')
        ++it;
    } else if (end - it >= 2 && it[0] == '/' && it[1] == '*') {
      it += 2;
      while (it != end && !(end - it >= 2 && it[0] == '*' && it[1] == '/'))
        ++it;
      it = it == end ? end : it + 2;
    } else {
      break;
    }
  }
  return it;
}

/// Describes the token at `it` for "unexpected ..." messages.
std::string describeToken(Iterator it, Iterator end) {
  it = skipTrivia(it, end);
  if (it == end)
    return "end of file";
  Iterator tokenEnd = it + 1;
  if (isIdentChar(*it)) {
    while (tokenEnd != end && isIdentChar(*tokenEnd))
      ++tokenEnd;
  } else {
    static const char *const multi[] = {
        "->", "::", "==", "!=", "<=", ">=", "&&", "||", "..."};
    for (const char *m : multi) {
      size_t n = std::strlen(m);
      if (size_t(end - it) >= n && std::equal(m, m + n, it))
        tokenEnd = it + n;
    }
  }
  std::string text(it, tokenEnd);
  if (text.size() > 40)
    text = text.substr(0, 40) + "...";
  return "`" + text + "`";
}

/// Turns X3's description of an expected parser (`'{'`, `"->"`, a rule
/// name) into the words of a diagnostic.
std::string describeExpected(const std::string &which) {
  if (which.size() >= 2 && (which.front() == '\'' || which.front() == '"') &&
      which.back() == which.front())
    return "`" + which.substr(1, which.size() - 2) + "`";
  return which;
}

} // namespace

// What a diagnostic says was expected, for parsers X3 cannot name itself:
// a parser with an action or a wrapper expects what its subject expects, a
// sequence what comes first, an alternative either of its branches. Without
// these, X3 names them by their mangled C++ type.
namespace boost::spirit::x3 {
template <typename Subject, typename Action>
struct get_info<action<Subject, Action>> {
  using result_type = std::string;
  std::string operator()(const action<Subject, Action> &p) const {
    return what(p.subject);
  }
};
template <typename Left, typename Right>
struct get_info<sequence<Left, Right>> {
  using result_type = std::string;
  std::string operator()(const sequence<Left, Right> &p) const {
    return what(p.left);
  }
};
template <typename Left, typename Right>
struct get_info<alternative<Left, Right>> {
  using result_type = std::string;
  std::string operator()(const alternative<Left, Right> &p) const {
    return describeExpected(what(p.left)) + " or " +
           describeExpected(what(p.right));
  }
};
template <typename Subject> struct get_info<lexeme_directive<Subject>> {
  using result_type = std::string;
  std::string operator()(const lexeme_directive<Subject> &p) const {
    return what(p.subject);
  }
};
template <typename Subject> struct get_info<optional<Subject>> {
  using result_type = std::string;
  std::string operator()(const optional<Subject> &p) const {
    return what(p.subject);
  }
};
template <typename Left, typename Right> struct get_info<list<Left, Right>> {
  using result_type = std::string;
  std::string operator()(const list<Left, Right> &p) const {
    return what(p.left);
  }
};
} // namespace boost::spirit::x3

namespace {

/// Top-level and member keywords that a recovery may stop at.
bool startsWithWord(Iterator it, Iterator end, llvm::StringRef word) {
  if (size_t(end - it) < word.size() ||
      !std::equal(word.begin(), word.end(), it))
    return false;
  Iterator after = it + word.size();
  return after == end || !isIdentChar(*after);
}

/// Skips the rest of a broken construct starting at `it`: moves forward,
/// keeping track of braces opened since `it`, to the first line start where
/// one of `stops` begins with no brace left open, or to a `}` that closes an
/// enclosing brace (left unconsumed). Always consumes at least one byte.
Iterator skipConstruct(Iterator it, Iterator end,
                       llvm::ArrayRef<llvm::StringRef> stops) {
  int depth = 0;
  bool atLineStart = false;
  bool first = true;
  while (it != end) {
    if (!first && atLineStart && depth <= 0) {
      Iterator word = it;
      while (word != end && (*word == ' ' || *word == '\t'))
        ++word;
      for (llvm::StringRef stop : stops)
        if (startsWithWord(word, end, stop))
          return word;
    }
    first = false;
    char c = *it;
    if (end - it >= 2 && c == '/' && (it[1] == '/' || it[1] == '*')) {
      Iterator next = skipTrivia(it, end);
      atLineStart = std::find(it, next, '\n') != next;
      it = next;
      continue;
    }
    if (c == '{')
      ++depth;
    if (c == '}') {
      if (depth == 0)
        return it;
      --depth;
    }
    atLineStart =
        c == '\n' || (atLineStart && (c == ' ' || c == '\t' || c == '\r'));
    ++it;
  }
  return it;
}

llvm::SMLoc locOf(Iterator it) { return llvm::SMLoc::getFromPointer(it); }

/// The indentation of the line holding `it`, or nothing when `it` is not
/// the first token of its line.
std::optional<unsigned> lineIndentation(Iterator begin, Iterator it) {
  Iterator lineStart = it;
  while (lineStart != begin && lineStart[-1] != '\n')
    --lineStart;
  for (Iterator p = lineStart; p != it; ++p)
    if (*p != ' ' && *p != '\t')
      return std::nullopt;
  return unsigned(it - lineStart);
}

/// The innermost `open` bracket between `from` and `to` that is not closed
/// before `to`, or null. Comments are skipped.
Iterator findUnclosed(Iterator from, Iterator to, char open) {
  std::vector<Iterator> stack;
  for (Iterator it = skipTrivia(from, to); it < to;
       it = skipTrivia(it + 1, to)) {
    char c = *it;
    if (c == '(' || c == '[' || c == '{') {
      stack.push_back(it);
    } else if (c == ')' || c == ']' || c == '}') {
      char opener = c == ')' ? '(' : c == ']' ? '[' : '{';
      auto match = std::find_if(stack.rbegin(), stack.rend(),
                                [&](Iterator p) { return *p == opener; });
      if (match != stack.rend())
        stack.erase(std::prev(match.base()), stack.end());
    }
  }
  auto found = std::find_if(stack.rbegin(), stack.rend(),
                            [&](Iterator p) { return *p == open; });
  return found == stack.rend() ? nullptr : *found;
}
llvm::SMRange rangeBetween(Iterator first, Iterator last) {
  return llvm::SMRange(locOf(first), locOf(last));
}

//===----------------------------------------------------------------------===//
// Custom parsers: nesting guard, speculative attempt, recovery
//===----------------------------------------------------------------------===//

/// The common part of this file's directives: a unary parser whose
/// attribute is its subject's.
template <typename Subject, typename Derived>
struct PassThroughDirective : x3::unary_parser<Subject, Derived> {
  static constexpr bool is_pass_through_unary = true;
  static constexpr bool handles_container = Subject::handles_container;
  PassThroughDirective(const Subject &subject)
      : x3::unary_parser<Subject, Derived>(subject) {}
};

/// `directive[p]` syntax for a directive template.
template <template <typename> class Directive> struct DirectiveGen {
  template <typename Subject>
  Directive<typename x3::extension::as_parser<Subject>::value_type>
  operator[](const Subject &subject) const {
    return {x3::as_parser(subject)};
  }
};

/// `nest[p]`: parses p one nesting level deeper; past the limit it throws an
/// expectation failure that on_error reports as NestingTooDeep.
template <typename Subject>
struct NestParser : PassThroughDirective<Subject, NestParser<Subject>> {
  using PassThroughDirective<Subject,
                             NestParser<Subject>>::PassThroughDirective;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It &first, const It &last, const Ctx &ctx, RCtx &rctx,
             Attr &attr) const {
    ParseState &state = stateOf(ctx);
    if (state.depth >= ParserLimits::maxNesting)
      boost::throw_exception(
          x3::expectation_failure<It>(first, kNestingMarker));
    ++state.depth;
    struct Restore {
      unsigned &depth;
      ~Restore() { --depth; }
    } restore{state.depth};
    return this->subject.parse(first, last, ctx, rctx, attr);
  }
};
constexpr DirectiveGen<NestParser> nest{};

/// `located[p]`: p, recording the source range it matched on the attribute
/// of the rule it defines. Rules whose definition holds a semantic action
/// need it: X3 then calls their on_success handler without the attribute, so
/// Annotate cannot see it.
template <typename Subject>
struct LocatedParser : PassThroughDirective<Subject, LocatedParser<Subject>> {
  using PassThroughDirective<Subject,
                             LocatedParser<Subject>>::PassThroughDirective;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It &first, const It &last, const Ctx &ctx, RCtx &rctx,
             Attr &attr) const {
    static_assert(std::is_base_of_v<ast::Located, RCtx>,
                  "located[] defines a rule whose attribute has a range");
    x3::skip_over(first, last, ctx);
    It start = first;
    if (!this->subject.parse(first, last, ctx, rctx, attr))
      return false;
    rctx.range = rangeBetween(start, first);
    return true;
  }
};
constexpr DirectiveGen<LocatedParser> located{};

/// Runs a parser with the position where it begins (after whitespace)
/// pushed on one of the ParseState's position stacks.
template <std::vector<Iterator> ParseState::*Stack> struct PushPosition {
  template <typename Subject>
  struct Parser : PassThroughDirective<Subject, Parser<Subject>> {
    using PassThroughDirective<Subject, Parser<Subject>>::PassThroughDirective;

    template <typename It, typename Ctx, typename RCtx, typename Attr>
    bool parse(It &first, const It &last, const Ctx &ctx, RCtx &rctx,
               Attr &attr) const {
      std::vector<Iterator> &stack = stateOf(ctx).*Stack;
      stack.push_back(skipTrivia(first, last));
      struct Pop {
        std::vector<Iterator> &stack;
        ~Pop() { stack.pop_back(); }
      } pop{stack};
      return this->subject.parse(first, last, ctx, rctx, attr);
    }
  };
};

/// `braced[p]`: p, which starts with a `{`; while p runs, that `{` is the
/// innermost open brace, for the note of a missing `}`.
constexpr DirectiveGen<PushPosition<&ParseState::openBraces>::Parser> braced{};

/// True when the token at `at` shows that the innermost open brace will
/// never be closed: the end of the file, or one of `stops` (keywords that
/// begin a member or a top-level item) first on a line indented no deeper
/// than the line of that brace.
bool endsUnclosedBrace(const ParseState &state, Iterator at,
                       llvm::ArrayRef<llvm::StringRef> stops) {
  if (at == state.bufferEnd)
    return true;
  if (state.openBraces.empty())
    return false;
  auto indentation = lineIndentation(state.bufferBegin, at);
  Iterator brace = state.openBraces.back();
  Iterator braceLine = brace;
  while (braceLine != state.bufferBegin && braceLine[-1] != '\n')
    --braceLine;
  unsigned braceIndentation = 0;
  while (braceLine + braceIndentation != brace &&
         (braceLine[braceIndentation] == ' ' ||
          braceLine[braceIndentation] == '\t'))
    ++braceIndentation;
  if (!indentation || *indentation > braceIndentation)
    return false;
  return llvm::any_of(stops, [&](llvm::StringRef stop) {
    return startsWithWord(at, state.bufferEnd, stop);
  });
}

/// The `}` that closes a block or a body. When the brace is evidently never
/// closed (see endsUnclosedBrace), reports that once, with a note at the
/// `{`, and ends the block or body there, so the parse goes on with what
/// follows instead of reporting every later line.
struct ClosingBraceParser : x3::parser<ClosingBraceParser> {
  using attribute_type = x3::unused_type;
  static constexpr bool has_attribute = false;
  ClosingBraceParser(const char *expected,
                     llvm::ArrayRef<llvm::StringRef> stops)
      : expected(expected), stops(stops) {}
  const char *expected;
  llvm::ArrayRef<llvm::StringRef> stops;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It &first, const It &last, const Ctx &ctx, RCtx &, Attr &) const {
    ParseState &state = stateOf(ctx);
    It at = skipTrivia(first, last);
    if (at != last && *at == '}') {
      first = at + 1;
      return true;
    }
    if (!endsUnclosedBrace(state, at, stops))
      return false;
    if (state.reportedUnclosedAt != at) {
      state.reportedUnclosedAt = at;
      state.diags.report(locOf(at), diag::UnexpectedText,
                         describeToken(at, last), expected);
      if (!state.openBraces.empty())
        state.diags.report(locOf(state.openBraces.back()), diag::ToMatchThis,
                           "{");
    }
    first = at;
    return true;
  }
};

/// Keywords that begin a top-level item, or a member.
const llvm::StringRef kTopLevelKeywords[] = {"block", "use"};
const llvm::StringRef kMemberAndTopLevelKeywords[] = {
    "sub", "param", "state", "pub", "fn", "entry", "block", "use"};

/// `marked[p]`: p, with the position where it begins (after whitespace)
/// available to the actions inside it as `startOf(ctx)`.
constexpr DirectiveGen<PushPosition<&ParseState::marks>::Parser> marked{};

/// Where the innermost `marked[]` parser began.
template <typename Context> Iterator startOf(const Context &context) {
  return stateOf(context).marks.back();
}
/// Where the match of the action being run ends (X3's `_where` is the
/// input after it).
template <typename Context> Iterator endOf(const Context &context) {
  return x3::_where(context).begin();
}

/// `attempt[p]`: p, or no match at all when p fails or throws an expectation
/// failure (nesting failures still propagate). For speculative parses only.
template <typename Subject>
struct AttemptParser : PassThroughDirective<Subject, AttemptParser<Subject>> {
  using PassThroughDirective<Subject,
                             AttemptParser<Subject>>::PassThroughDirective;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It &first, const It &last, const Ctx &ctx, RCtx &rctx,
             Attr &attr) const {
    It saved = first;
    try {
      if (this->subject.parse(first, last, ctx, rctx, attr))
        return true;
    } catch (const x3::expectation_failure<It> &failure) {
      if (isLimitMarker(failure.which()))
        throw;
    }
    first = saved;
    return false;
  }
};
constexpr DirectiveGen<AttemptParser> attempt{};

} // namespace

// The directives above expect what their subject expects.
namespace boost::spirit::x3 {
template <typename Parser>
struct get_info<
    Parser,
    std::enable_if_t<std::is_base_of_v<
        PassThroughDirective<typename Parser::subject_type, Parser>, Parser>>> {
  using result_type = std::string;
  std::string operator()(const Parser &p) const { return what(p.subject); }
};
} // namespace boost::spirit::x3

namespace {

/// Skips a member that could not be parsed. If the member's own rule already
/// reported the error, skips silently; otherwise reports what was found.
struct SkipMemberParser : x3::parser<SkipMemberParser> {
  using attribute_type = x3::unused_type;
  static constexpr bool has_attribute = false;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It &first, const It &last, const Ctx &ctx, RCtx &, Attr &) const {
    ParseState &state = stateOf(ctx);
    It start = skipTrivia(first, last);
    if (start == last || *start == '}' ||
        endsUnclosedBrace(state, start, kTopLevelKeywords))
      return false;
    if (state.failedMember == start) {
      // Reported by the member's rule.
    } else if (startsWithWord(start, last, "pub")) {
      It next = skipTrivia(start + 3, last);
      state.diags.report(locOf(next), diag::UnexpectedText,
                         describeToken(next, last),
                         "`fn` or `entry` after `pub`");
    } else {
      state.diags.report(
          locOf(start), diag::UnexpectedText, describeToken(start, last),
          "a member (`sub`, `param`, `state`, `fn`, `pub`) or `}`");
    }
    static const llvm::StringRef stops[] = {"sub", "param", "state",
                                            "pub", "fn",    "entry"};
    first = skipConstruct(start, last, stops);
    return true;
  }
};

/// Skips a top-level item that could not be parsed, like SkipMemberParser.
struct SkipTopLevelParser : x3::parser<SkipTopLevelParser> {
  using attribute_type = x3::unused_type;
  static constexpr bool has_attribute = false;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It &first, const It &last, const Ctx &ctx, RCtx &, Attr &) const {
    ParseState &state = stateOf(ctx);
    It start = skipTrivia(first, last);
    if (start == last)
      return false;
    if (state.failedTopLevel != start)
      state.diags.report(locOf(start), diag::UnexpectedText,
                         describeToken(start, last), "`block` or `use`");
    static const llvm::StringRef stops[] = {"block", "use"};
    first = skipConstruct(start, last, stops);
    // A stray `}` at top level is skipped on its own.
    if (first != last && *first == '}' && first == start)
      ++first;
    return true;
  }
};

//===----------------------------------------------------------------------===//
// Rule IDs: annotation and error handling
//===----------------------------------------------------------------------===//

/// Records the source range of every Located attribute a rule produces.
struct Annotate {
  template <typename It, typename Attr, typename Ctx>
  void on_success(const It &first, const It &last, Attr &attr,
                  const Ctx &) const {
    if constexpr (std::is_base_of_v<ast::Located, Attr>)
      attr.range = rangeBetween(skipTrivia(first, last), last);
  }
};

/// Reports that `expected` was not found at `at`, in the construct that
/// began at `start`; a missing `)` or `]` gets a note at its opening bracket.
void reportUnexpected(ParseState &state, Iterator start, Iterator at,
                      const std::string &expected) {
  state.diags.report(locOf(at), diag::UnexpectedText,
                     describeToken(at, state.bufferEnd), expected);
  for (char open : {'(', '['}) {
    std::string closer = open == '(' ? "`)`" : "`]`";
    if (llvm::StringRef(expected).starts_with(closer))
      if (Iterator bracket = findUnclosed(start, at, open))
        state.diags.report(locOf(bracket), diag::ToMatchThis,
                           std::string(1, open));
  }
}

/// Reports an expectation failure once and makes the rule fail, so the
/// enclosing loop's recovery parser takes over.
template <Iterator ParseState::*FailedAt> struct ReportAndFail : Annotate {
  template <typename It, typename Exception, typename Ctx>
  x3::error_handler_result on_error(It &first, const It &last,
                                    const Exception &failure,
                                    const Ctx &ctx) const {
    ParseState &state = stateOf(ctx);
    if (isLimitMarker(failure.which()))
      reportLimit(state.diags, skipTrivia(failure.where(), last),
                  failure.which());
    else
      reportUnexpected(state, first, skipTrivia(failure.where(), last),
                       describeExpected(failure.which()));
    state.*FailedAt = skipTrivia(first, last);
    return x3::error_handler_result::fail;
  }
};
using MemberErrors = ReportAndFail<&ParseState::failedMember>;
using TopLevelErrors = ReportAndFail<&ParseState::failedTopLevel>;

//===----------------------------------------------------------------------===//
// Semantic actions for the expression tree
//===----------------------------------------------------------------------===//

unsigned depthOf(const ast::Expr &expr) {
  return boost::apply_visitor(
      [](const auto &node) -> unsigned {
        using T = std::decay_t<decltype(node)>;
        if constexpr (x3::traits::is_variant<T>::value)
          return 0;
        else if constexpr (std::is_same_v<T, ast::Identifier> ||
                           std::is_same_v<T, ast::IntegerLiteral> ||
                           std::is_same_v<T, ast::FloatLiteral> ||
                           std::is_same_v<T, ast::BoolLiteral> ||
                           std::is_same_v<T, x3::forward_ast<ast::TupleExpr>> ||
                           std::is_same_v<T, x3::forward_ast<ast::ListExpr>>)
          return 0;
        else
          return node.get().depth;
      },
      expr);
}

/// Sets a chained node's height, refusing chains past the limit; `where` is
/// the place to report, the part of the chain that went past it.
template <typename Node, typename Ctx>
void checkChain(Node &node, unsigned below, const Ctx &ctx, llvm::SMLoc where) {
  node.depth = below + 1;
  if (node.depth > ParserLimits::maxChain)
    boost::throw_exception(x3::expectation_failure<Iterator>(
        where.isValid() ? where.getPointer() : endOf(ctx), kChainMarker));
}

/// Operator spellings; a symbol table matches the longest one.
struct OperatorTable : x3::symbols<std::string> {
  OperatorTable(std::initializer_list<const char *> spellings) {
    for (const char *spelling : spellings)
      add(spelling, spelling);
  }
};
const OperatorTable orOps{"||"}, andOps{"&&"},
    cmpOps{"==", "!=", "<=", ">=", "<", ">"}, addOps{"+", "-"},
    mulOps{"*", "/", "%", "@"}, prefixOps{"-", "!"};

auto const assignValue = [](auto &ctx) {
  x3::_val(ctx) = std::move(x3::_attr(ctx));
};

auto const foldBinary = [](auto &ctx) {
  auto &tail = x3::_attr(ctx);
  ast::BinaryExpr node;
  node.op = boost::fusion::at_c<0>(tail);
  node.lhs = std::move(x3::_val(ctx));
  node.rhs = std::move(boost::fusion::at_c<1>(tail));
  node.range =
      llvm::SMRange(ast::rangeOf(node.lhs).Start, ast::rangeOf(node.rhs).End);
  checkChain(node, std::max(depthOf(node.lhs), depthOf(node.rhs)), ctx,
             ast::rangeOf(node.rhs).Start);
  x3::_val(ctx) = std::move(node);
};

auto const makeUnary = [](auto &ctx) {
  auto &parts = x3::_attr(ctx);
  ast::UnaryExpr node;
  node.op = boost::fusion::at_c<0>(parts);
  node.operand = std::move(boost::fusion::at_c<1>(parts));
  node.range = rangeBetween(startOf(ctx), endOf(ctx));
  checkChain(node, depthOf(node.operand), ctx, locOf(startOf(ctx)));
  x3::_val(ctx) = std::move(node);
};

/// What follows a callee: explicit generic arguments and the arguments.
struct CallSuffix {
  std::vector<ast::ShapeItem> genericArgs;
  std::vector<ast::Argument> arguments;
};

auto const makeCall = [](auto &ctx) {
  ast::CallExpr node;
  node.callee = std::move(x3::_val(ctx));
  node.genericArgs = std::move(x3::_attr(ctx).genericArgs);
  node.arguments = std::move(x3::_attr(ctx).arguments);
  node.range =
      llvm::SMRange(ast::rangeOf(node.callee).Start, locOf(endOf(ctx)));
  checkChain(node, depthOf(node.callee), ctx, ast::rangeOf(node.callee).End);
  x3::_val(ctx) = std::move(node);
};

auto const makeMember = [](auto &ctx) {
  ast::MemberExpr node;
  node.base = std::move(x3::_val(ctx));
  node.member = std::move(x3::_attr(ctx));
  node.range = llvm::SMRange(ast::rangeOf(node.base).Start, locOf(endOf(ctx)));
  checkChain(node, depthOf(node.base), ctx, ast::rangeOf(node.base).End);
  x3::_val(ctx) = std::move(node);
};

auto const makeIndex = [](auto &ctx) {
  ast::IndexExpr node;
  node.base = std::move(x3::_val(ctx));
  node.indices = std::move(x3::_attr(ctx));
  node.range = llvm::SMRange(ast::rangeOf(node.base).Start, locOf(endOf(ctx)));
  checkChain(node, depthOf(node.base), ctx, ast::rangeOf(node.base).End);
  x3::_val(ctx) = std::move(node);
};

//===----------------------------------------------------------------------===//
// The grammar
//===----------------------------------------------------------------------===//

using x3::lexeme;
using x3::lit;
using x3::matches;
using x3::raw;

// Rule IDs. Those whose attribute is Located get their range from Annotate.
struct identifier_id : Annotate {};
struct int_literal_id : Annotate {};
struct float_literal_id : Annotate {};
struct bool_literal_id : Annotate {};
struct shape_sum_id : Annotate {};
struct shape_product_id : Annotate {};
struct shape_factor_id : Annotate {};
struct shape_negation_id : Annotate {};
struct shape_spread_id : Annotate {};
struct shape_item_id : Annotate {};
struct type_id : Annotate {};
struct tensor_type_id : Annotate {};
struct element_type_id : Annotate {};
struct tuple_type_id : Annotate {};
struct expr_id : Annotate {};
struct or_expr_id : Annotate {};
struct and_expr_id : Annotate {};
struct cmp_expr_id : Annotate {};
struct add_expr_id : Annotate {};
struct mul_expr_id : Annotate {};
struct unary_expr_id : Annotate {};
struct postfix_expr_id : Annotate {};
struct primary_id : Annotate {};
struct paren_expr_id : Annotate {};
struct list_expr_id : Annotate {};
struct list_item_id : Annotate {};
struct argument_id : Annotate {};
struct call_suffix_id : Annotate {};
struct index_id : Annotate {};
struct index_list_id : Annotate {};
struct pattern_id : Annotate {};
struct tuple_pattern_id : Annotate {};
struct let_stmt_id : Annotate {};
struct return_stmt_id : Annotate {};
struct assign_stmt_id : Annotate {};
struct for_stmt_id : Annotate {};
struct require_stmt_id : Annotate {};
struct statement_id : Annotate {};
struct body_id : Annotate {};
struct generic_param_id : Annotate {};
struct generic_params_id : Annotate {};
struct module_path_id : Annotate {};
struct block_ref_id : Annotate {};
struct sub_member_id : Annotate {};
struct param_member_id : Annotate {};
struct state_member_id : Annotate {};
struct fn_param_id : Annotate {};
struct fn_member_id : Annotate {};
struct member_id : MemberErrors {};
struct block_decl_id : TopLevelErrors {};
struct use_decl_id : TopLevelErrors {};

// Character sets as bit sets: x3::alpha and friends call the C library's
// locale-aware classification for every byte.
auto const identStart = x3::char_("a-zA-Z_");
auto const identChar = x3::char_("a-zA-Z0-9_");
auto const digit = x3::char_("0-9");

// Keywords end where an identifier character cannot follow.
auto keyword(const char *word) { return lexeme[lit(word) >> !identChar]; }
/// The words that cannot be identifiers.
bool isKeyword(llvm::StringRef word) {
  static const llvm::StringRef keywords[] = {
      "block", "use",    "sub", "param", "state", "pub",   "fn",     "entry",
      "let",   "return", "for", "in",    "true",  "false", "require"};
  return llvm::is_contained(keywords, word);
}

x3::rule<identifier_id, ast::Identifier> const identifier = "an identifier";
x3::rule<int_literal_id, ast::IntegerLiteral> const int_literal = "an integer";
x3::rule<float_literal_id, ast::FloatLiteral> const float_literal = "a number";
x3::rule<bool_literal_id, ast::BoolLiteral> const bool_literal = "a boolean";

// A keyword is refused after the word is read, which is cheaper than trying
// every keyword before each identifier.
auto const identifier_def =
    located[raw[lexeme[identStart >> *identChar]][([](auto &ctx) {
      auto r = x3::_attr(ctx);
      llvm::StringRef word(r.begin(), r.end() - r.begin());
      if (isKeyword(word))
        x3::_pass(ctx) = false;
      else
        x3::_val(ctx).name = word.str();
    })]];
auto const int_literal_def =
    located[raw[lexeme[+digit >> !(identStart | lit('.'))]][([](auto &ctx) {
      auto r = x3::_attr(ctx);
      std::string &text = x3::_val(ctx).text;
      text.assign(r.begin(), r.end());
      int64_t value;
      if (!llvm::StringRef(text).getAsInteger(10, value))
        return;
      // Backtracking may parse a literal twice; report it once.
      ParseState &state = stateOf(ctx);
      if (state.reportedLiterals.insert(r.begin()).second)
        state.diags.report(
            rangeBetween(r.begin(), r.end()), diag::IntegerLiteralTooLarge,
            text.size() > 40 ? text.substr(0, 40) + "..." : text);
    })]];
auto const exponent = (lit('e') | lit('E')) >> -(lit('+') | lit('-')) >> +digit;
auto const float_literal_def = located
    [raw[lexeme[+digit >> ((lit('.') >> +digit >> -exponent) | exponent) >>
                !identStart]][([](auto &ctx) {
      auto r = x3::_attr(ctx);
      x3::_val(ctx).text.assign(r.begin(), r.end());
    })]];
auto const bool_literal_def =
    located[keyword("true")[([](auto &ctx) { x3::_val(ctx).value = true; })] |
            keyword("false")[([](auto &ctx) { x3::_val(ctx).value = false; })]];

// Shape expressions.
x3::rule<shape_sum_id, ast::ShapeSum> const shape_sum = "a shape expression";
x3::rule<shape_product_id, ast::ShapeProduct> const shape_product =
    "a shape expression";
x3::rule<shape_factor_id, ast::ShapeFactor> const shape_factor =
    "a shape expression";
x3::rule<shape_negation_id, ast::ShapeNegation> const shape_negation =
    "a shape expression";
x3::rule<shape_spread_id, ast::ShapeSpread> const shape_spread = "`*Name`";
x3::rule<shape_item_id, ast::ShapeItem> const shape_item = "a shape expression";

auto const shape_sum_def = shape_product >> *(x3::char_("+-") > shape_product);
auto const shape_product_def = shape_factor >>
                               *(x3::char_("*/") > shape_factor);
auto const shape_factor_def = int_literal | identifier | shape_negation |
                              nest[lit('(') > shape_sum > lit(')')];
auto const shape_negation_def =
    located[nest[lit('-') > shape_factor[([](auto &ctx) {
                   x3::_val(ctx).operand = x3::_attr(ctx);
                 })]]];
auto const shape_spread_def = located[lit('*') > identifier[([](auto &ctx) {
                                        x3::_val(ctx).name = x3::_attr(ctx);
                                      })]];
auto const shape_item_def = shape_spread | shape_sum;

// Types.
x3::rule<type_id, ast::Type> const type = "a type";
x3::rule<tensor_type_id, ast::TensorType> const tensor_type = "a tensor type";
x3::rule<element_type_id, ast::Identifier> const element_type =
    "an element type";
x3::rule<tuple_type_id, ast::TupleType> const tuple_type = "a tuple type";

auto const type_def = tensor_type | tuple_type | identifier;
// `Tensor` is no element type, so the `[` is expected right after it.
auto const tensor_type_def = keyword("Tensor") > lit('[') >
                             -(shape_item % ',') > lit(';') > element_type >
                             lit(']');
auto const element_type_def = identifier;
auto const tuple_type_def =
    located[nest[lit('(') > (type % ',')[([](auto &ctx) {
                   x3::_val(ctx).elements = std::move(x3::_attr(ctx));
                 })] > lit(')')]];

// Expressions.
x3::rule<expr_id, ast::Expr> const expr = "an expression";
x3::rule<or_expr_id, ast::Expr> const or_expr = "an expression";
x3::rule<and_expr_id, ast::Expr> const and_expr = "an expression";
x3::rule<cmp_expr_id, ast::Expr> const cmp_expr = "an expression";
x3::rule<add_expr_id, ast::Expr> const add_expr = "an expression";
x3::rule<mul_expr_id, ast::Expr> const mul_expr = "an expression";
x3::rule<unary_expr_id, ast::Expr> const unary_expr = "an expression";
x3::rule<postfix_expr_id, ast::Expr> const postfix_expr = "an expression";
x3::rule<primary_id, ast::Expr> const primary = "an expression";
x3::rule<paren_expr_id, ast::Expr> const paren_expr = "an expression";
x3::rule<list_expr_id, ast::ListExpr> const list_expr = "a list";
x3::rule<list_item_id, ast::ListItem> const list_item = "a list item";
x3::rule<argument_id, ast::Argument> const argument = "an argument";
x3::rule<call_suffix_id, CallSuffix> const call_suffix = "a call";
x3::rule<index_id, ast::Index> const index = "an index";
x3::rule<index_list_id, std::vector<ast::Index>> const index_list = "an index";

auto const expr_def = or_expr;
auto const or_expr_def = and_expr[assignValue] >>
                         *((orOps > and_expr)[foldBinary]);
auto const and_expr_def = cmp_expr[assignValue] >>
                          *((andOps > cmp_expr)[foldBinary]);
auto const cmp_expr_def = add_expr[assignValue] >>
                          -((cmpOps > add_expr)[foldBinary]);
auto const add_expr_def = mul_expr[assignValue] >>
                          *((addOps > mul_expr)[foldBinary]);
auto const mul_expr_def = unary_expr[assignValue] >>
                          *((mulOps > unary_expr)[foldBinary]);
auto const unary_expr_def = nest[marked[(prefixOps > unary_expr)[makeUnary]]] |
                            postfix_expr[assignValue];
auto const
    postfix_expr_def = primary[assignValue] >>
                       *(call_suffix[makeCall] |
                         (lit('.') > identifier)[makeMember] |
                         nest[lit('[') > index_list > lit(']')][makeIndex]);
auto const primary_def = float_literal | int_literal | bool_literal |
                         identifier | paren_expr | list_expr;
// `(e)` and `(e, ...)` share the prefix, so the tuple is decided after `e`.
auto const paren_expr_def =
    marked[nest[lit('(') > expr[assignValue] >
                (lit(')') |
                 (lit(',') >> -(expr % ',') > lit(')'))[([](auto &ctx) {
                   ast::TupleExpr tuple;
                   tuple.elements.push_back(std::move(x3::_val(ctx)));
                   if (auto &rest = x3::_attr(ctx))
                     for (auto &element : *rest)
                       tuple.elements.push_back(std::move(element));
                   tuple.range = rangeBetween(startOf(ctx), endOf(ctx));
                   x3::_val(ctx) = std::move(tuple);
                 })])]];
auto const list_expr_def =
    located[nest[lit('[') > -(!lit(']') >> list_item % ',')[([](auto &ctx) {
                   x3::_val(ctx).items = std::move(x3::_attr(ctx));
                 })] > lit(']')]];
auto const list_item_def = located[matches[lit('*')][([](auto &ctx) {
                                     x3::_val(ctx).spread = x3::_attr(ctx);
                                   })] > expr[([](auto &ctx) {
                                     x3::_val(ctx).value =
                                         std::move(x3::_attr(ctx));
                                   })]];
auto const setArgumentValue = [](auto &ctx) {
  x3::_val(ctx).value = std::move(x3::_attr(ctx));
};
// After `name =` the value is expected; otherwise the argument is an
// expression (which may begin with a name).
auto const argument_def =
    located[((identifier >> lit('=') >> !lit('='))[([](auto &ctx) {
               x3::_val(ctx).keyword = x3::_attr(ctx);
             })] > expr[setArgumentValue]) |
            expr[setArgumentValue]];
// Explicit generic arguments are speculative: `a < b` is a comparison
// unless a `>` directly followed by `(` closes the list.
auto const call_suffix_def =
    -attempt[lit('<') >> (shape_item % ',')[([](auto &ctx) {
               x3::_val(ctx).genericArgs = std::move(x3::_attr(ctx));
             })] >>
             lit('>') >> &lit('(')] >>
    nest[lit('(') > -(argument % ',')[([](auto &ctx) {
           x3::_val(ctx).arguments = std::move(x3::_attr(ctx));
         })] > lit(')')];
auto const index_def =
    located[lit("...")[(
                [](auto &ctx) { x3::_val(ctx).kind = ast::Index::Ellipsis; })] |
            (expr[([](auto &ctx) {
               x3::_val(ctx).lower = std::move(x3::_attr(ctx));
             })] >>
             -(lit(':') >> x3::eps[([](auto &ctx) {
                 x3::_val(ctx).kind = ast::Index::Slice;
               })] >>
               -expr[([](auto &ctx) {
                 x3::_val(ctx).upper = std::move(x3::_attr(ctx));
               })])) |
            (lit(':') >> x3::eps[([](auto &ctx) {
               x3::_val(ctx).kind = ast::Index::Slice;
             })] >>
             -expr[([](auto &ctx) {
               x3::_val(ctx).upper = std::move(x3::_attr(ctx));
             })])];
auto const index_list_def = index % ',';

// Statements.
x3::rule<pattern_id, ast::Pattern> const pattern = "a name or a tuple pattern";
x3::rule<tuple_pattern_id, ast::TuplePattern> const tuple_pattern =
    "a tuple pattern";
x3::rule<let_stmt_id, ast::LetStmt> const let_stmt = "`let`";
x3::rule<return_stmt_id, ast::ReturnStmt> const return_stmt = "`return`";
x3::rule<assign_stmt_id, ast::AssignStmt> const assign_stmt = "an assignment";
x3::rule<for_stmt_id, ast::ForStmt> const for_stmt = "`for`";
x3::rule<require_stmt_id, ast::RequireStmt> const require_stmt = "`require`";
x3::rule<statement_id, ast::Statement> const statement = "a statement";
x3::rule<body_id, ast::Body> const body = "a body `{ ... }`";

auto const pattern_def = identifier | tuple_pattern;
auto const tuple_pattern_def =
    located[nest[lit('(') > (pattern % ',')[([](auto &ctx) {
                   x3::_val(ctx).elements = std::move(x3::_attr(ctx));
                 })] > lit(')')]];
auto const let_stmt_def = keyword("let") > pattern > -(lit(':') > type) >
                          lit('=') > expr;
auto const return_stmt_def = located[keyword("return") > expr[([](auto &ctx) {
                                       x3::_val(ctx).value =
                                           std::move(x3::_attr(ctx));
                                     })]];
auto const assign_stmt_def = identifier >>
                             *nest[lit('[') > index_list > lit(']')] >>
                             lit('=') >> !lit('=') > expr;
auto const for_stmt_def = keyword("for") > identifier > keyword("in") > expr
                          > body;
x3::rule<struct size_relation_id, std::string> const size_relation =
    "`<=` or `==`";
auto const size_relation_def = x3::string("<=") | x3::string("==");
auto const require_stmt_def =
    keyword("require") > shape_sum > size_relation > shape_sum;
auto const statement_def =
    let_stmt | return_stmt | for_stmt | require_stmt | assign_stmt;
x3::rule<struct body_end_id> const body_end =
    "a statement (`let`, `return`, `for`, `require`, an assignment) or `}`";
auto const body_end_def = ClosingBraceParser{
    "a statement (`let`, `return`, `for`, `require`, an assignment) or `}`",
    kMemberAndTopLevelKeywords};
auto const body_def = nest[braced[lit('{') > *statement > body_end]];

// Declarations.
x3::rule<generic_param_id, ast::GenericParam> const generic_param =
    "a generic parameter";
x3::rule<generic_params_id, std::vector<ast::GenericParam>> const
    generic_params = "generic parameters";
x3::rule<module_path_id, ast::ModulePath> const module_path = "a module path";
x3::rule<block_ref_id, ast::BlockRef> const block_ref = "a block";
x3::rule<sub_member_id, ast::SubMember> const sub_member = "`sub`";
x3::rule<param_member_id, ast::ParamMember> const param_member = "`param`";
x3::rule<state_member_id, ast::StateMember> const state_member = "`state`";
x3::rule<fn_param_id, ast::FnParam> const fn_param = "a parameter";
x3::rule<fn_member_id, ast::FnMember> const fn_member = "a function";
x3::rule<member_id, ast::Member> const member = "a member";
x3::rule<block_decl_id, ast::BlockDecl> const block_decl = "a block";
x3::rule<use_decl_id, ast::UseDecl> const use_decl = "`use`";

auto const generic_param_def = matches[lit('*')] >> identifier >
                               lit(':') > identifier > -(lit('=') > shape_sum);
auto const generic_params_def = lit('<') > -(generic_param % ',') > lit('>');
auto const module_path_def =
    located[-lit('.')[([](auto &ctx) { x3::_val(ctx).relative = true; })] >>
            (identifier % '.')[([](auto &ctx) {
              x3::_val(ctx).parts = std::move(x3::_attr(ctx));
            })]];
auto const block_ref_def = located[-(module_path >> lit("::"))[([](auto &ctx) {
  x3::_val(ctx).module = std::move(x3::_attr(ctx));
})] >> identifier[([](auto &ctx) {
  x3::_val(ctx).name = x3::_attr(ctx);
})] >> -(lit('<') > -(shape_item % ',')[([](auto &ctx) {
           x3::_val(ctx).args = std::move(x3::_attr(ctx));
         })] > lit('>'))];
auto const sub_member_def = located
    [keyword("sub") >
     identifier[([](auto &ctx) { x3::_val(ctx).name = x3::_attr(ctx); })] >
     lit(':') >
     ((lit('[') > block_ref > lit(';') > shape_sum > lit(']'))[([](auto &ctx) {
        x3::_val(ctx).block = boost::fusion::at_c<0>(x3::_attr(ctx));
        x3::_val(ctx).count = boost::fusion::at_c<1>(x3::_attr(ctx));
      })] |
      block_ref[([](auto &ctx) { x3::_val(ctx).block = x3::_attr(ctx); })])];
auto const param_member_def = keyword("param") > identifier > lit(':') > type
                              > matches[lit('?')];
auto const state_member_def = keyword("state") > identifier > lit(':') > type;
auto const fn_param_def = identifier > lit(':') > type;
auto const fn_kind = keyword("fn") >> x3::attr(false) |
                     keyword("entry") >> x3::attr(true);
auto const fn_member_def = matches[keyword("pub")] >> fn_kind > identifier >
                           -generic_params > lit('(') > -(fn_param % ',') >
                           lit(')') > -(lit("->") > type) > body;
auto const member_def = sub_member | param_member | state_member | fn_member;

auto const skip_member = SkipMemberParser{};
x3::rule<struct block_end_id> const block_end =
    "a member (`sub`, `param`, `state`, `fn`, `pub`) or `}`";
auto const block_end_def =
    ClosingBraceParser{"a member (`sub`, `param`, `state`, `fn`, `pub`) or `}`",
                       kTopLevelKeywords};
// Rules that build their attribute with actions are kept apart from rules
// that rely on automatic attribute propagation: X3 turns propagation off for
// a whole rule as soon as its definition holds an action.
x3::rule<struct block_body_id, std::vector<ast::Member>> const block_body =
    "a block body `{ ... }`";
auto const block_body_def =
    braced[lit('{') > *(member[([](auto &ctx) {
                          x3::_val(ctx).push_back(std::move(x3::_attr(ctx)));
                        })] |
                        skip_member) > block_end];
auto const block_decl_def =
    keyword("block") > identifier > -generic_params > block_body;
x3::rule<struct use_names_id, std::vector<ast::Identifier>> const use_names =
    "a name or `{` names `}`";
auto const use_names_def =
    (lit('{') >
     (identifier %
      ',')[([](auto &ctx) { x3::_val(ctx) = std::move(x3::_attr(ctx)); })] >
     -lit(',') > lit('}')) |
    identifier[([](auto &ctx) { x3::_val(ctx).push_back(x3::_attr(ctx)); })];
auto const use_decl_def = keyword("use") > module_path > lit("::") > use_names;

BOOST_SPIRIT_DEFINE(identifier, int_literal, float_literal, bool_literal,
                    element_type, shape_sum, shape_product, shape_factor,
                    shape_negation, shape_spread, shape_item, type, tensor_type,
                    tuple_type, expr, or_expr, and_expr, cmp_expr, add_expr,
                    mul_expr, unary_expr, postfix_expr, primary, paren_expr,
                    list_expr, list_item, argument, call_suffix, index,
                    index_list, pattern, tuple_pattern, let_stmt, return_stmt,
                    assign_stmt, for_stmt, size_relation, require_stmt,
                    statement, body_end, body, generic_param, generic_params,
                    module_path, block_ref, sub_member, param_member,
                    state_member, fn_param, fn_member, member, block_end,
                    block_body, block_decl, use_names, use_decl)

auto const skipper = +x3::char_(" \t\n\r\f\v") |
                     (lit("//") >> *(x3::char_ - x3::eol)) |
                     (lit("/*") >> *(x3::char_ - lit("*/")) >> lit("*/"));

//===----------------------------------------------------------------------===//
// Byte-level checks before parsing
//===----------------------------------------------------------------------===//

/// Reports invalid UTF-8, NUL bytes, non-ASCII text outside comments and an
/// unterminated block comment. Returns false when the buffer is not text.
bool checkEncoding(llvm::StringRef text, DiagnosticEngine &diags) {
  const char *begin = text.begin(), *end = text.end();
  bool ok = true;
  bool reportedNonAscii = false;
  enum { Code, LineComment, BlockComment } mode = Code;
  const char *commentStart = nullptr;
  for (const char *it = begin; it != end;) {
    unsigned char c = *it;
    if (c == 0) {
      diags.report(locOf(it), diag::NulByte, 0);
      return false;
    }
    if (c >= 0x80) {
      unsigned length = llvm::getNumBytesForUTF8(c);
      if (length == 0 || it + length > end ||
          !llvm::isLegalUTF8Sequence(
              reinterpret_cast<const llvm::UTF8 *>(it),
              reinterpret_cast<const llvm::UTF8 *>(it + length))) {
        diags.report(locOf(it), diag::InvalidEncoding, unsigned(c));
        return false;
      }
      if (mode == Code && !reportedNonAscii) {
        const auto *source = reinterpret_cast<const llvm::UTF8 *>(it);
        llvm::UTF32 codePoint = 0;
        llvm::convertUTF8Sequence(&source, source + length, &codePoint,
                                  llvm::strictConversion);
        diags.report(rangeBetween(it, it + length),
                     diag::NonAsciiOutsideComment, std::string(it, length),
                     unsigned(codePoint));
        reportedNonAscii = true;
        ok = false;
      }
      it += length;
      continue;
    }
    if (mode == Code && c == '/' && it + 1 != end && it[1] == '/') {
      mode = LineComment;
      it += 2;
      continue;
    }
    if (mode == Code && c == '/' && it + 1 != end && it[1] == '*') {
      mode = BlockComment;
      commentStart = it;
      it += 2;
      continue;
    }
    if (mode == LineComment && c == '\n')
      mode = Code;
    if (mode == BlockComment && c == '*' && it + 1 != end && it[1] == '/') {
      mode = Code;
      it += 2;
      continue;
    }
    ++it;
  }
  if (mode == BlockComment) {
    diags.report(locOf(commentStart), diag::UnterminatedComment, 0);
    ok = false;
  }
  return ok;
}

} // namespace

ast::ModuleAST linnet::parseModule(unsigned bufferId, DiagnosticEngine &diags) {
  ast::ModuleAST module;
  const llvm::MemoryBuffer *buffer =
      diags.getSourceMgr().getMemoryBuffer(bufferId);
  if (!checkEncoding(buffer->getBuffer(), diags))
    return module;

  ParseState state{diags, buffer->getBufferStart(), buffer->getBufferEnd()};
  Iterator first = buffer->getBufferStart();
  Iterator last = buffer->getBufferEnd();

  auto const top_level =
      *(use_decl[([](auto &ctx) {
          x3::_val(ctx).uses.push_back(std::move(x3::_attr(ctx)));
        })] |
        block_decl[([](auto &ctx) {
          x3::_val(ctx).blocks.push_back(std::move(x3::_attr(ctx)));
        })] |
        SkipTopLevelParser{});
  x3::rule<struct module_id, ast::ModuleAST> const module_rule = "a module";
  auto const grammar =
      x3::with<parse_state_tag>(std::ref(state))[module_rule = top_level];
  try {
    x3::phrase_parse(first, last, grammar, skipper, module);
  } catch (const x3::expectation_failure<Iterator> &failure) {
    // Only a limit failure outside any member can get here.
    reportLimit(diags, skipTrivia(failure.where(), last), failure.which());
  }
  first = skipTrivia(first, last);
  if (first != last)
    diags.report(locOf(first), diag::UnexpectedText, describeToken(first, last),
                 "`block` or `use`");
  return module;
}
