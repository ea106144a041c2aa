//===- RandomWeights.cpp - A model's parameters drawn from a seed ---------===//

#include "linnet/Runtime/RandomWeights.h"

#include "linnet/Runtime/ParameterStore.h"

#include "llvm/Support/Parallel.h"
#include "llvm/Support/xxhash.h"

#include <cmath>

using namespace linnet;

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// What a parameter's values are drawn as: `scale * x + offset` with x of
/// the bell (variance 1), or uniform in [lo, hi), or its log.
struct Distribution {
  enum Kind { Bell, Uniform, LogUniform } kind = Bell;
  double scale = 1, offset = 0;
};

Distribution distributionOf(const ModelParameter &param) {
  if (param.shape.size() >= 2)
    return {Distribution::Bell,
            param.block == "Embedding"
                ? 1.0
                : 1.0 / std::sqrt(double(param.shape.back())),
            0};
  if (param.name() == "A_log")
    return {Distribution::LogUniform, 15, 1}; // log U(1, 16)
  if (param.name() == "dt_bias")
    return {Distribution::Uniform, 2, -3}; // U(-3, -1)
  if (param.block == "GatedRmsNorm")
    return {Distribution::Bell, 0.1, 1};
  return {Distribution::Bell, 0.1, 0};
}

/// Values per task when a fill is split over the cores.
constexpr uint64_t kValuesPerTask = 1 << 14;

} // namespace

void RandomWeights::draw(const ModelParameter &param, uint64_t start,
                         llvm::MutableArrayRef<float> out) const {
  Distribution d = distributionOf(param);
  uint64_t key = splitmix64(seed ^ llvm::xxh3_64bits(param.path));
  // Four 16-bit uniforms summed: mean 2, variance 4/12.
  const double bellScale = std::sqrt(3.0) / 65536.0;
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t bits = splitmix64(key + (start + i) * 0xd1342543de82ef95ull);
    double value;
    if (d.kind == Distribution::Bell) {
      // Summed as integers (exact, as in doubles), converted once.
      int64_t sum = int64_t((bits & 0xffff) + ((bits >> 16) & 0xffff) +
                            ((bits >> 32) & 0xffff) + (bits >> 48));
      value = double(sum - 2 * 65536) * bellScale;
    } else {
      value = double(bits >> 11) * 0x1.0p-53; // U(0, 1)
    }
    value = d.scale * value + d.offset;
    out[i] =
        float(d.kind == Distribution::LogUniform ? std::log(value) : value);
  }
}

void RandomWeights::fill(const ModelParameter &param, uint64_t start,
                         uint64_t count, void *destination) const {
  unsigned bytes = elementTypeBytes(param.element);
  uint64_t tasks = (count + kValuesPerTask - 1) / kValuesPerTask;
  llvm::parallelFor(0, size_t(tasks), [&](size_t task) {
    uint64_t first = uint64_t(task) * kValuesPerTask;
    uint64_t values = std::min(kValuesPerTask, count - first);
    float chunk[kValuesPerTask];
    draw(param, start + first, {chunk, size_t(values)});
    convertFloats(chunk, TensorDType::F32,
                  static_cast<char *>(destination) + first * bytes,
                  param.element, values);
  });
}
