//===- CheckpointBindingTest.cpp - Name rules and float rounding ----------===//
//
// The pure pieces of checkpoint loading: bf16/f16 rounding (nearest, ties
// to even, NaN kept), name patterns and templates with index expressions,
// and inverting config expressions for init-checkpoint.
//
//===----------------------------------------------------------------------===//

#include "linnet/Model/CheckpointBinding.h"
#include "linnet/Runtime/FloatConversion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace linnet;

namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

TEST(FloatConversion, BF16RoundsToNearestEven) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3F80);
  // Halfway between 0x3F80 and 0x3F81: ties to the even 0x3F80.
  EXPECT_EQ(floatToBF16(fromBits(0x3F808000)), 0x3F80);
  // Halfway between 0x3F81 and 0x3F82: ties to the even 0x3F82.
  EXPECT_EQ(floatToBF16(fromBits(0x3F818000)), 0x3F82);
  // Just above halfway rounds up.
  EXPECT_EQ(floatToBF16(fromBits(0x3F808001)), 0x3F81);
  // The largest finite value rounds to infinity only past halfway.
  EXPECT_EQ(floatToBF16(fromBits(0x7F7FFFFF)), 0x7F80);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(NAN))));
  EXPECT_EQ(bf16ToFloat(0xC040), -3.0f);
}

TEST(FloatConversion, F16RoundsToNearestEven) {
  EXPECT_EQ(floatToF16(1.0f), 0x3C00);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(floatToF16(1.0f + 0x1.0p-11f), 0x3C00);
  EXPECT_EQ(floatToF16(1.0f + 3 * 0x1.0p-11f), 0x3C02);
  EXPECT_EQ(f16ToFloat(0xC500), -5.0f);
  EXPECT_EQ(floatToF16(70000.0f), 0x7C00); // past the largest half
}

TEST(NamePattern, MatchesSegmentsAndTails) {
  auto pattern = NamePattern::parse("groups.{g}.linear.{j}.{rest*}");
  ASSERT_TRUE(bool(pattern));
  auto captures = pattern->match("groups.2.linear.1.mlp.gate.weight");
  ASSERT_TRUE(captures.has_value());
  EXPECT_EQ((*captures)["g"], "2");
  EXPECT_EQ((*captures)["j"], "1");
  EXPECT_EQ((*captures)["rest"], "mlp.gate.weight");
  EXPECT_FALSE(pattern->match("groups.2.full.mlp.gate.weight"));
  EXPECT_FALSE(pattern->match("groups.2.linear.1"));
  EXPECT_FALSE(bool(NamePattern::parse("a.b{c}.d")));
}

TEST(NameTemplate, EvaluatesIndexExpressions) {
  auto name = expandTemplate("layers.{4 * g + j}.{rest}",
                             {{"g", "2"}, {"j", "1"}, {"rest", "mlp.gate"}});
  ASSERT_TRUE(bool(name));
  EXPECT_EQ(*name, "layers.9.mlp.gate");
  auto fraction = expandTemplate("layers.{g / 4}", {{"g", "2"}});
  EXPECT_FALSE(bool(fraction));
  llvm::consumeError(fraction.takeError());
}

TEST(CheckpointBinding, RenamesPrefixesAndStacks) {
  auto binding = CheckpointBinding::parse(R"({
    "config": {"section": "text_config", "generics": {
      "H": "hidden_size", "Groups": "num_hidden_layers / 4",
      "Conv": "2 * heads * dim + heads", "Heads": "heads", "Dim": "dim",
      "T": ["dtype"]}},
    "parameters": {
      "prefixes": ["model.language_model.", "model."],
      "unprefixed": ["lm_head.weight"],
      "rename": [
        {"from": "groups.{g}.full.{rest*}", "to": "layers.{4 * g + 3}.{rest}"},
        {"from": "layers.{i}.mlp.down_proj", "to": "layers.{i}.mlp.experts.down_proj"}],
      "stacked": [{"fused": "layers.{i}.mlp.experts.down_proj", "index": "e",
                   "parts": ["layers.{i}.mlp.experts.{e}.down_proj.weight"]}],
      "ignore": ["mtp.*"]}})",
                                          "binding.json");
  ASSERT_TRUE(bool(binding)) << llvm::toString(binding.takeError());
  auto name = binding->checkpointName("groups.1.full.mlp.down_proj");
  ASSERT_TRUE(bool(name));
  EXPECT_EQ(*name, "layers.7.mlp.experts.down_proj");
  EXPECT_EQ(binding->withPrefix(*name, "model."),
            "model.layers.7.mlp.experts.down_proj");
  EXPECT_EQ(binding->withPrefix("lm_head.weight", "model."), "lm_head.weight");
  auto parts = binding->stackedPartNames(*name, 5);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->front(), "layers.7.mlp.experts.5.down_proj.weight");
  EXPECT_TRUE(binding->isIgnored("mtp.fc.weight"));
  EXPECT_EQ(binding->detectPrefix({"lm_head.weight", "model.norm.weight"}),
            "model.");

  // Inverting the config map: Groups solves for num_hidden_layers, Conv is
  // checked against the fields the other generics set.
  auto fields = binding->config().fieldsFor({{"H", 8}, {"Groups", 3}});
  ASSERT_TRUE(bool(fields));
  EXPECT_EQ(fields->at("num_hidden_layers"), 12);
  EXPECT_EQ(fields->at("hidden_size"), 8);
  auto conv = binding->config().fieldsFor({{"Conv", 10}});
  EXPECT_FALSE(bool(conv)); // two unknown fields
  llvm::consumeError(conv.takeError());
  // Conv's fields set by Heads and Dim give 2 * 2 * 3 + 2 = 14, not 10.
  auto both =
      binding->config().fieldsFor({{"Conv", 10}, {"Heads", 2}, {"Dim", 3}});
  ASSERT_FALSE(bool(both));
  std::string message = llvm::toString(both.takeError());
  EXPECT_NE(message.find("; a checkpoint cannot hold both"), std::string::npos);
  EXPECT_NE(message.find("[CheckpointConfigUnwritable]"), std::string::npos);
}

TEST(CheckpointBinding, ReportsJsonPaths) {
  auto binding = CheckpointBinding::parse(
      R"({"parameters": {"rename": [{"from": "a.{b}", "to": 3}]}})", "b.json");
  ASSERT_FALSE(bool(binding));
  EXPECT_EQ(llvm::toString(binding.takeError()),
            "checkpoint binding `b.json`: `parameters.rename[0].to`: expected "
            "a string [BindingRulesInvalid]");
}

} // namespace
