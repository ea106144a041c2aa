//===- ModelParameters.h - The bound model's parameters, in order -*- C++
//-*-===//
//
// Every later stage that touches weights (the checkpoint loader, the
// generated functions whose leading arguments are the weights, the
// checkpoint writer) needs the same flat list of a bound model's `param`
// members with their concrete shapes and element types, in one stable
// order. This header makes that list from the checked program.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_MODELPARAMETERS_H
#define LINNET_SEMA_MODELPARAMETERS_H

#include "linnet/Model/ModelParameter.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace linnet {

/// The parameters of `model`, depth first over the root's members in
/// declaration order (a param where it is declared, a sub's parameters where
/// the sub is declared, an array `[Block; N]` as its elements 0 … N−1).
/// Optional parameters are included. This order is the order of the leading
/// arguments of every generated entry function; it changes only when the
/// model's source changes. `model` must come from bindModel, which has
/// checked that every size is a positive integer.
std::vector<ModelParameter> listParameters(const Program &program,
                                           const BoundModel &model);

/// The `state` members of `model`, in the same order and with the same
/// paths (`optional` false): what a session allocates per
/// model, and the state arguments and results of the stateful entries.
std::vector<ModelParameter> listStates(const Program &program,
                                       const BoundModel &model);

} // namespace linnet

#endif // LINNET_SEMA_MODELPARAMETERS_H
