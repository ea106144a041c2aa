//===- ReplyParserTest.cpp - Reasoning and tool calls out of a reply ------===//
//
// A reply arrives a token at a time; its reasoning, content and tool calls
// must come out the same however the text is cut, with tags split across
// pieces and text that only looked like a tag kept.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/ReplyParser.h"

#include <gtest/gtest.h>

using namespace linnet::serve;

namespace {

/// The whole reply when `text` arrives `piece` bytes at a time.
ReplyDelta parse(llvm::StringRef text, size_t piece, bool thinking,
                 bool tools) {
  ReplyParser parser(thinking, tools);
  ReplyDelta all;
  auto add = [&](const ReplyDelta &delta) {
    all.reasoning += delta.reasoning;
    all.content += delta.content;
    all.toolCalls.insert(all.toolCalls.end(), delta.toolCalls.begin(),
                         delta.toolCalls.end());
  };
  for (size_t start = 0; start < text.size(); start += piece)
    add(parser.push(text.substr(start, piece)));
  add(parser.finish());
  return all;
}

TEST(ReplyParser, ReasoningOpenedByThePromptEndsAtTheCloseTag) {
  for (size_t piece : {1, 2, 3, 5, 100}) {
    ReplyDelta reply = parse("Let me think.\n</think>\n\nIt is 4.", piece,
                             /*thinking=*/true, /*tools=*/false);
    EXPECT_EQ(reply.reasoning, "Let me think.\n") << piece;
    EXPECT_EQ(reply.content, "It is 4.") << piece;
  }
}

TEST(ReplyParser, AReplyMayOpenItsOwnReasoning) {
  for (size_t piece : {1, 4, 100}) {
    ReplyDelta reply = parse("<think>hmm</think>Yes.", piece, false, false);
    EXPECT_EQ(reply.reasoning, "hmm") << piece;
    EXPECT_EQ(reply.content, "Yes.") << piece;
  }
}

TEST(ReplyParser, TextLikeATagIsKept) {
  ReplyDelta reply = parse("a < b and <thin ice>", 1, false, true);
  EXPECT_EQ(reply.content, "a < b and <thin ice>");
  EXPECT_EQ(reply.reasoning, "");
  // Unclosed reasoning is all reasoning.
  reply = parse("still thinking </thi", 3, true, false);
  EXPECT_EQ(reply.reasoning, "still thinking </thi");
}

TEST(ReplyParser, JsonToolCalls) {
  for (size_t piece : {1, 7, 1000}) {
    ReplyDelta reply = parse(
        "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
        "{\"city\": \"Paris\"}}\n</tool_call>",
        piece, false, true);
    EXPECT_EQ(reply.content, "Checking.\n") << piece;
    ASSERT_EQ(reply.toolCalls.size(), 1u) << piece;
    EXPECT_EQ(reply.toolCalls[0].name, "get_weather");
    EXPECT_EQ(reply.toolCalls[0].arguments, "{\"city\":\"Paris\"}");
  }
}

TEST(ReplyParser, Qwen35FunctionToolCalls) {
  ReplyDelta reply = parse("<tool_call>\n<function=get_weather>\n"
                           "<parameter=city>\nNew York\n</parameter>\n"
                           "<parameter=days>\n3\n</parameter>\n</function>\n"
                           "</tool_call>\n<tool_call>\n<function=now>\n"
                           "</function>\n</tool_call>",
                           2, false, true);
  EXPECT_EQ(reply.content, "");
  ASSERT_EQ(reply.toolCalls.size(), 2u);
  EXPECT_EQ(reply.toolCalls[0].name, "get_weather");
  EXPECT_EQ(reply.toolCalls[0].arguments, "{\"city\":\"New York\",\"days\":3}");
  EXPECT_EQ(reply.toolCalls[1].name, "now");
  EXPECT_EQ(reply.toolCalls[1].arguments, "{}");
}

TEST(ReplyParser, WithoutToolsOrAWellFormedCallItIsText) {
  llvm::StringRef call =
      "<tool_call>{\"name\": 3}</tool_call> and <tool_call>x";
  EXPECT_EQ(parse(call, 3, false, true).content,
            "<tool_call>{\"name\": 3}</tool_call>and <tool_call>x");
  EXPECT_TRUE(parse(call, 3, false, true).toolCalls.empty());
  EXPECT_EQ(parse(call, 3, false, false).content, call);
}

} // namespace
