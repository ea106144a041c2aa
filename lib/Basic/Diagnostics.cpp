//===- Diagnostics.cpp - Rendering catalogued diagnostics -----------------===//
//
// Formats a diagnostic in the project's one form (see CONVENTIONS.md):
// `file:line:col: error: message [Id]`, the source line and a caret. The
// line and column come from llvm::SourceMgr; the source line is rendered
// here rather than by SourceMgr, because a source line may hold what a
// terminal cannot show as is (invalid UTF-8, a NUL byte, control characters)
// or be megabytes long, and the caret must still land under the right text.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Unicode.h"

using namespace linnet;

llvm::ArrayRef<const char *> linnet::allDiagnosticNames() {
  static const char *const names[] = {
#define LINNET_DIAG(Id, Severity, Format, ...) #Id,
#include "linnet/Basic/DiagnosticKinds.def"
  };
  return names;
}

namespace {

/// Tabs expand to the next multiple of this column, as in LLVM's output.
constexpr unsigned kTabStop = 8;
/// Source lines wider than this are shown as a window around the caret.
constexpr unsigned kMaxSnippetColumns = 120;
/// How much of the line a window shows before the caret.
constexpr unsigned kColumnsBeforeCaret = 60;
/// Bytes of a line looked at on each side of the caret: enough for any
/// window, and a bound on the work for a line of megabytes.
constexpr size_t kBytesAroundCaret = 1024;

/// One piece of a rendered source line: the text shown for some source bytes
/// and the display column it starts at.
struct Cell {
  const char *source; ///< the first byte it shows
  std::string text;
  unsigned column;
  unsigned width;
};

/// Splits a source line into cells: printable text as is, tabs as spaces,
/// and anything a terminal would mangle (control characters, invalid UTF-8,
/// non-printable code points) as `<XX>` or `<U+XXXX>`.
std::vector<Cell> renderLine(llvm::StringRef line) {
  std::vector<Cell> cells;
  unsigned column = 0;
  const char *it = line.begin(), *end = line.end();
  auto add = [&](const char *source, std::string text, unsigned width) {
    cells.push_back({source, std::move(text), column, width});
    column += width;
  };
  while (it != end) {
    unsigned char c = *it;
    if (c == '\t') {
      unsigned width = kTabStop - column % kTabStop;
      add(it, std::string(width, ' '), width);
      ++it;
      continue;
    }
    if (c >= 0x20 && c < 0x7F) {
      add(it, std::string(1, char(c)), 1);
      ++it;
      continue;
    }
    if (c >= 0x80) {
      unsigned length = llvm::getNumBytesForUTF8(c);
      if (length > 1 && it + length <= end &&
          llvm::isLegalUTF8Sequence(
              reinterpret_cast<const llvm::UTF8 *>(it),
              reinterpret_cast<const llvm::UTF8 *>(it + length))) {
        llvm::StringRef sequence(it, length);
        int width = llvm::sys::unicode::columnWidthUTF8(sequence);
        if (width > 0) {
          add(it, sequence.str(), unsigned(width));
        } else {
          const auto *source = reinterpret_cast<const llvm::UTF8 *>(it);
          llvm::UTF32 codePoint = 0;
          llvm::convertUTF8Sequence(&source, source + length, &codePoint,
                                    llvm::strictConversion);
          std::string text = "<U+" + llvm::utohexstr(codePoint, false, 4) + ">";
          unsigned textWidth = unsigned(text.size());
          add(it, std::move(text), textWidth);
        }
        it += length;
        continue;
      }
    }
    // A control character or a byte that is not valid UTF-8.
    add(it, "<" + llvm::utohexstr(c, false, 2) + ">", 4);
    ++it;
  }
  return cells;
}

/// Prints the source line around `range` with a caret under its start and
/// `~` under the rest of it on that line.
void printSnippet(llvm::raw_ostream &os, llvm::StringRef buffer,
                  llvm::SMRange range) {
  const char *loc = range.Start.getPointer();
  const char *lineBegin = loc;
  while (lineBegin != buffer.begin() && lineBegin[-1] != '\n' &&
         lineBegin[-1] != '\r')
    --lineBegin;
  const char *lineEnd = loc;
  while (lineEnd != buffer.end() && *lineEnd != '\n' && *lineEnd != '\r')
    ++lineEnd;
  // Only the bytes near the caret are rendered, starting on a character.
  bool cutBefore = size_t(loc - lineBegin) > kBytesAroundCaret;
  bool cutAfter = size_t(lineEnd - loc) > kBytesAroundCaret;
  if (cutBefore) {
    lineBegin = loc - kBytesAroundCaret;
    while (lineBegin != loc && (*lineBegin & 0xC0) == 0x80)
      ++lineBegin;
  }
  if (cutAfter)
    lineEnd = loc + kBytesAroundCaret;
  std::vector<Cell> cells =
      renderLine(llvm::StringRef(lineBegin, lineEnd - lineBegin));
  unsigned lineWidth =
      cells.empty() ? 0 : cells.back().column + cells.back().width;

  // The display column where the byte at `p` is shown (past the end of the
  // line for the line's end).
  auto columnOf = [&](const char *p) {
    for (const Cell &cell : cells)
      if (cell.source >= p)
        return cell.column;
    return lineWidth;
  };
  unsigned caret = columnOf(loc);
  unsigned rangeEnd = caret + 1;
  if (range.End.isValid() && range.End.getPointer() > loc + 1)
    rangeEnd =
        std::max(rangeEnd, columnOf(std::min(range.End.getPointer(), lineEnd)));

  // A long line shows a window of whole cells around the caret.
  unsigned windowBegin = 0, windowEnd = lineWidth;
  if (lineWidth > kMaxSnippetColumns) {
    windowBegin = caret > kColumnsBeforeCaret ? caret - kColumnsBeforeCaret : 0;
    windowEnd = std::min(lineWidth, windowBegin + kMaxSnippetColumns);
  }
  std::string text;
  unsigned shownBegin = lineWidth, shownEnd = 0;
  for (const Cell &cell : cells) {
    if (cell.column < windowBegin || cell.column + cell.width > windowEnd)
      continue;
    shownBegin = std::min(shownBegin, cell.column);
    shownEnd = cell.column + cell.width;
    text += cell.text;
  }
  if (shownBegin > shownEnd)
    shownBegin = shownEnd = caret;
  std::string marks;
  if (shownBegin > 0 || cutBefore) {
    text = "..." + text;
    marks = "   ";
  }
  if (shownEnd < lineWidth || cutAfter)
    text += "...";
  for (unsigned column = shownBegin;
       column < rangeEnd && column <= std::max(shownEnd, caret); ++column)
    marks += column == caret ? '^' : column > caret ? '~' : ' ';
  os << text << "\n" << marks << "\n";
}

} // namespace

