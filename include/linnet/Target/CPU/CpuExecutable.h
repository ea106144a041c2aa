//===- CpuExecutable.h - JIT-compiled CPU code and its calling convention -===//
//
// The CPU target's two outputs: a module at CpuStage::LLVM compiled in
// process (CpuExecutable: its objects linked by LLVM's ORC JIT, LLJIT, with
// the OpenMP runtime loaded) and the same module written as relocatable
// object files for an ahead-of-time build; both from compileObjects, which
// keeps objects in the compile cache (CompileCache.h). MemRefDescriptor spells
// out the memref ABI that the `_mlir_ciface_` entry points take and return, so
// callers never build the descriptor structs by hand.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CPU_CPUEXECUTABLE_H
#define LINNET_TARGET_CPU_CPUEXECUTABLE_H

#include "linnet/Target/CPU/CpuPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace linnet {

class CompileCache;

/// A memref descriptor of any rank with the exact layout of MLIR's C
/// interface: `{T *basePtr; T *data; int64_t offset; int64_t sizes[rank];
/// int64_t strides[rank];}` (all fields are 8 bytes on x86-64).
class MemRefDescriptor {
public:
  /// A descriptor of the row-major buffer `data` of `shape`, for an argument.
  static MemRefDescriptor forData(void *data, llvm::ArrayRef<int64_t> shape);
  /// An empty descriptor of `rank`, for a result the callee fills in.
  static MemRefDescriptor forResult(unsigned rank);

  unsigned rank() const { return rank_; }
  /// The start of the allocation: what `free` takes for a returned result.
  void *basePtr() const { return wordToPointer(words[0]); }
  /// The first element (basePtr plus alignment padding).
  void *data() const { return wordToPointer(words[1]); }
  int64_t offset() const { return words[2]; }
  llvm::ArrayRef<int64_t> sizes() const {
    return llvm::ArrayRef<int64_t>(words).slice(3, rank_);
  }
  llvm::ArrayRef<int64_t> strides() const {
    return llvm::ArrayRef<int64_t>(words).slice(3 + rank_, rank_);
  }
  int64_t numElements() const;
  /// Address of the first element, `data + offset` (in elements).
  template <typename T> T *elements() const {
    return static_cast<T *>(data()) + offset();
  }

  /// The ABI struct itself, for a `_mlir_ciface_` parameter.
  void *abiStruct() { return words.data(); }
  /// Size of the ABI struct in bytes.
  size_t abiSize() const { return words.size() * sizeof(int64_t); }

  /// Frees a result's buffer (`free(basePtr)`) unless it is one of `inputs`'
  /// buffers (a function may return an argument unchanged).
  void freeResult(llvm::ArrayRef<MemRefDescriptor> inputs = {});

private:
  explicit MemRefDescriptor(unsigned rank) : rank_(rank), words(3 + 2 * rank) {}
  static void *wordToPointer(int64_t word) {
    return reinterpret_cast<void *>(static_cast<intptr_t>(word));
  }
  friend class CpuExecutable;

  unsigned rank_;
  llvm::SmallVector<int64_t, 11> words;
};

/// How CpuExecutable::compile builds code.
struct CpuCompileOptions {
  /// LLVM optimization level of the IR and of code generation.
  unsigned optLevel = 3;
  /// Shared libraries to load besides the OpenMP runtime (found
  /// automatically) and libmlir_c_runner_utils (for printMemref and a
  /// bf16 fallback).
  llvm::SmallVector<std::string> sharedLibPaths;
  /// Functions of this process the code calls by name (the runtime's
  /// allocation functions, RuntimeCalls.h).
  std::vector<std::pair<const char *, void *>> symbols;
  /// Where the objects are kept between runs; null: compiled every time.
  CompileCache *cache = nullptr;
};

/// Code compiled in process from a module at CpuStage::LLVM; functions are
/// called through their `_mlir_ciface_` (llvm.emit_c_interface) wrappers.
class CpuExecutable {
public:
  ~CpuExecutable();

  static llvm::Expected<std::unique_ptr<CpuExecutable>>
  compile(mlir::ModuleOp module, const CpuCompileOptions &options);

