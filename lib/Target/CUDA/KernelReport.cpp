//===- KernelReport.cpp - What each GPU kernel uses and moves -------------===//

#include "linnet/Target/CUDA/KernelReport.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Codegen/ShapeBounds.h"

#include "KernelNames.h"
#include "LaunchParts.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace linnet {
namespace {

// The fatbinary container (fatbinary's own format, as the CUDA runtime
// reads it): a 16-byte header, then entries, each a header and an image.
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint16_t kEntryKindElf = 2;
constexpr uint16_t kEntryCompressed = 0x2000;

// `.nv.info` attributes (EIATTR_*): one byte of format, one of kind; format
// 4 (EIFMT_SVAL) carries a 16-bit size and that many bytes, 3 (EIFMT_HVAL)
// and 2 (EIFMT_BVAL) a 16-bit value, 1 (EIFMT_NVAL) nothing.
constexpr uint8_t kFormatSizedValue = 4;
constexpr uint8_t kFrameSize = 0x11, kRegisterCount = 0x2f, kMaxThreads = 0x05;

uint32_t read32(const uint8_t *p) { return llvm::support::endian::read32le(p); }

/// Calls `visit(kind, payload)` for each attribute of a `.nv.info` section.
template <typename Visit>
llvm::Error forEachAttribute(llvm::ArrayRef<uint8_t> section,
                             llvm::StringRef sectionName, Visit visit) {
  size_t at = 0;
  while (at + 2 <= section.size()) {
    uint8_t format = section[at], kind = section[at + 1];
    if (format != kFormatSizedValue) {
      at += format == 1 ? 2 : 4;
      continue;
    }
    if (at + 4 > section.size())
      break;
    uint16_t size = llvm::support::endian::read16le(&section[at + 2]);
    if (at + 4 + size > section.size())
      return makeError(ErrorId::TargetFailed,
                       "a cubin's " + sectionName.str() +
                           " has an attribute past its end");
    visit(kind, section.slice(at + 4, size));
    at += 4 + size;
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error readCubinResources(llvm::StringRef cubin,
                               llvm::StringMap<KernelResources> &kernels) {
  using ELF = llvm::object::ELF64LE;
  auto file = llvm::object::ELFFile<ELF>::create(cubin);
  if (!file)
    return file.takeError();
  auto sections = file->sections();
  if (!sections)
    return sections.takeError();
  const ELF::Shdr *symtab = nullptr;
  for (const ELF::Shdr &section : *sections)
    if (section.sh_type == llvm::ELF::SHT_SYMTAB)
      symtab = &section;
  if (!symtab)
    return makeError(ErrorId::TargetFailed, "a cubin without a symbol table");
  auto symbols = file->symbols(symtab);
  auto names = file->getStringTableForSymtab(*symtab);
  if (!symbols || !names)
    return makeError(ErrorId::TargetFailed, "a cubin's symbol table is bad");

  // Kernels are the global functions; remember their symbol indices.
  llvm::StringMap<KernelResources> found;
  llvm::DenseMap<uint32_t, KernelResources *> bySymbol;
  bool callsMalloc = false;
  for (auto [index, symbol] : llvm::enumerate(*symbols)) {
    llvm::Expected<llvm::StringRef> name = symbol.getName(*names);
    if (!name)
      return name.takeError();
    if (symbol.isUndefined() && (*name == "malloc" || *name == "free"))
      callsMalloc = true;
    if (symbol.getType() == llvm::ELF::STT_FUNC &&
        symbol.getBinding() == llvm::ELF::STB_GLOBAL && !symbol.isUndefined())
      bySymbol[index] = &found[*name];
  }
  for (auto &[name, resources] : found)
    resources.callsMalloc = callsMalloc;

  bool reservesShared = false;
  for (const ELF::Shdr &section : *sections) {
    auto name = file->getSectionName(section);
    if (!name)
      return name.takeError();
    // Only the attribute sections are read: the shared ones are NOBITS.
    llvm::Expected<llvm::ArrayRef<uint8_t>> contents =
        name->starts_with(".nv.info") ? file->getSectionContents(section)
                                      : llvm::ArrayRef<uint8_t>();
    if (!contents)
      return contents.takeError();
    if (*name == ".nv.info") {
      // Module-wide: (symbol, value) pairs.
      if (llvm::Error error = forEachAttribute(
              *contents, *name, [&](uint8_t kind, llvm::ArrayRef<uint8_t> v) {
                if (v.size() != 8)
                  return;
                KernelResources *kernel = bySymbol.lookup(read32(&v[0]));
                if (!kernel)
                  return;
                if (kind == kRegisterCount)
                  kernel->registers = read32(&v[4]);
                else if (kind == kFrameSize)
                  kernel->stackBytes = read32(&v[4]);
              }))
        return error;
    } else if (name->starts_with(".nv.info.")) {
      KernelResources *kernel = bySymbol.lookup(section.sh_info);
      if (!kernel)
        continue;
      if (llvm::Error error = forEachAttribute(
              *contents, *name, [&](uint8_t kind, llvm::ArrayRef<uint8_t> v) {
                if (kind == kMaxThreads && v.size() == 12)
                  kernel->maxThreads =
                      read32(&v[0]) * read32(&v[4]) * read32(&v[8]);
              }))
        return error;
    } else if (*name == ".nv.shared.reserved.0") {
      reservesShared = true;
    } else if (name->starts_with(".nv.shared.")) {
      auto kernel = found.find(name->drop_front(strlen(".nv.shared.")));
      if (kernel != found.end())
        kernel->second.sharedBytes = section.sh_size;
    }
  }
  // From sm_80 on, a kernel's shared section begins with the 1 KiB the
  // system reserves (`.nv.shared.reserved.0`); ptxas -v counts without it.
  constexpr uint64_t kReservedShared = 1024;
  if (reservesShared)
    for (auto &[name, resources] : found)
      if (resources.sharedBytes >= kReservedShared)
        resources.sharedBytes -= kReservedShared;
  for (auto &[name, resources] : found)
    kernels[name] = resources;
  return llvm::Error::success();
}

llvm::Expected<llvm::StringMap<KernelResources>>
readFatbinaryResources(llvm::StringRef fatbinary) {
  llvm::StringMap<KernelResources> kernels;
  const auto *bytes = reinterpret_cast<const uint8_t *>(fatbinary.data());
  size_t at = 0;
  auto bad = [](llvm::StringRef why) {
    return makeError(ErrorId::TargetFailed, "a bad fatbinary: " + why.str());
  };
  while (at + 16 <= fatbinary.size()) {
    if (read32(bytes + at) != kFatbinMagic)
      return bad("no fatbinary header where one should start");
    uint16_t headerBytes = llvm::support::endian::read16le(bytes + at + 6);
    uint64_t size = llvm::support::endian::read64le(bytes + at + 8);
    size_t entry = at + headerBytes, end = entry + size;
    if (end > fatbinary.size())
      return bad("a container runs past its end");
    while (entry + 16 <= end) {
      uint16_t kind = llvm::support::endian::read16le(bytes + entry);
      uint32_t entryHeader = read32(bytes + entry + 4);
      uint64_t imageBytes = llvm::support::endian::read64le(bytes + entry + 8);
      uint32_t flags = entry + 28 <= end ? read32(bytes + entry + 24) : 0;
      if (entry + entryHeader + imageBytes > end)
        return bad("an image runs past its container");
      if (kind == kEntryKindElf) {
        if (flags & kEntryCompressed)
          return bad("a compressed cubin (build without compression)");
        if (llvm::Error error = readCubinResources(
                fatbinary.substr(entry + entryHeader, imageBytes), kernels))
          return std::move(error);
      }
      entry += entryHeader + imageBytes;
    }
    // Containers are 8-byte aligned one after another.
    at = (end + 7) & ~size_t(7);
  }
  return kernels;
}

llvm::Expected<llvm::StringMap<KernelResources>>
readModuleResources(ModuleOp module) {
  llvm::StringMap<KernelResources> kernels;
  llvm::Error failed = llvm::Error::success();
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute each : binary.getObjects()) {
      auto object = llvm::cast<gpu::ObjectAttr>(each);
      llvm::StringRef blob = object.getObject().getValue();
      llvm::Expected<llvm::StringMap<KernelResources>> found =
          object.getFormat() == gpu::CompilationTarget::Fatbin
              ? readFatbinaryResources(blob)
              : llvm::Expected<llvm::StringMap<KernelResources>>(
                    llvm::StringMap<KernelResources>());
      if (object.getFormat() == gpu::CompilationTarget::Binary) {
        if (llvm::Error error = readCubinResources(blob, *found)) {
          failed = std::move(error);
          return WalkResult::interrupt();
        }
      }
      if (!found) {
        failed = found.takeError();
        return WalkResult::interrupt();
      }
      for (auto &[name, resources] : *found)
        kernels[name] = resources;
    }
    return WalkResult::advance();
  });
  if (failed)
    return std::move(failed);
  return kernels;
}

