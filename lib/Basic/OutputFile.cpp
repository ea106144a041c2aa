//===- OutputFile.cpp - Writing an output file, or saying why not ---------===//

#include "linnet/Basic/OutputFile.h"

#include "linnet/Basic/Errors.h"

#include "llvm/Support/FileSystem.h"

using namespace linnet;

llvm::Error linnet::writeOutputFile(
    llvm::StringRef path,
    llvm::function_ref<void(llvm::raw_pwrite_stream &)> write) {
  auto unwritable = [&](std::error_code ec) {
    return makeError(ErrorId::OutputUnwritable,
                     "cannot write `" + path + "`: " + ec.message());
  };
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return unwritable(ec);
  write(os);
  if (path == "-")
    os.flush(); // standard output is not closed
  else
    os.close(); // a full disk may show only here
  if (!os.has_error())
    return llvm::Error::success();
  ec = os.error();
  os.clear_error(); // reported here, not by the stream's destructor
  if (llvm::sys::fs::is_regular_file(path)) // never /dev/full itself
    llvm::sys::fs::remove(path);
  return unwritable(ec);
}
