//===- RandomWeights.h - A model's parameters drawn from a seed --*- C++
//-*-===//
//
// Tests, benchmarks and the GPU device check need weights of any size
// without a checkpoint (the full model's 70 GB cannot travel to a GPU
// machine). `init-checkpoint` writes these values into a safetensors file,
// and `--random-weights SEED` fills a run's parameters with them directly,
// so the two give the same logits.
//
// Each value is a function of (seed, parameter path, element index) alone
// (a splitmix64 counter hash, no sequential state), so any chunk of any
// tensor is drawn independently and in parallel, on every platform alike.
// The scales keep activations sane: tensors of rank 2 or more have standard
// deviation 1/sqrt(fan_in) with fan_in their last dimension (so conv taps get
// 1/sqrt(Width) and experts their input size), embeddings 1; 1-D norm
// weights 0.1 (zero-centred), a GatedRmsNorm weight 1 + 0.1 x, `A_log` =
// log U(1, 16) and `dt_bias` U(-3, -1). The bell is Irwin-Hall's (the sum
// of four uniforms, scaled to variance 1): bounded at 3.46 sigma, and a
// fraction of Box-Muller's cost per value.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_RANDOMWEIGHTS_H
#define LINNET_RUNTIME_RANDOMWEIGHTS_H

#include "linnet/Model/ModelParameter.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace linnet {

class RandomWeights {
public:
  explicit RandomWeights(uint64_t seed) : seed(seed) {}

  /// Values `start` ... `start + out.size() - 1` of `param`, row-major.
  void draw(const ModelParameter &param, uint64_t start,
            llvm::MutableArrayRef<float> out) const;
  /// Values `start` ... `start + count - 1` of `param` stored as its element
  /// type at `destination`, drawn on every core.
  void fill(const ModelParameter &param, uint64_t start, uint64_t count,
            void *destination) const;

private:
  uint64_t seed;
};

} // namespace linnet

#endif // LINNET_RUNTIME_RANDOMWEIGHTS_H
