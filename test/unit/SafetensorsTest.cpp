//===- SafetensorsTest.cpp - Tests for the safetensors reader -------------===//
//
// The reader is the first thing that touches untrusted checkpoint bytes:
// every malformed header must be an error naming the problem, never a read
// outside the buffer.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Safetensors.h"

#include "gtest/gtest.h"

using namespace linnet;

namespace {

std::string floats(std::initializer_list<float> values) {
  std::string bytes;
  for (float value : values)
    bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
  return bytes;
}

llvm::Expected<std::unique_ptr<SafetensorsFile>> parse(llvm::StringRef bytes) {
  return SafetensorsFile::parse(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, "test"), "test.safetensors");
}

/// A file whose header is exactly `header` (no padding), then `data`.
std::string rawFile(llvm::StringRef header, llvm::StringRef data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = char(uint64_t(header.size()) >> (8 * i) & 0xFF);
  return out + header.str() + data.str();
}

std::string errorOf(llvm::StringRef bytes) {
  auto file = parse(bytes);
  if (file)
    return "";
  return llvm::toString(file.takeError());
}

TEST(Safetensors, RoundTrip) {
  std::string bytes = writeSafetensors(
      {{"a.weight", TensorDType::F32, {2, 2}, floats({1, 2, 3, 4})},
       {"b", TensorDType::BF16, {3}, std::string(6, '\x01')}},
      {{"format", "pt"}});
  auto file = parse(bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const auto &tensors = (*file)->tensors();
  ASSERT_EQ(tensors.size(), 2u);
  const TensorView *a =
      tensors[0].name == "a.weight" ? &tensors[0] : &tensors[1];
  EXPECT_EQ(a->dtype, TensorDType::F32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a->elementCount(), 4);
  EXPECT_EQ(a->bytes, floats({1, 2, 3, 4}));
  EXPECT_EQ((*file)->metadata().at("format"), "pt");
  // The data starts 8-byte aligned, as other writers leave it.
  EXPECT_EQ((bytes.size() - 6 - 16) % 8, 0u);
}

TEST(Safetensors, EmptyShapeIsAScalar) {
  auto file =
      parse(writeSafetensors({{"s", TensorDType::F32, {}, floats({7})}}, {}));
  ASSERT_TRUE(bool(file));
  EXPECT_EQ((*file)->tensors()[0].elementCount(), 1);
}

TEST(Safetensors, Truncated) {
  EXPECT_NE(errorOf("abc").find("truncated"), std::string::npos);
  std::string bytes = writeSafetensors(
      {{"a", TensorDType::F32, {4}, floats({1, 2, 3, 4})}}, {});
  EXPECT_NE(errorOf(bytes.substr(0, bytes.size() - 1)).find("runs past"),
            std::string::npos);
}

TEST(Safetensors, HeaderLongerThanFile) {
  std::string bytes = rawFile("{}", "");
  bytes[0] = char(0xFF);
  bytes[7] = char(0x7F);
  EXPECT_NE(errorOf(bytes).find("the header claims"), std::string::npos);
}

TEST(Safetensors, MalformedHeaders) {
  EXPECT_NE(errorOf(rawFile("{\"a\": ", "")).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(errorOf(rawFile("[]", "")).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(errorOf(rawFile(R"({"a": {"dtype": "Q8", "shape": [1],
      "data_offsets": [0, 1]}})",
                            "x"))
                .find("unknown dtype `Q8`"),
            std::string::npos);
  EXPECT_NE(errorOf(rawFile(R"({"a": {"dtype": "F32", "shape": [-1],
      "data_offsets": [0, 4]}})",
                            "xxxx"))
                .find("other than sizes"),
            std::string::npos);
  EXPECT_NE(errorOf(rawFile(R"({"a": {"dtype": "F32", "shape": [1],
      "data_offsets": [4, 0]}})",
                            "xxxx"))
                .find("ordered pair"),
            std::string::npos);
  EXPECT_NE(errorOf(rawFile(R"({"a": {"dtype": "F32", "shape": [2],
      "data_offsets": [0, 4]}})",
                            "xxxx"))
                .find("need 2 x 4"),
            std::string::npos);
  EXPECT_NE(errorOf(rawFile(R"({"a": {"dtype": "F32", "shape": [1]}})", ""))
                .find("needs `dtype`, `shape` and `data_offsets`"),
            std::string::npos);
  EXPECT_NE(errorOf(rawFile(R"({"a": {"dtype": "F32",
      "shape": [4294967296, 4294967296, 4294967296],
      "data_offsets": [0, 4]}})",
                            "xxxx"))
                .find("overflows"),
            std::string::npos);
}

TEST(Safetensors, OverlappingTensors) {
  std::string error = errorOf(rawFile(
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
          "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
      "xxxxxxxx"));
  EXPECT_NE(error.find("overlap"), std::string::npos) << error;
}

} // namespace
