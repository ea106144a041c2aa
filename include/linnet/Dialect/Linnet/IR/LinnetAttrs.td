//===- LinnetAttrs.td - attributes of the linnet dialect ---*- tablegen -*-===//
//
// The lowering configuration: how the shared Codegen passes tile one
// operation. A target's selection pass (Target/CPU, Target/CUDA) writes it;
// the Codegen passes only read it, so a lit test can pin it in its input.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_LINNET_IR_LINNETATTRS_TD
#define LINNET_DIALECT_LINNET_IR_LINNETATTRS_TD

include "linnet/Dialect/Linnet/IR/LinnetDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Linnet_LoweringConfigAttr : AttrDef<Linnet_Dialect, "LoweringConfig"> {
  let mnemonic = "lowering_config";
  let summary = "Tile sizes of one operation at each level of a kernel";
  let description = [{
    One size per loop of the operation at each level, 0 where the loop is
    not tiled at that level:

    - `thread`: the tile of the dispatch region's `scf.forall` (a thread's
      share on the CPU, a block's on a GPU); only a region's root uses it;
    - `reduction`: an `scf.for` block of the reduction loops (cache
      blocking);
    - `vector`: the `scf.for` tile that becomes one vector operation.

    ```mlir
    linalg.matmul {linnet.lowering_config = #linnet.lowering_config<
        thread = [64, 256, 0], reduction = [0, 0, 256], vector = [8, 16, 1]>}
    ```
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"int64_t">:$thread,
    OptionalArrayRefParameter<"int64_t">:$reduction,
    OptionalArrayRefParameter<"int64_t">:$vector);
  let assemblyFormat = [{
    `<` `thread` `=` custom<TileSizes>($thread) `,`
        `reduction` `=` custom<TileSizes>($reduction) `,`
        `vector` `=` custom<TileSizes>($vector) `>`
  }];
}

#endif // LINNET_DIALECT_LINNET_IR_LINNETATTRS_TD
