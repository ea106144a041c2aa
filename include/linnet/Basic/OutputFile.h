//===- OutputFile.h - Writing an output file, or saying why not -*- C++ -*-===//
//
// Every file a command writes (logits, emitted IR, graphs, configs) goes
// through one function, so that a failure to open, write or close it (a
// full disk shows only at the close) is one error naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_BASIC_OUTPUTFILE_H
#define LINNET_BASIC_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace linnet {

/// Writes `path` through `write` (a pwrite stream, which LLVM's object-file
/// emission needs). A failure is an OutputUnwritable error
/// naming the file, and a partial regular file is removed (a device such as
/// /dev/full is left alone).
llvm::Error
writeOutputFile(llvm::StringRef path,
                llvm::function_ref<void(llvm::raw_pwrite_stream &)> write);

} // namespace linnet

#endif // LINNET_BASIC_OUTPUTFILE_H
