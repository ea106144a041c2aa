//===- Diagnostics.cpp - Rendering catalogued diagnostics ------------------===//
//
// Formats a diagnostic in the project's one form (see CONVENTIONS.md) through
// llvm::SourceMgr, which already knows line tables and caret rendering.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/Diagnostics.h"

using namespace linnet;

llvm::ArrayRef<const char *> linnet::allDiagnosticNames() {
  static const char *const names[] = {
#define LINNET_DIAG(Id, Severity, Format, ...) #Id,
#include "linnet/Basic/DiagnosticKinds.def"
  };
  return names;
}

void DiagnosticEngine::emit(llvm::SMRange range, DiagnosticSeverity severity,
                            llvm::StringRef name,
                            const std::string &message) {
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

  llvm::SourceMgr::DiagKind kind = llvm::SourceMgr::DK_Error;
  const char *label = "error";
  if (severity == DiagnosticSeverity::Warning) {
    kind = llvm::SourceMgr::DK_Warning;
    label = "warning";
  } else if (severity == DiagnosticSeverity::Note) {
    kind = llvm::SourceMgr::DK_Note;
    label = "note";
  }

  if (!range.Start.isValid()) {
    os << "linnet: " << label << ": " << text << "\n";
    return;
  }
  llvm::ArrayRef<llvm::SMRange> ranges;
  if (range.End.getPointer() > range.Start.getPointer() + 1)
    ranges = range;
  sourceMgr.PrintMessage(os, range.Start, kind, text, ranges,
                         /*FixIts=*/{}, /*ShowColors=*/false);
}