namespace {

/// Whether a kernel reads and writes each of its operands, following views.
struct OperandUse {
  bool read = false, written = false;
};

/// Whether `op` is in `phase` (a chained kernel's phase loop), where one
/// is given.
bool inPhase(Operation *op, Operation *phase) {
  return !phase || phase->isAncestor(op);
}

/// How `buffer` (a kernel argument or a view of it) is used, in `phase`
/// alone where one is given.
void useOf(Value buffer, OperandUse &use, Operation *phase) {
  for (Operation *user : buffer.getUsers()) {
    if (auto view = llvm::dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == buffer)
        for (Value result : user->getResults())
          useOf(result, use, phase);
      continue;
    }
    if (!inPhase(user, phase))
      continue;
    auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects) {
      use.read = use.written = true; // Unknown: count it both ways.
      continue;
    }
    llvm::SmallVector<MemoryEffects::EffectInstance> onBuffer;
    effects.getEffectsOnValue(buffer, onBuffer);
    for (const MemoryEffects::EffectInstance &effect : onBuffer) {
      use.read |= llvm::isa<MemoryEffects::Read>(effect.getEffect());
      use.written |= llvm::isa<MemoryEffects::Write>(effect.getEffect());
    }
  }
}

/// Constant bounds (closed) of an integer or index value, either missing
/// where there is none.
struct Interval {
  std::optional<int64_t> low, high;
};

