//===- KernelNames.cpp - what the CUDA target's kernels are called --------===//

#include "KernelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <optional>

using namespace mlir;

static void sanitize(std::string &name) {
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
}

std::string linnet::kernelModuleName(func::FuncOp func) {
  std::string name = func.getSymName().str() + "_kernels";
  sanitize(name);
  return name;
}

std::string linnet::kernelName(func::FuncOp func, unsigned index,
                               llvm::StringRef kind, Location loc) {
  std::string name = func.getSymName().str() + "_" + std::to_string(index);
  if (!kind.empty()) {
    name += "_" + kind.str();
    // The innermost call site's line in a Linnet source (the first file
    // location of a call-site chain is the callee's).
    std::optional<FileLineColLoc> source;
    loc->walk([&](Location nested) {
      auto file = dyn_cast<FileLineColLoc>(nested);
      if (file && file.getFilename().getValue().ends_with(".linnet")) {
        source = file;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (source)
      name += "_" +
              llvm::sys::path::stem(source->getFilename().getValue()).str() +
              "_" + std::to_string(source->getLine());
  }
  sanitize(name);
  return name;
}

gpu::LaunchOp linnet::createNamedLaunch(RewriterBase &rewriter, Location loc,
                                        Value blocks, Value threads,
                                        TypeRange workgroup,
                                        llvm::StringRef name) {
  MLIRContext *context = rewriter.getContext();
  Operation *parent = rewriter.getInsertionBlock()->getParentOp();
  auto func = dyn_cast<func::FuncOp>(parent);
  if (!func)
    func = parent->getParentOfType<func::FuncOp>();
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, blocks, one, one, threads, one, one,
      /*dynamicSharedMemorySize=*/{}, /*asyncTokenType=*/{}, {}, workgroup,
      /*privateAttributions=*/{}, {}, {}, {},
      /*module=*/FlatSymbolRefAttr::get(context, kernelModuleName(func)),
      /*function=*/FlatSymbolRefAttr::get(context, name));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(rewriter, loc);
  return launch;
}
