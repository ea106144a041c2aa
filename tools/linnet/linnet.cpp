//===- linnet.cpp - The linnet driver -------------------------------------===//
//
// One executable, one subcommand per user task. This file holds `inspect`,
// `check` and `graph`; each later command has a file of its own (Driver.h
// lists them), with its own options. The driver
// only wires stages together (load modules, check declarations and bodies,
// bind generics, print); every message goes through the DiagnosticEngine.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Basic/Errors.h"
#include "linnet/Basic/OutputFile.h"
#include "linnet/Graph/DataflowGraph.h"
#include "linnet/Runtime/ParameterStore.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/BodyChecker.h"
#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/DeclPrinter.h"
#include "linnet/Sema/ModuleLoader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;

namespace {

cl::SubCommand inspectCommand("inspect",
                              "Print the blocks of a model, and with --bind "
                              "its bound generics, entries and parameters");
cl::SubCommand checkCommand("check",
                            "Check every declaration and body of a model");
cl::SubCommand graphCommand("graph",
                            "Draw an entry's dataflow with inferred types");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<file or folder>"),
                               cl::sub(inspectCommand), cl::sub(checkCommand),
                               cl::sub(graphCommand), cl::Required);
cl::list<std::string> includeDirs("I", cl::desc("Add a module search root"),
                                  cl::value_desc("dir"), cl::Prefix,
                                  cl::sub(inspectCommand),
                                  cl::sub(checkCommand), cl::sub(graphCommand));
cl::list<std::string>
    bindings("bind",
             cl::desc("Bind root generics: a config.json, or Name=Value "
                      "(repeatable; later ones override)"),
             cl::value_desc("config.json|Name=Value"), cl::sub(inspectCommand),
             cl::sub(checkCommand), cl::sub(graphCommand));
cl::opt<bool> listObligations("obligations",
                              cl::desc("List every obligation with its status"),
                              cl::sub(checkCommand));
cl::opt<std::string>
    checkpointDir("checkpoint",
                  cl::desc("Bind the generics from DIR/config.json (--bind "
                           "overrides win) and validate the checkpoint in DIR "
                           "against the model"),
                  cl::value_desc("dir"), cl::sub(checkCommand));
cl::opt<std::string> entryName("entry",
                               cl::desc("The entry (or function) to draw"),
                               cl::value_desc("name"), cl::sub(graphCommand),
                               cl::Required);
cl::opt<unsigned> graphDepth("depth",
                             cl::desc("Levels of calls to expand (default 1)"),
                             cl::init(1), cl::sub(graphCommand));
cl::opt<std::string> outputPath("o",
                                cl::desc("Write to FILE.svg, .png or .pdf "
                                         "(through Graphviz `dot`) or "
                                         "FILE.dot; default: DOT "
                                         "on standard output"),
                                cl::value_desc("file"), cl::sub(graphCommand));

cl::opt<bool> listDiagnostics("list-diagnostics",
                              cl::desc("Print every diagnostic and error ID "
                                       "and exit"),
                              cl::Hidden);