/// The bounds ValueBounds finds for an index `value`, or for dimension
/// `dim` of a shaped one.
Interval valueBounds(Value value, std::optional<int64_t> dim = std::nullopt) {
  Interval bounds;
  auto variable = [&] {
    return dim ? ValueBoundsConstraintSet::Variable(value, *dim)
               : ValueBoundsConstraintSet::Variable(value);
  };
  FailureOr<int64_t> low = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::LB, variable());
  FailureOr<int64_t> high = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, variable(),
      /*stopCondition=*/nullptr, /*closedUB=*/true);
  if (succeeded(low))
    bounds.low = *low;
  if (succeeded(high))
    bounds.high = *high;
  return bounds;
}

std::optional<int64_t> add(std::optional<int64_t> a, std::optional<int64_t> b,
                           int64_t sign = 1) {
  if (!a || !b)
    return std::nullopt;
  return *a + sign * *b;
}

std::optional<int64_t> pick(std::optional<int64_t> a, std::optional<int64_t> b,
                            bool larger) {
  if (!a || !b)
    return std::nullopt;
  return larger ? std::max(*a, *b) : std::min(*a, *b);
}

/// Bounds of host values and buffer sizes by interval arithmetic over the
/// ops that compute them, where ValueBounds has none: MLIR 22's bounds no
/// arith.minsi or maxsi, which lower-affine leaves of a prompt's attention's
/// affine.min and max (its blocks of keys, the queries a block sees), so it
/// bounds neither those buffers nor that loop. Each value is bounded once a
/// query (a value several ops read is not walked again), to a depth.
class IntervalBounds {
public:
  Interval of(Value value) {
    auto it = values.find(value);
    if (it != values.end())
      return it->second;
    Interval result = depth > kMaxDepth ? valueBounds(value) : compute(value);
    return values[value] = result;
  }

  /// The bounds of dimension `dim` of buffer `value`.
  Interval ofDimension(Value value, int64_t dim) {
    auto key = std::make_pair(value, dim);
    auto it = dimensions.find(key);
    if (it != dimensions.end())
      return it->second;
    Interval result = depth > kMaxDepth ? valueBounds(value, dim)
                                        : computeDimension(value, dim);
    return dimensions[key] = result;
  }

private:
  static constexpr unsigned kMaxDepth = 64;
  llvm::DenseMap<Value, Interval> values;
  llvm::DenseMap<std::pair<Value, int64_t>, Interval> dimensions;
  unsigned depth = 0;

  /// The bounds of `value` one level down.
  Interval below(Value value) {
    ++depth;
    Interval result = of(value);
    --depth;
    return result;
  }
  Interval belowDimension(Value value, int64_t dim) {
    ++depth;
    Interval result = ofDimension(value, dim);
    --depth;
    return result;
  }

  /// Its static size, else the size operand of the op that made the buffer
  /// or the view that took it.
  Interval computeDimension(Value value, int64_t dim) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type)
      return {};
    if (!type.isDynamicDim(dim))
      return {type.getDimSize(dim), type.getDimSize(dim)};
    Operation *op = value.getDefiningOp();
    auto of = [&](OpFoldResult size) -> Interval {
      if (std::optional<int64_t> known = getConstantIntValue(size))
        return {*known, *known};
      return below(cast<Value>(size));
    };
    if (auto alloc = dyn_cast_or_null<memref::AllocOp>(op))
      return of(alloc.getMixedSizes()[dim]);
    if (auto alloc = dyn_cast_or_null<memref::AllocaOp>(op))
      return of(alloc.getMixedSizes()[dim]);
    if (auto cast = dyn_cast_or_null<memref::CastOp>(op))
      return belowDimension(cast.getSource(), dim);
    if (auto view = dyn_cast_or_null<memref::SubViewOp>(op)) {
      llvm::SmallBitVector dropped = view.getDroppedDims();
      SmallVector<OpFoldResult> sizes = view.getMixedSizes();
      for (unsigned d = 0, kept = 0; d < sizes.size(); ++d)
        if (!dropped.test(d) && kept++ == dim)
          return of(sizes[d]);
      return {};
    }
    if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(op))
      return of(expand.getMixedOutputShape()[dim]);
    // A reshape by a shape the host stored in a stack buffer (a block's
    // result back to [B, S, H]): the value stored at that size's place.
    if (auto reshape = dyn_cast_or_null<memref::ReshapeOp>(op)) {
      Value shape = reshape.getShape();
      if (!shape.getDefiningOp<memref::AllocaOp>())
        return {};
      Value stored;
      for (Operation *user : shape.getUsers()) {
        auto store = dyn_cast<memref::StoreOp>(user);
        if (!store)
          continue;
        std::optional<int64_t> at = getConstantIntValue(store.getIndices()[0]);
        if (!at)
          return {};
        if (*at != dim)
          continue;
        if (stored)
          return {};
        stored = store.getValueToStore();
      }
      return stored ? below(stored) : Interval{};
    }
    return valueBounds(value, dim);
  }

  /// The bounds of an index or integer `value`.
  Interval compute(Value value) {
    if (std::optional<int64_t> known = getConstantIntValue(value))
      return {*known, *known};
    Operation *op = value.getDefiningOp();
    auto operand = [&](unsigned i) { return below(op->getOperand(i)); };
    if (auto loop = scf::getForInductionVarOwner(value)) {
      Interval first = below(loop.getLowerBound());
      Interval last = below(loop.getUpperBound());
      return {first.low, add(last.high, 1, -1)};
    }
    if (!op)
      return valueBounds(value);
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
      return operand(0);
    if (isa<arith::AddIOp>(op)) {
      Interval a = operand(0), b = operand(1);
      return {add(a.low, b.low), add(a.high, b.high)};
    }
    if (isa<arith::SubIOp>(op)) {
      Interval a = operand(0), b = operand(1);
      return {add(a.low, b.high, -1), add(a.high, b.low, -1)};
    }
    if (isa<arith::MinSIOp, arith::MaxSIOp>(op)) {
      bool larger = isa<arith::MaxSIOp>(op);
      Interval a = operand(0), b = operand(1);
      // The larger of two values is at least either's lower bound; the
      // smaller at most either's upper bound.
      std::optional<int64_t> low = pick(a.low, b.low, larger);
      std::optional<int64_t> high = pick(a.high, b.high, larger);
      if (larger && !low)
        low = a.low ? a.low : b.low;
      if (!larger && !high)
        high = a.high ? a.high : b.high;
      return {low, high};
    }
    if (isa<arith::MulIOp>(op)) {
      // Of two values at least 0 (sizes, counts).
      Interval a = operand(0), b = operand(1);
      if (!a.low || !b.low || *a.low < 0 || *b.low < 0)
        return valueBounds(value);
      std::optional<int64_t> high;
      if (a.high && b.high)
        high = *a.high * *b.high;
      return {*a.low * *b.low, high};
    }
    if (isa<arith::DivUIOp, arith::CeilDivUIOp>(op)) {
      // Of a size or count: a low bound below 0 is the intervals' imprecision
      // (a block's keys, `count - first` with `first` a loop's index below
      // `count`), not a negative value.
      Interval a = operand(0);
      std::optional<int64_t> by = getConstantIntValue(op->getOperand(1));
      if (!by || *by < 1 || !a.high || *a.high < 0)
        return valueBounds(value);
      bool ceil = isa<arith::CeilDivUIOp>(op);
      auto divide = [&](int64_t x) {
        return ceil ? llvm::divideCeil(x, *by) : x / *by;
      };
      return {divide(std::max<int64_t>(0, a.low.value_or(0))), divide(*a.high)};
    }
    if (auto dim = dyn_cast<memref::DimOp>(op))
      if (std::optional<int64_t> index = dim.getConstantIndex())
        return belowDimension(dim.getSource(), *index);
    return valueBounds(value);
  }
};

