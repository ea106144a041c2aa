//===- VersionTails.cpp - the rest of a block in both forms of a choice ---===//
//
// A routed product of a run-time slot count is lowered to an `scf.if`
// between its grouped form (slots sorted by expert, a matmul a tile,
// results gathered back into slot order) and its per-slot form. Left so,
// everything that reads the product is outside the branch: the gathers
// back into slot order are kernels of their own, writing what their
// readers read again (a prompt's gate and up projection's 128 MiB and its
// down projection's 256 MiB a layer at 8k tokens), and the down
// projection's own choice sorts the slots a second time. With the rest of
// the block in both branches the second choice folds, CSE shares the sort
// and each gather joins its reader's region, as CudaVersionProducts keeps a
// product's region whole by versioning the rest of its function.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"
#include "linnet/Conversion/LinnetToLinalg/LinnetToLinalg.h"

#include "mlir/IR/IRMapping.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENVERSIONTAILS
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// Moves the ops after `choice` to its block's terminator into both of its
/// branches and replaces its condition by its value in each.
void versionTail(RewriterBase &rewriter, scf::IfOp choice) {
  Block *block = choice->getBlock();
  Operation *terminator = block->getTerminator();
  SmallVector<Operation *> rest;
  for (Operation *op = choice->getNextNode(); op != terminator;
       op = op->getNextNode())
    rest.push_back(op);
  Location loc = choice.getLoc();
  Value condition = choice.getCondition();

  rewriter.setInsertionPoint(terminator);
  auto tail = scf::IfOp::create(rewriter, loc, terminator->getOperandTypes(),
                                condition, /*withElseRegion=*/true);
  // A branch: the choice's own, then the rest (moved, or copied), yielding
  // what the terminator takes.
  auto fillBranch = [&](Region &from, Block *into, bool move) {
    auto yield = cast<scf::YieldOp>(from.front().getTerminator());
    IRMapping mapping;
    mapping.map(choice.getResults(), yield.getOperands());
    rewriter.inlineBlockBefore(&from.front(), into, into->end());
    rewriter.setInsertionPoint(yield);
    for (Operation *op : rest) {
      if (move)
        rewriter.moveOpBefore(op, yield);
      else
        rewriter.clone(*op, mapping);
    }
    SmallVector<Value> yielded;
    for (Value value : terminator->getOperands())
      yielded.push_back(mapping.lookupOrDefault(value));
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(yielded); });
    // The choice's results read in the rest moved here are this branch's.
    if (move)
      for (Value result : choice.getResults())
        rewriter.replaceAllUsesWith(result, mapping.lookup(result));
  };
  // The copy first, while the rest still reads the choice's results.
  fillBranch(choice.getElseRegion(), tail.elseBlock(), /*move=*/false);
  fillBranch(choice.getThenRegion(), tail.thenBlock(), /*move=*/true);
  rewriter.modifyOpInPlace(terminator,
                           [&] { terminator->setOperands(tail.getResults()); });
  rewriter.eraseOp(choice);

  // Within each branch the condition is the constant it is there.
  for (Region *region : {&tail.getThenRegion(), &tail.getElseRegion()}) {
    rewriter.setInsertionPointToStart(&region->front());
    Value constant = arith::ConstantIntOp::create(
        rewriter, loc, rewriter.getI1Type(), region == &tail.getThenRegion());
    rewriter.replaceUsesWithIf(condition, constant, [&](OpOperand &use) {
      return region->isAncestor(use.getOwner()->getParentRegion());
    });
  }
}

struct VersionTailsPass
    : linnet::impl::LinnetCodegenVersionTailsBase<VersionTailsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // One choice at a time, outermost first: the rest of its block, later
    // choices on its condition among it, goes into its branches, where
    // those choices' conditions become constants and are left alone.
    while (true) {
      scf::IfOp next;
      getOperation().walk<WalkOrder::PreOrder>([&](scf::IfOp choice) {
        if (!choice->hasAttr(linnet::kFormChoiceName))
          return WalkResult::advance();
        if (matchPattern(choice.getCondition(), m_Constant())) {
          choice->removeAttr(linnet::kFormChoiceName);
          return WalkResult::advance();
        }
        next = choice;
        return WalkResult::interrupt();
      });
      if (!next)
        return;
      next->removeAttr(linnet::kFormChoiceName);
      versionTail(rewriter, next);
    }
  }
};

} // namespace