int runInspect(const char *argv0) {
  DriverSession session;
  if (!session.load(argv0, inputPath, includeDirs))
    return 1;
  std::optional<BoundModel> bound;
  if (!bindings.empty()) {
    bound = bindModel(session.program, bindings, session.diags);
    if (!bound)
      return 1;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  printBlocks(inspectedBlocks(session.program), os);
  if (bound)
    printBoundModel(*bound, os);
  llvm::outs() << text;
  return 0;
}

int runCheck(const char *argv0) {
  DriverSession session;
  if (!session.load(argv0, inputPath, includeDirs))
    return 1;
  CheckedProgram checked = checkBodies(session.program, session.diags);
  std::optional<BoundModel> bound;
  // A checkpoint's own config comes first, so that --bind overrides it.
  std::vector<std::string> bindArgs;
  if (!checkpointDir.empty()) {
    llvm::SmallString<256> config(checkpointDir.getValue());
    llvm::sys::path::append(config, "config.json");
    bindArgs.push_back(std::string(config));
  }
  bindArgs.insert(bindArgs.end(), bindings.begin(), bindings.end());
  if (!bindArgs.empty() && !session.diags.hadError()) {
    bound = bindModel(session.program, bindArgs, session.diags);
    if (bound)
      proveObligations(checked, *bound, session.diags);
  }
  bool checkpointFailed = false;
  if (bound && !checkpointDir.empty()) {
    std::optional<CheckpointBinding> binding = loadRootBinding(session);
    if (!binding)
      return 1;
    auto store =
        ParameterStore::load(*binding, listParameters(session.program, *bound),
                             checkpointDir, llvm::errs());
    if (!store) {
      reportError(store.takeError());
      checkpointFailed = true;
    } else {
      for (const NonFiniteValues &found : (*store)->nonFiniteParameters()) {
        const LoadedParameter &parameter = *found.parameter;
        reportError(ErrorId::NonFiniteParameters,
                    "tensor `" + parameter.source + "` (parameter `" +
                        parameter.param->path + "`) holds " +
                        describeNonFinite(found.nans, found.infinities,
                                          parameter.param->elementCount()) +
                        "; the model's outputs would not be numbers");
        checkpointFailed = true;
      }
    }
  }
  if (listObligations) {
    for (const Obligation &ob : checked.obligations) {
      auto [line, column] = session.sourceMgr.getLineAndColumn(ob.loc.Start);
      unsigned buffer = session.sourceMgr.FindBufferContainingLoc(ob.loc.Start);
      llvm::outs()
          << session.sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier()
          << ":" << line << ":" << column << ": " << ob.what << ": "
          << ob.statement() << ": " << obligationStatus(ob, bound.has_value())
          << "\n";
    }
  }
  return session.diags.hadError() || checkpointFailed ? 1 : 0;
}

int runGraph(const char *argv0) {
  DriverSession session;
  if (!session.load(argv0, inputPath, includeDirs))
    return 1;
  CheckedProgram checked = checkBodies(session.program, session.diags);
  if (session.diags.hadError())
    return 1;
  if (!bindings.empty() && !bindModel(session.program, bindings, session.diags))
    return 1;
  const BlockDecl *root = findRootBlock(session.program, session.diags);
  if (!root)
    return 1;
  const CheckedFunction *fn = checked.find(root, entryName);
  if (!fn) {
    std::string names;
    for (const MemberDecl &member : root->members)
      if (auto *decl = std::get_if<FnDecl>(&member))
        names += (names.empty() ? "`" : ", `") + decl->name + "`";
    session.diags.report(diag::UnknownEntry, entryName.getValue(),
                         root->qualifiedName(), names);
    return 1;
  }
  std::string dot =
      renderDataflowGraph(checked, *fn, graphDepth,
                          root->qualifiedName() + "." + fn->fn->name + ": " +
                              formatSignature(*fn->fn));
  if (outputPath.empty()) {
    llvm::outs() << dot;
    return 0;
  }
  // The format follows the extension: DOT text, or rendered by Graphviz.
  llvm::StringRef extension = llvm::sys::path::extension(outputPath);
  static const llvm::StringRef rendered[] = {".svg", ".png", ".pdf"};
  bool render = llvm::is_contained(rendered, extension);
  if (!render && extension != ".dot" && extension != ".gv") {
    session.diags.report(diag::UnknownGraphFormat, outputPath.getValue());
    return 1;
  }
  std::string dotPath = outputPath;
  if (render)
    dotPath += ".dot";
  if (llvm::Error error =
          writeOutputFile(dotPath, [&](llvm::raw_ostream &os) { os << dot; }))
    return reportError(std::move(error));
  if (!render)
    return 0;
  auto dotProgram = llvm::sys::findProgramByName("dot");
  if (!dotProgram) {
    session.diags.report(diag::GraphvizMissing, outputPath.getValue(), dotPath);
    return 1;
  }
  std::string message;
  std::string format = "-T" + extension.drop_front().str();
  llvm::StringRef args[] = {*dotProgram, format, dotPath, "-o",
                            outputPath.getValue()};
  int status = llvm::sys::ExecuteAndWait(*dotProgram, args, std::nullopt, {}, 0,
                                         0, &message);
  llvm::sys::fs::remove(dotPath);
  if (status != 0)
    return reportError(ErrorId::OutputUnwritable,
                       "cannot write `" + outputPath +
                           "`: Graphviz `dot` failed" +
                           (message.empty() ? "" : ": " + message));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Past a file-size limit a write fails with EFBIG and is reported with
  // the file's name, like a full disk, instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  cl::ParseCommandLineOptions(argc, argv,
                              "linnet: the Linnet model compiler\n");
  if (listDiagnostics) {
    for (const char *name : allDiagnosticNames())
      llvm::outs() << name << "\n";
    for (const ErrorKind &error : errorCatalogue())
      llvm::outs() << error.id << (error.internal ? " (internal)" : "") << "\n";
    return 0;
  }
  if (inspectCommand)
    return runInspect(argv[0]);
  if (checkCommand)
    return runCheck(argv[0]);
  if (graphCommand)
    return runGraph(argv[0]);
  if (initCheckpointCommand)
    return runInitCheckpoint(argv[0]);
  if (emitCommand)
    return runEmit(argv[0]);
  if (runCommand)
    return runRun(argv[0]);
  if (serveCommand)
    return runServe(argv[0]);
  if (buildCommand)
    return runBuild(argv[0]);
  if (tokenizeCommand)
    return runTokenize(argv[0]);
  if (templateCommand)
    return runTemplate(argv[0]);
  return reportError(ErrorId::CommandMissing,
                     "no command given; try `linnet --help`");
}
