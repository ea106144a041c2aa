//===- linnet-opt.cpp - mlir-opt with the linnet dialect ------------------===//
//
// The optimizer driver for lit tests: it parses, verifies, transforms and
// prints IR mixing linnet and upstream dialects, with every upstream pass and
// the linnet passes available.
//
//===----------------------------------------------------------------------===//

#include "linnet/InitLinnet.h"
#include "linnet/Target/CPU/CpuPipeline.h"
#include "linnet/Target/CUDA/CudaPipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // Everything linnet-opt knows is registered here.
  mlir::DialectRegistry registry;
  linnet::registerLinnetDialects(registry);
  linnet::registerLinnetPasses();
  linnet::registerCpuPipelines();
  linnet::registerCudaPipelines();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "linnet optimizer driver\n", registry));
}