/// A constant upper bound (closed) of an index `value`: the tighter of the
/// intervals' and ValueBounds' (which relates values the intervals take
/// apart: `n - (n - 5)` is 5 to it).
std::optional<int64_t> upperBound(Value value) {
  std::optional<int64_t> interval = IntervalBounds().of(value).high;
  std::optional<int64_t> related = valueBounds(value).high;
  if (interval && related)
    return std::min(*interval, *related);
  return interval ? interval : related;
}

/// The most iterations `loop` runs: its trip count, else from bounds of
/// its bounds (a prompt's attention's blocks of keys: at most the cache's
/// length over the block's); none where there are none.
std::optional<uint64_t> boundedTrips(scf::ForOp loop) {
  if (std::optional<APInt> trips = loop.getStaticTripCount())
    return trips->getZExtValue();
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  IntervalBounds bounds;
  std::optional<int64_t> first = bounds.of(loop.getLowerBound()).low;
  std::optional<int64_t> last = bounds.of(loop.getUpperBound()).high;
  if (!step || *step < 1 || !first || !last)
    return std::nullopt;
  // The loop's upper bound is exclusive: at most (last - first) / step
  // iterations, rounded up.
  return uint64_t(
      std::max<int64_t>(0, llvm::divideCeil(*last - *first, *step)));
}

unsigned elementBytes(Type type) {
  unsigned bits = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  return (bits + 7) / 8;
}

/// The bytes of buffer `value`, each dynamic size at its upper bound; none
/// where one has no constant bound.
std::optional<uint64_t> boundedBytes(Value value) {
  std::optional<int64_t> elements = linnet::codegen::boundedElementCount(value);
  if (!elements) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type)
      return std::nullopt;
    IntervalBounds bounds;
    int64_t count = 1;
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      std::optional<int64_t> size = bounds.ofDimension(value, dim).high;
      if (!size || *size < 0)
        return std::nullopt;
      count *= *size;
    }
    elements = count;
  }
  return uint64_t(*elements) *
         elementBytes(llvm::cast<MemRefType>(value.getType()).getElementType());
}

