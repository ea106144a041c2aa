//===- CpuPipelineOptionsTest.cpp - options chosen from the CPU -----------===//
//
// cpuPipelineOptionsFor picks register tiles that fit the vector registers
// of the CPU the code is for: AVX-512's 32 of 16 f32 lanes take the
// defaults, AVX2's 16 of 8 and SSE's 16 of 4 smaller tiles, so that no
// accumulator spills.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CpuExecutable.h"

#include "llvm/TargetParser/Host.h"

#include <gtest/gtest.h>

namespace {

using Tile = llvm::SmallVector<int64_t>;

Tile tile(llvm::ArrayRef<int64_t> sizes) { return Tile(sizes); }

TEST(CpuPipelineOptions, Avx512KeepsTheDefaults) {
  linnet::CpuPipelineOptions defaults;
  linnet::CpuPipelineOptions options =
      linnet::cpuPipelineOptionsFor("x86-64-v4");
  EXPECT_EQ(tile(options.dotProductRegisterTile),
            tile(defaults.dotProductRegisterTile));
  EXPECT_EQ(tile(options.contractionRegisterTile),
            tile(defaults.contractionRegisterTile));
  EXPECT_FALSE(options.bf16DotProducts);
  EXPECT_TRUE(linnet::cpuPipelineOptionsFor("sapphirerapids").bf16DotProducts);
}

TEST(CpuPipelineOptions, Avx2TilesFitSixteenRegisters) {
  linnet::CpuPipelineOptions options =
      linnet::cpuPipelineOptionsFor("x86-64-v3");
  EXPECT_EQ(tile(options.dotProductRegisterTile), tile({2, 4, 8}));
  EXPECT_EQ(tile(options.contractionRegisterTile), tile({4, 16}));
  EXPECT_FALSE(options.bf16DotProducts);
}

TEST(CpuPipelineOptions, SseTilesUseFourLanes) {
  linnet::CpuPipelineOptions options = linnet::cpuPipelineOptionsFor("x86-64");
  EXPECT_EQ(tile(options.dotProductRegisterTile), tile({2, 4, 4}));
  EXPECT_EQ(tile(options.contractionRegisterTile), tile({4, 8}));
}

TEST(CpuPipelineOptions, UnknownCpuGetsTheSmallestTiles) {
  // checkObjectCpu reports the name; the options assume no vector feature.
  linnet::CpuPipelineOptions options =
      linnet::cpuPipelineOptionsFor("no-such-cpu");
  EXPECT_EQ(tile(options.dotProductRegisterTile), tile({2, 4, 4}));
}

TEST(CpuPipelineOptions, NativeHasEveryFeatureTheHostReports) {
  // Not only those of the CPU model LLVM names for it: a virtual machine may
  // report a model without AVX512-BF16 and the feature itself.
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  EXPECT_EQ(linnet::cpuHasBf16DotProducts("native"), host.lookup("avx512bf16"));
  linnet::CpuPipelineOptions defaults;
  EXPECT_EQ(
      tile(linnet::cpuPipelineOptionsFor("native").dotProductRegisterTile) ==
          tile(defaults.dotProductRegisterTile),
      host.lookup("avx512f"));
}

} // namespace
