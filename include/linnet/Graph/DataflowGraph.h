//===- DataflowGraph.h - An entry's dataflow as a Graphviz graph ---*- C++
//-*-===//
//
// What `linnet graph` draws: a function's checked dataflow, with calls of
// sub-block functions expanded to a chosen depth (as clusters named
// `module::Block.fn`), every edge labelled with the tensor type the checker
// inferred, in the generics of the function drawn.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_GRAPH_DATAFLOWGRAPH_H
#define LINNET_GRAPH_DATAFLOWGRAPH_H

#include "linnet/Sema/BodyChecker.h"

#include <string>

namespace linnet {

/// The DOT text of `fn`'s dataflow with calls expanded `depth` levels.
std::string renderDataflowGraph(const CheckedProgram &program,
                                const CheckedFunction &fn, unsigned depth,
                                const std::string &title);

} // namespace linnet

#endif // LINNET_GRAPH_DATAFLOWGRAPH_H