/// How many different views the subview `view` may be in one block: the
/// product of the iterations of the loops around it in the kernel whose
/// body computes one of its operands (a routed expert's rows, in a loop over
/// a tile's slots, each slot's expert read in it); a loop the block's threads
/// share (from the thread id in steps of the block size) counts all its
/// iterations. None where a loop's count has no bound.
std::optional<uint64_t> viewsInLoops(memref::SubViewOp view) {
  uint64_t views = 1;
  for (Operation *parent = view->getParentOp();
       parent && !llvm::isa<gpu::GPUFuncOp>(parent);
       parent = parent->getParentOp()) {
    auto loop = llvm::dyn_cast<scf::ForOp>(parent);
    // A chained kernel's phase runs a block's iteration per block it stands
    // for, counted as the part's blocks.
    if (!loop || loop->hasAttr(kLaunchPartAttr))
      continue;
    bool varies = llvm::any_of(view->getOperands(), [&](Value operand) {
      return loop.getRegion().isAncestor(operand.getParentRegion());
    });
    if (!varies)
      continue;
    std::optional<int64_t> upper = upperBound(loop.getUpperBound());
    if (!upper)
      return std::nullopt;
    Operation *stepDef = loop.getStep().getDefiningOp();
    if (llvm::isa_and_nonnull<gpu::BlockDimOp>(stepDef) &&
        loop.getLowerBound().getDefiningOp<gpu::ThreadIdOp>()) {
      views *= uint64_t(std::max<int64_t>(*upper, 0));
      continue;
    }
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    FailureOr<int64_t> lower = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::LB, loop.getLowerBound());
    if (!step || *step <= 0)
      return std::nullopt;
    int64_t from = succeeded(lower) ? std::max<int64_t>(*lower, 0) : 0;
    views *= uint64_t(std::max<int64_t>(0, *upper - from + *step - 1) / *step);
  }
  return views;
}

/// The bytes one block may touch through `view` (a kernel argument or a
/// view of it) with the users `counts` accepts: the sum of the subviews
/// they take (each times the views it may be in the block's loops) where
/// every access goes through one, else all of `view`; none where neither
/// is bounded.
std::optional<uint64_t>
blockFootprint(Value view, llvm::function_ref<bool(Operation *)> counts) {
  std::optional<uint64_t> whole = boundedBytes(view);
  uint64_t parts = 0;
  for (Operation *user : view.getUsers()) {
    if (!counts(user))
      continue;
    if (auto subview = llvm::dyn_cast<memref::SubViewOp>(user);
        subview && subview.getSource() == view) {
      std::optional<uint64_t> part =
          blockFootprint(subview.getResult(), [](Operation *) { return true; });
      std::optional<uint64_t> views = viewsInLoops(subview);
      if (!part || !views)
        return whole;
      parts += *part * *views;
      continue;
    }
    // Reading a view's address or sizes touches none of it.
    if (llvm::isa<memref::ExtractAlignedPointerAsIndexOp, memref::DimOp>(user))
      continue;
    if (auto metadata = llvm::dyn_cast<memref::ExtractStridedMetadataOp>(user);
        metadata && metadata.getBaseBuffer().use_empty())
      continue;
    return whole;
  }
  return whole ? std::min(*whole, parts) : parts;
}

/// The bytes all `blocks` blocks may touch through kernel argument
/// `argument`: each block's footprint times the blocks, a merged kernel's
/// parts (LaunchParts.h) each with its own block count.
std::optional<uint64_t> gridFootprint(BlockArgument argument, uint64_t blocks,
                                      Operation *phase) {
  llvm::SetVector<Operation *> parts;
  for (Operation *user : argument.getUsers()) {
    if (inPhase(user, phase)) {
      parts.insert(linnet::enclosingLaunchPart(user));
      continue;
    }
    // A view taken outside every phase (none is, today) bounds nothing.
    Operation *top = argument.getOwner()->findAncestorOpInBlock(*user);
    if (!top || !top->hasAttr(kLaunchPartAttr))
      return std::nullopt;
  }
  uint64_t total = 0;
  for (Operation *part : parts) {
    std::optional<uint64_t> footprint =
        blockFootprint(argument, [&](Operation *user) {
          return inPhase(user, phase) &&
                 linnet::enclosingLaunchPart(user) == part;
        });
    if (!footprint)
      return std::nullopt;
    std::optional<int64_t> partBlocks =
        part ? linnet::launchPartBlocks(part) : std::nullopt;
    total += *footprint * (partBlocks ? uint64_t(*partBlocks) : blocks);
  }
  return total;
}

/// The kernel argument `value` is a view of, if it is one.
BlockArgument argumentOf(Value value, gpu::GPUFuncOp kernel) {
  while (true) {
    if (auto argument = llvm::dyn_cast<BlockArgument>(value))
      return argument.getOwner()->getParentOp() == kernel.getOperation()
                 ? argument
                 : BlockArgument();
    auto view = value.getDefiningOp<ViewLikeOpInterface>();
    if (!view)
      return BlockArgument();
    value = view.getViewSource();
  }
}

/// How many times at most `op` runs in one thread of `kernel`, launched
/// with `threads` threads a block and `blocks` blocks: the product of its
/// loops' trip counts (from a lower bound of 0 where none is known; a loop
/// in steps of the block's or grid's size at that size). None where a loop
/// is not bounded.
std::optional<uint64_t> runsPerThread(Operation *op, gpu::GPUFuncOp kernel,
                                      int64_t threads, int64_t blocks) {
  uint64_t runs = 1;
  for (Operation *parent = op->getParentOp();
       parent && parent != kernel.getOperation();
       parent = parent->getParentOp()) {
    if (llvm::isa<scf::IfOp>(parent) || parent->hasAttr(kLaunchPartAttr))
      continue;
    auto loop = llvm::dyn_cast<scf::ForOp>(parent);
    if (!loop)
      return std::nullopt;
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (Operation *def = loop.getStep().getDefiningOp()) {
      if (llvm::isa<gpu::BlockDimOp>(def))
        step = threads;
      else if (llvm::isa<gpu::GridDimOp>(def))
        step = blocks;
    }
    std::optional<int64_t> upper = upperBound(loop.getUpperBound());
    if (!step || *step <= 0 || !upper)
      return std::nullopt;
    FailureOr<int64_t> lower = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::LB, loop.getLowerBound());
    int64_t from = succeeded(lower) ? std::max<int64_t>(*lower, 0) : 0;
    runs *= uint64_t(std::max<int64_t>(0, *upper - from + *step - 1) / *step);
  }
  return runs;
}

