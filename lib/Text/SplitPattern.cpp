//===- SplitPattern.cpp - A tokenizer's regular expressions, through PCRE2 ===//
//
// Each thread keeps one set of PCRE2 match data, match context and JIT
// stack, so that a match allocates nothing; limits on backtracking make a
// pattern that would run for ever (a fuzzed tokenizer.json) an error.
//
//===----------------------------------------------------------------------===//

#include "linnet/Text/SplitPattern.h"

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

using namespace linnet;

namespace {

/// White_Space (PropList.txt), as ranges of a PCRE2 character class.
constexpr llvm::StringLiteral kWhiteSpaceClass =
    "\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}"
    "\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

/// PCRE2's message for `errorCode`.
std::string pcre2Message(int errorCode) {
  PCRE2_UCHAR buffer[256];
  int length = pcre2_get_error_message(errorCode, buffer, sizeof buffer);
  if (length < 0)
    return "PCRE2 error " + std::to_string(errorCode);
  return std::string(reinterpret_cast<const char *>(buffer), length);
}

/// `regex` with `\s` and `\S` as White_Space classes.
llvm::Expected<std::string> withWhiteSpaceClass(llvm::StringRef regex) {
  std::string out;
  bool inClass = false;
  auto unsupported = [&](size_t at, llvm::StringRef what) {
    return makeError(ErrorId::TokenizerUnsupported,
                     "the pattern `" + regex + "` has " + what + " at offset " +
                         llvm::Twine(at) +
                         ", which linnet does not translate for PCRE2");
  };
  for (size_t i = 0; i < regex.size(); ++i) {
    char c = regex[i];
    if (c == '\\' && i + 1 < regex.size()) {
      char next = regex[++i];
      if (next == 's') {
        out += inClass ? kWhiteSpaceClass.str()
                       : "[" + kWhiteSpaceClass.str() + "]";
      } else if (next == 'S') {
        if (inClass)
          return unsupported(i - 1, "`\\S` inside a character class");
        out += "[^" + kWhiteSpaceClass.str() + "]";
      } else if (next == 'Q') {
        return unsupported(i - 1, "a `\\Q` quotation");
      } else {
        out += c;
        out += next;
      }
      continue;
    }
    if (!inClass && c == '[') {
      inClass = true;
      out += c;
      if (i + 1 < regex.size() && regex[i + 1] == '^')
        out += regex[++i];
      if (i + 1 < regex.size() && regex[i + 1] == ']')
        out += regex[++i]; // a leading `]` is a member
      continue;
    }
    if (inClass && c == '[') {
      // `[:alpha:]` means the same to both; a nested class does not.
      size_t close = regex.find(":]", i);
      if (i + 1 >= regex.size() || regex[i + 1] != ':' ||
          close == llvm::StringRef::npos)
        return unsupported(i, "a nested character class");
      out += regex.slice(i, close + 2).str();
      i = close + 1;
      continue;
    }
    if (inClass && c == '&' && i + 1 < regex.size() && regex[i + 1] == '&')
      return unsupported(i, "a class intersection `&&`");
    if (inClass && c == ']')
      inClass = false;
    out += c;
  }
  return out;
}

/// What one thread matches with: allocated once, reused by every match.
struct MatchState {
  pcre2_match_data *data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context *context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack *stack = pcre2_jit_stack_create(32 << 10, 64 << 20, nullptr);
  MatchState() {
    if (context && stack)
      pcre2_jit_stack_assign(context, nullptr, stack);
    if (context) {
      pcre2_set_match_limit(context, 50'000'000);
      pcre2_set_depth_limit(context, 1'000'000);
    }
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

/// The length of the UTF-8 sequence that starts with `lead`.
size_t sequenceLength(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

} // namespace

bool linnet::isUnicodeWhiteSpace(uint32_t c) {
  return (c >= 0x9 && c <= 0xD) || c == 0x20 || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

llvm::Expected<std::shared_ptr<SplitPattern>>
SplitPattern::compile(std::string source, llvm::StringRef shownAs) {
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  pcre2_code *code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C, &errorCode,
                    &errorOffset, nullptr);
  if (!code)
    return makeError(ErrorId::TokenizerMalformed,
                     "the pattern `" + shownAs + "` is not a regex PCRE2 " +
                         "reads: " + pcre2Message(errorCode) + " (at offset " +
                         llvm::Twine(errorOffset) +
                         " of the translated pattern)");
  // Without the JIT (a system that refuses executable memory) PCRE2's
  // interpreter gives the same matches, slower.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  std::shared_ptr<SplitPattern> pattern(new SplitPattern());
  pattern->code = code;
  pattern->pcre2Source = std::move(source);
  return pattern;
}

llvm::Expected<std::shared_ptr<SplitPattern>>
SplitPattern::compileRegex(llvm::StringRef regex) {
  auto source = withWhiteSpaceClass(regex);
  if (!source)
    return source.takeError();
  return compile(std::move(*source), regex);
}

llvm::Expected<std::shared_ptr<SplitPattern>>
SplitPattern::compileLiterals(llvm::ArrayRef<std::string> literals) {
  // PCRE2 takes the first alternative that matches at the leftmost place:
  // longest first makes it the longest.
  std::vector<std::string> sorted(literals.begin(), literals.end());
  llvm::erase_if(sorted, [](const std::string &s) { return s.empty(); });
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const std::string &a, const std::string &b) {
                     return a.size() > b.size();
                   });
  std::string source;
  for (const std::string &literal : sorted) {
    if (!source.empty())
      source += '|';
    for (char c : literal) {
      if (static_cast<unsigned char>(c) < 0x80 && !llvm::isAlnum(c))
        source += '\\';
      source += c;
    }
  }
  if (source.empty())
    source = "(*FAIL)";
  return compile(std::move(source), "added tokens");
}

SplitPattern::~SplitPattern() {
  pcre2_code_free(static_cast<pcre2_code *>(code));
}

llvm::Error SplitPattern::forEachMatch(
    llvm::StringRef text,
    llvm::function_ref<llvm::Error(size_t, size_t)> onMatch) const {
  thread_local MatchState state;
  if (!state.data || !state.context)
    return makeError(ErrorId::OutOfMemory, "no memory for PCRE2's match data");
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start < text.size()) {
    int rc = pcre2_match(static_cast<pcre2_code *>(code), subject, text.size(),
                         start, PCRE2_NO_UTF_CHECK, state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH)
      break;
    if (rc < 0)
      return makeError(ErrorId::TokenizerMalformed,
                       "matching the pattern `" + pcre2Source + "` at byte " +
                           llvm::Twine(start) + " failed: " + pcre2Message(rc));
    const PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(state.data);
    size_t begin = ovector[0], end = ovector[1];
    if (end <= begin || begin < start) {
      // An empty match (or one `\K` moved back): move on one character.
      size_t at = std::max(end, start);
      if (at >= text.size())
        break;
      start = at + sequenceLength(static_cast<unsigned char>(text[at]));
      continue;
    }
    if (llvm::Error error = onMatch(begin, end))
      return error;
    start = end;
  }
  return llvm::Error::success();
}
