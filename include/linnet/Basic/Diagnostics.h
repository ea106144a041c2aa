//===- Diagnostics.h - Typed, catalogued diagnostics --------------*- C++
//-*-===//
//
// Every diagnostic is declared once in DiagnosticKinds.def with an ID and the
// types of its arguments; emitting one checks those types at compile time and
// renders `file:line:col: error: message [Id]`, the source line and a caret
// through llvm::SourceMgr. Stages report through one DiagnosticEngine and ask
// it whether errors occurred; nothing is printed behind its back.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_BASIC_DIAGNOSTICS_H
#define LINNET_BASIC_DIAGNOSTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace linnet {

enum class DiagnosticId : unsigned {
#define LINNET_DIAG(Id, Severity, Format, ...) Id,
#define LINNET_NOTE(Id, Format, ...) Id,
#include "linnet/Basic/DiagnosticKinds.def"
};

enum class DiagnosticSeverity { Error, Warning, Note };

/// The static description of one catalogue entry; `Args` are the types its
/// format string expects, so a call with the wrong arguments does not compile.
template <typename... Args> struct DiagnosticKind {
  DiagnosticId id;
  DiagnosticSeverity severity;
  const char *name;
  const char *format;
};

namespace diag {
#define LINNET_DIAG(Id, Severity, Format, ...)                                 \
  inline constexpr DiagnosticKind<__VA_ARGS__> Id{                             \
      DiagnosticId::Id, DiagnosticSeverity::Severity, #Id, Format};
#define LINNET_NOTE(Id, Format, ...)                                           \
  inline constexpr DiagnosticKind<__VA_ARGS__> Id{                             \
      DiagnosticId::Id, DiagnosticSeverity::Note, #Id, Format};
#include "linnet/Basic/DiagnosticKinds.def"
} // namespace diag

/// Every ID in the catalogue, for `linnet --list-diagnostics`.
llvm::ArrayRef<const char *> allDiagnosticNames();

template <typename T> struct TypeIdentity {
  using type = T;
};

/// Collects and prints diagnostics for the sources held by a SourceMgr.
class DiagnosticEngine {
public:
  DiagnosticEngine(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os)
      : sourceMgr(sourceMgr), os(os) {}

  /// Reports at a source range (an invalid range reports without location,
  /// as `linnet: error: ...`).
  template <typename... Args>
  void report(llvm::SMRange range, const DiagnosticKind<Args...> &kind,
              typename TypeIdentity<Args>::type... args) {
    emit(range, kind.severity, kind.name,
         fmt::format(fmt::runtime(kind.format), args...));
  }
  template <typename... Args>
  void report(llvm::SMLoc loc, const DiagnosticKind<Args...> &kind,
              typename TypeIdentity<Args>::type... args) {
    report(llvm::SMRange(loc, loc), kind, args...);
  }
  /// Reports with no source location.
  template <typename... Args>
  void report(const DiagnosticKind<Args...> &kind,
              typename TypeIdentity<Args>::type... args) {
    report(llvm::SMRange(), kind, args...);
  }

  unsigned errorCount() const { return errors; }
  bool hadError() const { return errors != 0; }
  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }

  /// Stops printing (but keeps counting) after this many errors, so a broken
  /// 10 MB file cannot flood the terminal.
  void setErrorLimit(unsigned limit) { errorLimit = limit; }

private:
  void emit(llvm::SMRange range, DiagnosticSeverity severity,
            llvm::StringRef name, const std::string &message);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned errors = 0;
  unsigned errorLimit = 50;
  bool suppressed = false;
};

} // namespace linnet

#endif // LINNET_BASIC_DIAGNOSTICS_H