/// Upper bounds of the bytes each argument of `kernel` is read and written
/// through loads and stores, by argument number: each access's bytes times
/// the times it runs in all threads; none for an argument some other op
/// reads or writes, or one accessed in a loop with no bound.
struct AccessBounds {
  llvm::DenseMap<unsigned, std::optional<uint64_t>> read, written;
};

AccessBounds accessBoundsOf(gpu::GPUFuncOp kernel, int64_t threads,
                            int64_t blocks, Operation *phase) {
  AccessBounds bounds;
  auto add = [&](llvm::DenseMap<unsigned, std::optional<uint64_t>> &into,
                 BlockArgument argument, std::optional<uint64_t> bytes) {
    auto [it, inserted] =
        into.try_emplace(argument.getArgNumber(), std::optional<uint64_t>(0));
    if (!bytes || !it->second)
      it->second = std::nullopt;
    else
      *it->second += *bytes;
  };
  kernel.walk([&](Operation *op) {
    if (!inPhase(op, phase))
      return;
    Value memref;
    Type accessed;
    bool store = false;
    if (auto load = llvm::dyn_cast<memref::LoadOp>(op)) {
      memref = load.getMemRef();
      accessed = load.getType();
    } else if (auto write = llvm::dyn_cast<memref::StoreOp>(op)) {
      memref = write.getMemRef();
      accessed = write.getValueToStore().getType();
      store = true;
    } else if (auto load = llvm::dyn_cast<vector::LoadOp>(op)) {
      memref = load.getBase();
      accessed = load.getType();
    } else if (auto write = llvm::dyn_cast<vector::StoreOp>(op)) {
      memref = write.getBase();
      accessed = write.getValueToStore().getType();
      store = true;
    } else {
      // Any other op with a memory effect on an argument leaves it unbounded.
      auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects)
        return;
      llvm::SmallVector<MemoryEffects::EffectInstance> all;
      effects.getEffects(all);
      for (const MemoryEffects::EffectInstance &effect : all) {
        Value on = effect.getValue();
        if (!on || !llvm::isa<MemRefType>(on.getType()))
          continue;
        if (BlockArgument argument = argumentOf(on, kernel)) {
          if (llvm::isa<MemoryEffects::Read>(effect.getEffect()))
            add(bounds.read, argument, std::nullopt);
          if (llvm::isa<MemoryEffects::Write>(effect.getEffect()))
            add(bounds.written, argument, std::nullopt);
        }
      }
      return;
    }
    BlockArgument argument = argumentOf(memref, kernel);
    if (!argument)
      return;
    uint64_t bytes = elementBytes(getElementTypeOrSelf(accessed));
    if (auto vector = llvm::dyn_cast<VectorType>(accessed))
      bytes *= uint64_t(vector.getNumElements());
    std::optional<uint64_t> runs = runsPerThread(op, kernel, threads, blocks);
    // A merged kernel's part runs on its own blocks.
    std::optional<int64_t> partBlocks;
    if (Operation *part = linnet::enclosingLaunchPart(op))
      partBlocks = linnet::launchPartBlocks(part);
    std::optional<uint64_t> total;
    if (runs)
      total = *runs * bytes * uint64_t(threads) *
              uint64_t(partBlocks.value_or(blocks));
    add(store ? bounds.written : bounds.read, argument, total);
  });
  return bounds;
}

/// How many times a host op runs in one call: the product of the bounded
/// trip counts of its host loops, a loop with no bound counted once and
/// noted in `unbounded`.
struct HostRuns {
  uint64_t count = 1;
  bool unbounded = false;
};

HostRuns hostRuns(Operation *op) {
  HostRuns runs;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    if (std::optional<uint64_t> trips = boundedTrips(loop))
      runs.count *= *trips;
    else
      runs.unbounded = true;
  }
  return runs;
}

/// Adds to `result` the bytes `launch` of `kernel` (none where unknown)
/// moves in `phase` (all of it where none is given).
void addPhaseBytes(KernelLaunch &result, gpu::LaunchFuncOp launch,
                   gpu::GPUFuncOp kernel, int64_t blocks, int64_t threads,
                   Operation *phase) {
  AccessBounds accesses;
  if (kernel && blocks > 0 && threads > 0)
    accesses = accessBoundsOf(kernel, threads, blocks, phase);
  for (auto [index, operand] : llvm::enumerate(launch.getKernelOperands())) {
    if (!llvm::isa<MemRefType>(operand.getType()))
      continue;
    std::optional<uint64_t> whole = boundedBytes(operand);
    if (!whole)
      continue; // Counted once, in dynamicOperands.
    OperandUse use{true, true};
    uint64_t bytes = *whole;
    if (kernel && index < kernel.getNumArguments()) {
      BlockArgument argument = kernel.getArgument(index);
      use = OperandUse();
      useOf(argument, use, phase);
      // No more than the blocks' views of it cover.
      if (blocks > 0)
        if (std::optional<uint64_t> footprint =
                gridFootprint(argument, uint64_t(blocks), phase))
          bytes = std::min(bytes, *footprint);
    }
    // No more than the loads or stores of it move.
    unsigned number = index;
    auto moved =
        [&](const llvm::DenseMap<unsigned, std::optional<uint64_t>> &from) {
          auto it = from.find(number);
          if (it == from.end())
            return bytes;
          return it->second ? std::min(bytes, *it->second) : bytes;
        };
    if (use.read)
      result.bytesRead += moved(accesses.read);
    if (use.written)
      result.bytesWritten += moved(accesses.written);
  }
}

