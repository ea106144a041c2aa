//===- SourceFuzz.cpp - libFuzzer target for Linnet sources ---------------===//
//
// Feeds arbitrary bytes through everything `linnet inspect`, `check` and
// `graph` run: the encoding checks, the parser with its recovery, module
// loading (imports resolve against the real stdlib), the declaration
// checker, the printer, the body checker, binding with every root generic
// given a value, the obligations, and the dataflow graph of each entry. Any
// crash, sanitizer report, hang or unbounded recursion here is a bug a user
// could hit.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Graph/DataflowGraph.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/BodyChecker.h"
#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/DeclPrinter.h"
#include "linnet/Sema/ModuleLoader.h"

#include "llvm/Support/raw_ostream.h"

using namespace linnet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sourceMgr;
  std::string output;
  llvm::raw_string_ostream os(output);
  DiagnosticEngine diags(sourceMgr, os);

  Program program;
  ModuleLoader loader(diags, {LINNET_SOURCE_DIR "/stdlib"});
  loader.loadText("fuzz",
                  llvm::StringRef(reinterpret_cast<const char *>(data), size),
                  program);
  loader.resolveImports(program);
  if (!checkDeclarations(program, diags))
    return 0;
  printBlocks(inspectedBlocks(program), os);
  CheckedProgram checked = checkBodies(program, diags);
  for (const auto &[key, function] : checked.functions)
    if (function.ok && function.fn->isEntry)
      os << renderDataflowGraph(checked, function, 2, function.fn->name);

  // Bind the root, when there is one, with small sizes for every generic.
  for (const auto &block : program.blocks) {
    if (!block->hasEntries())
      continue;
    std::vector<std::string> bindings;
    int64_t size = 2;
    for (const GenericDecl &generic : block->generics)
      if (generic.kind == GenericKind::Dim)
        bindings.push_back(generic.name + "=" + std::to_string(size++ % 7 + 1));
      else if (generic.kind == GenericKind::Float)
        bindings.push_back(generic.name + "=f32");
    if (auto bound = bindModel(program, bindings, diags)) {
      printBoundModel(*bound, os);
      proveObligations(checked, *bound, diags);
    }
    break;
  }
  return 0;
}