void DiagnosticEngine::emit(llvm::SMRange range, DiagnosticSeverity severity,
                            llvm::StringRef name, const std::string &message) {
  if (severity == DiagnosticSeverity::Error) {
    ++errors;
    suppressed = errors > errorLimit;
    if (errors == errorLimit + 1)
      os << "linnet: note: too many errors; stopping after " << errorLimit
         << "\n";
  }
  // Notes belong to the diagnostic before them and share its fate.
  if (suppressed)
    return;

  std::string text = message;
  if (severity != DiagnosticSeverity::Note)
    text += " [" + name.str() + "]";
  const char *label = "error";
  if (severity == DiagnosticSeverity::Warning)
    label = "warning";
  else if (severity == DiagnosticSeverity::Note)
    label = "note";

  unsigned bufferId = range.Start.isValid()
                          ? sourceMgr.FindBufferContainingLoc(range.Start)
                          : 0;
  if (bufferId == 0) {
    os << "linnet: " << label << ": " << text << "\n";
    return;
  }
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  auto [line, column] = sourceMgr.getLineAndColumn(range.Start, bufferId);
  os << buffer->getBufferIdentifier() << ":" << line << ":" << column << ": "
     << label << ": " << text << "\n";
  printSnippet(os, buffer->getBuffer(), range);
}