KernelLaunch launchOf(gpu::LaunchFuncOp launch) {
  KernelLaunch result;
  result.kernel = launch.getKernelName().str();
  HostRuns runs = hostRuns(launch);
  result.count = runs.count;
  result.inRunTimeLoop = runs.unbounded;
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues(),
                  block = launch.getBlockSizeOperandValues();
  Value gridValues[] = {grid.x, grid.y, grid.z},
        blockValues[] = {block.x, block.y, block.z};
  for (int i = 0; i < 3; ++i) {
    result.grid[i] = upperBound(gridValues[i]).value_or(0);
    result.block[i] = upperBound(blockValues[i]).value_or(0);
  }
  int64_t blocks = result.grid[0] * result.grid[1] * result.grid[2];
  int64_t threads = result.block[0] * result.block[1] * result.block[2];
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  if (kernel)
    kernel.walk([&](GridWaitOp) { ++result.gridWaits; });
  // A chained kernel's phases each move what their launch did: each bound
  // is taken phase by phase (a buffer two phases read, twice).
  SmallVector<Operation *> phases;
  if (kernel)
    for (Operation &op : kernel.getBody().front())
      if (llvm::isa<scf::ForOp>(op) && op.hasAttr(kLaunchPartAttr))
        phases.push_back(&op);
  if (phases.empty())
    phases.push_back(nullptr);
  for (Value operand : launch.getKernelOperands())
    if (llvm::isa<MemRefType>(operand.getType()) && !boundedBytes(operand))
      ++result.dynamicOperands;
  for (Operation *phase : phases)
    addPhaseBytes(result, launch, kernel, blocks, threads, phase);
  return result;
}

struct LaunchCollector {
  explicit LaunchCollector(ModuleOp module) : module(module) {}
  ModuleOp module;
  llvm::DenseMap<Operation *, std::vector<KernelLaunch>> done;

  const std::vector<KernelLaunch> &of(func::FuncOp function) {
    auto it = done.find(function);
    if (it != done.end())
      return it->second;
    std::vector<KernelLaunch> launches;
    function.walk([&](Operation *op) {
      if (auto launch = llvm::dyn_cast<gpu::LaunchFuncOp>(op)) {
        launches.push_back(launchOf(launch));
      } else if (auto call = llvm::dyn_cast<func::CallOp>(op)) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (callee && !callee.isExternal()) {
          HostRuns runs = hostRuns(call);
          for (KernelLaunch launch : of(callee)) {
            launch.count *= runs.count;
            launch.inRunTimeLoop |= runs.unbounded;
            launches.push_back(std::move(launch));
          }
        }
      }
    });
    return done[function] = std::move(launches);
  }
};

std::string formatCount(uint64_t bytes) {
  constexpr double mib = 1024.0 * 1024.0;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= 100 * mib)
    os << llvm::format("%.0f MiB", bytes / mib);
  else if (bytes >= 1024 * 1024)
    os << llvm::format("%.1f MiB", bytes / mib);
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return text;
}

/// Gives `entry`'s buffer arguments of run-time sizes the sizes of a call
/// of one row of `tokens` tokens (see collectEntryLaunches), each cast back
/// to its type for its uses, which folding then sizes.
void sizeArgumentsForTokens(func::FuncOp entry, int64_t tokens) {
  Block &body = entry.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  SmallVector<Type> inputs;
  for (BlockArgument argument : body.getArguments()) {
    auto type = dyn_cast<MemRefType>(argument.getType());
    if (!type || type.hasStaticShape() || !type.getLayout().isIdentity()) {
      inputs.push_back(argument.getType());
      continue;
    }
    SmallVector<int64_t> shape(type.getShape());
    for (auto [axis, size] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(size))
        size = type.getRank() == 2 && axis == 1 ? tokens : 1;
    auto sized = MemRefType::get(shape, type.getElementType(), AffineMap(),
                                 type.getMemorySpace());
    argument.setType(sized);
    auto cast = memref::CastOp::create(builder, entry.getLoc(), type, argument);
    argument.replaceAllUsesExcept(cast, cast);
    inputs.push_back(sized);
  }
  entry.setType(
      builder.getFunctionType(inputs, entry.getFunctionType().getResults()));
}

std::string formatShape(const int64_t (&dims)[3]) {
  std::string text;
  for (int i = 0; i < 3; ++i) {
    if (i)
      text += "x";
    text += dims[i] ? std::to_string(dims[i]) : "?";
  }
  return text;
}

} // namespace

