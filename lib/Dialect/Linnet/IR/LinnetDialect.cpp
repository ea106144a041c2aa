//===- LinnetDialect.cpp - the linnet dialect -----------------------------===//
//
// Registers the linnet operations and attributes with the dialect; the
// generated dialect and attribute definitions are included here once.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Linnet/IR/LinnetDialect.h"
#include "linnet/Dialect/Linnet/IR/LinnetAttrs.h"
#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace linnet;

#include "linnet/Dialect/Linnet/IR/LinnetOpsDialect.cpp.inc"

/// `[64, 256, 0]` (or `[]`): the tile sizes of one level.
static ParseResult parseTileSizes(AsmParser &parser,
                                  SmallVector<int64_t> &sizes) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
    int64_t size = 0;
    if (parser.parseInteger(size))
      return failure();
    sizes.push_back(size);
    return success();
  });
}

static void printTileSizes(AsmPrinter &printer, ArrayRef<int64_t> sizes) {
  printer << '[';
  llvm::interleaveComma(sizes, printer);
  printer << ']';
}

#define GET_ATTRDEF_CLASSES
#include "linnet/Dialect/Linnet/IR/LinnetAttrs.cpp.inc"

namespace {

/// Every linnet op computes values from its operands alone (no region, no
/// symbol, no effect on memory), so a function holding them may be inlined
/// (linnet-codegen-inline-calls: a block function at a call site of
/// static shapes).
struct LinnetInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
};

} // namespace

void LinnetDialect::initialize() {
  addInterfaces<LinnetInlinerInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "linnet/Dialect/Linnet/IR/LinnetAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "linnet/Dialect/Linnet/IR/LinnetOps.cpp.inc"
      >();
  linnet::attachBufferizationModels(*getContext());
}