  /// Calls the packed wrapper of `cifaceName` (`_mlir_ciface_f`, or just `f`,
  /// the prefix is added). `args` holds one pointer per C-interface
  /// parameter, pointing at that parameter's value: for a memref parameter,
  /// the address of a `void *` that holds the descriptor's address; a memref
  /// result is the first parameter.
  llvm::Error invokePacked(llvm::StringRef cifaceName,
                           llvm::MutableArrayRef<void *> args);

  /// The packed wrapper of `cifaceName` (as for invokePacked), to call
  /// directly.
  llvm::Expected<void (*)(void **)>
  lookupPacked(llvm::StringRef cifaceName) const;

  /// Calls `name` with memref arguments and results: `results` are filled in
  /// (their buffers belong to the caller, see MemRefDescriptor::freeResult).
  llvm::Error invoke(llvm::StringRef name,
                     llvm::MutableArrayRef<MemRefDescriptor> results,
                     llvm::MutableArrayRef<MemRefDescriptor> args);

  /// Address of a symbol of the compiled code.
  llvm::Expected<void *> lookup(llvm::StringRef symbol) const;

  /// Whether the objects came from the compile cache.
  bool fromCache() const { return cached; }

private:
  CpuExecutable(std::unique_ptr<llvm::orc::LLJIT> jit, bool cached);
  std::unique_ptr<llvm::orc::LLJIT> jit;
  bool cached;
  /// The module's destructors, once its constructors have run.
  void (*destructors)() = nullptr;
};

/// Where the OpenMP runtime (libomp.so from libomp-22-dev) lives, or an
/// error naming the places searched.
llvm::Expected<std::string> findOpenMPRuntime();

/// Whether `cpu` names a CPU that object files can be generated for.
llvm::Error checkObjectCpu(llvm::StringRef cpu);

/// Whether `cpu` (an LLVM CPU name, or `native`: this machine's CPU with the
/// features it reports, which is what the JIT compiles for) multiplies and
/// adds pairs of bf16 values in one instruction (AVX512-BF16), the
/// CpuPipelineOptions::bf16DotProducts the code for it can use.
bool cpuHasBf16DotProducts(llvm::StringRef cpu);

/// The CPU pipeline's options for code that runs on `cpu` (an LLVM CPU name,
/// or `native`): register tiles that fit its vector registers (the defaults
/// for AVX-512's 32; smaller with AVX2's or SSE's 16) and bf16 dot products
/// where it has them.
CpuPipelineOptions cpuPipelineOptionsFor(llvm::StringRef cpu);

/// How compileObjects compiles a module.
struct ObjectCodeOptions {
  /// An LLVM CPU name, or `native`: this machine's, with its features.
  std::string cpu = "x86-64-v3";
  /// Parts generated in parallel, one thread each (functions dealt out).
  unsigned parts = 1;
  /// LLVM's optimization level of the IR and of code generation (0-3).
  unsigned optLevel = 3;
  /// The GPU fatbinaries in section `.nv_fatbin` (`cuobjdump` reads a
  /// binary's there).
  bool gpuBinarySection = false;
  /// The module's constructors and destructors as the functions
  /// `_linnet_constructors` and `_linnet_destructors`, for a JIT to call.
  bool initializerFunctions = false;
  /// Where the objects are kept between runs; null: none.
  CompileCache *cache = nullptr;
};

/// A module's position-independent objects, one a part.
struct ObjectCode {
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  bool fromCache = false;
};

/// `module` (at CpuStage::LLVM) translated to LLVM IR, every C-interface
/// function given a packed wrapper, optimized and compiled as `options`
/// says, or read from the compile cache.
llvm::Expected<ObjectCode> compileObjects(mlir::ModuleOp module,
                                          const ObjectCodeOptions &options);

/// Writes compileObjects' objects of `module` for `cpu` (a generic x86-64
/// level by default, so the files run on any machine of that level) as
/// `model.<i>.o` in `directory`; returns their paths. Link them all with
/// `-fopenmp=libomp`.
llvm::Expected<std::vector<std::string>>
writeObjectFiles(mlir::ModuleOp module, llvm::StringRef directory,
                 llvm::StringRef cpu = "x86-64-v3", unsigned parts = 1,
                 unsigned optLevel = 3, CompileCache *cache = nullptr);

} // namespace linnet

#endif // LINNET_TARGET_CPU_CPUEXECUTABLE_H