std::vector<EntryLaunches> collectEntryLaunches(ModuleOp module,
                                                std::optional<int64_t> tokens) {
  // Each entry with its host functions inlined and folded: a block function
  // compiled for every shape (the layers, the MoE) then launches with the
  // grids and buffer sizes of this entry's call, and a branch the call's
  // shapes decide (the routed matmul's two forms) is gone.
  OwningOpRef<ModuleOp> specialized(module.clone());
  if (tokens)
    for (auto function : specialized->getOps<func::FuncOp>())
      if (!function.isExternal() && function->hasAttr("llvm.emit_c_interface"))
        sizeArgumentsForTokens(function, *tokens);
  PassManager pm(module.getContext());
  pm.addPass(createInlinerPass());
  pm.addPass(createCanonicalizerPass());
  ModuleOp analysed = succeeded(pm.run(*specialized)) ? *specialized : module;
  LaunchCollector collector(analysed);
  std::vector<EntryLaunches> entries;
  for (auto function : analysed.getOps<func::FuncOp>()) {
    if (function.isExternal() || !function->hasAttr("llvm.emit_c_interface"))
      continue;
    EntryLaunches entry{function.getSymName().str(), collector.of(function)};
    function.walk([&](func::CallOp call) {
      if (call.getCallee() == kDeviceSynchronize)
        entry.waits += hostRuns(call).count;
    });
    entries.push_back(std::move(entry));
  }
  return entries;
}

bool printKernelReport(llvm::raw_ostream &os,
                       const std::vector<EntryLaunches> &entries,
                       const llvm::StringMap<KernelResources> &kernels,
                       double bytesPerSecond, double secondsPerLaunch,
                       double secondsPerGridWait) {
  // Each kernel once, in the order the entries first launch it.
  std::vector<const KernelLaunch *> rows;
  llvm::StringMap<unsigned> seen;
  for (const EntryLaunches &entry : entries)
    for (const KernelLaunch &launch : entry.launches)
      if (seen.try_emplace(launch.kernel, rows.size()).second)
        rows.push_back(&launch);
  size_t width = 6;
  for (const KernelLaunch *row : rows)
    width = std::max(width, row->kernel.size());

  os << llvm::left_justify("kernel", width)
     << "  regs  stack  shared  block      grid         reads     writes\n";
  unsigned overLimits = 0, missing = 0;
  for (const KernelLaunch *row : rows) {
    auto it = kernels.find(row->kernel);
    os << llvm::left_justify(row->kernel, width);
    if (it == kernels.end()) {
      os << "  (not in the cubins)\n";
      ++missing;
      continue;
    }
    const KernelResources &r = it->second;
    bool over = r.stackBytes || r.callsMalloc;
    overLimits += over;
    os << llvm::format("  %4u  %5llu  %6llu  ", r.registers,
                       (unsigned long long)r.stackBytes,
                       (unsigned long long)r.sharedBytes)
       << llvm::left_justify(formatShape(row->block), 9) << "  "
       << llvm::left_justify(formatShape(row->grid), 11) << "  "
       << llvm::right_justify(formatCount(row->bytesRead), 9) << "  "
       << llvm::right_justify(formatCount(row->bytesWritten), 9);
    if (row->dynamicOperands)
      os << "  +" << row->dynamicOperands << " of a run-time size";
    if (r.callsMalloc)
      os << "  CALLS MALLOC";
    if (r.stackBytes)
      os << "  LOCAL MEMORY";
    os << "\n";
  }

  os << "\n";
  for (const EntryLaunches &entry : entries) {
    uint64_t bytes = 0, launches = 0, dynamic = 0, gridWaits = 0, repeated = 0;
    for (const KernelLaunch &launch : entry.launches) {
      launches += launch.count;
      repeated += launch.inRunTimeLoop ? launch.count : 0;
      gridWaits += launch.count * launch.gridWaits;
      bytes += launch.count * (launch.bytesRead + launch.bytesWritten);
      dynamic += launch.count * launch.dynamicOperands;
    }
    double memory = bytes / bytesPerSecond * 1e6;
    double starts =
        (launches * secondsPerLaunch + gridWaits * secondsPerGridWait) * 1e6;
    os << "entry `" << entry.entry << "`: " << launches << " launches and "
       << gridWaits << " grid waits; they move " << formatCount(bytes)
       << llvm::format(" (%.1f us at %.1f TB/s)", memory,
                       bytesPerSecond / 1e12);
    if (dynamic)
      os << " and " << dynamic << " buffers of a run-time size";
    os << llvm::format(
              "; with %.1f us a launch and %.1f us a grid wait, %.1f us a call",
              secondsPerLaunch * 1e6, secondsPerGridWait * 1e6, memory + starts)
       << "; " << entry.waits << " waits for the device";
    // Launches the host repeats a run-time number of times (once a token
    // of a prompt, say): in the figures above once each.
    if (repeated)
      os << "; " << repeated
         << " of the launches in host loops of a run-time count, counted once";
    os << "\n";
  }
  if (missing)
    os << missing << " launched kernels are missing from the cubins\n";
  else if (overLimits)
    os << overLimits << " of " << rows.size()
       << " kernels use local memory or malloc\n";
  else
    os << rows.size()
       << " kernels: none uses local memory (no spills) or calls malloc\n";
  return !missing && !overLimits;
}

} // namespace linnet
