#!/usr/bin/env python3
"""Checks a `linnet run --chat ... --transcript T` conversation (issue 12) against jinja2 and HF
`tokenizers`, and writes what the numpy reference must generate from.

    check_chat_transcript.py TOKENIZER_DIR TRANSCRIPT --template T.jinja --prompts PREFIX
        [--chat CHAT.json] [--user LINES] [--system TEXT] [--thinking on|off]
        [--output LINNET_STDOUT]
    check_chat_transcript.py TRANSCRIPT --turn K --reference IDS_FILE

The conversation is CHAT.json's messages (or --system's), then one user message per line of
LINES (`--chat -`), each answered by the reply in the transcript: HF's decoding of the ids
generated, without the end-of-sequence id that ended it (TOKENIZER_DIR/generation_config.json).
For each turn it checks
  - turn 1 feeds HF's encoding of jinja2's rendering of the chat, from position 0;
  - turn K > 1 feeds the previous reply's last id when that was not an end-of-sequence id, then
    HF's encoding of what jinja2 renders after the previous reply (found with a marker in its
    place): the close of that reply, the new message and the opening of the next reply;
  - turn K starts where the state stopped: every earlier id fed, and every generated one but
    the last;
  - the text linnet printed (--output) is each reply followed by a newline;
and writes PREFIX<K>.txt, every id the model has read when turn K's reply starts, from which
the reference generates (reference_script.py --prompt-tokens-file PREFIX<K>.txt --generate N).
The second form compares turn K's generated ids with the reference's (the reference runs on
past an end-of-sequence id; the ids up to it must be equal). Exits 1 on a difference.
"""
import argparse
import json
import os
import sys

import tokenizers

sys.path.insert(0, os.path.dirname(__file__))
from chat_template_reference import render_chat  # noqa: E402

MARKER = "ReferenceReplyMarker"


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_transcript(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def compare_turn(args):
    turn = read_transcript(args.transcript)[args.turn - 1]
    with open(args.reference) as f:
        want = [int(x) for x in f.read().split()]
    got = turn["generated"]
    if want[:len(got)] != got:
        fail(f"turn {args.turn}: linnet generated {got}, the reference {want[:len(got)]}")
    print(f"ok: turn {args.turn}: {len(got)} generated ids equal the reference's")


def main():
    if "--turn" in sys.argv:
        parser = argparse.ArgumentParser()
        parser.add_argument("transcript")
        parser.add_argument("--turn", type=int, required=True)
        parser.add_argument("--reference", required=True)
        return compare_turn(parser.parse_args())
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_dir")
    parser.add_argument("transcript")
    parser.add_argument("--template", required=True)
    parser.add_argument("--prompts", required=True)
    parser.add_argument("--chat")
    parser.add_argument("--user")
    parser.add_argument("--system")
    parser.add_argument("--thinking", choices=["on", "off"])
    parser.add_argument("--output")
    args = parser.parse_args()

    tokenizer = tokenizers.Tokenizer.from_file(os.path.join(args.tokenizer_dir, "tokenizer.json"))
    eos = []
    config = os.path.join(args.tokenizer_dir, "generation_config.json")
    if os.path.exists(config):
        with open(config) as f:
            value = json.load(f).get("eos_token_id")
        eos = value if isinstance(value, list) else [] if value is None else [value]
    special = os.path.join(args.tokenizer_dir, "tokenizer_config.json")
    special = special if os.path.exists(special) else None

    chat = {"messages": []}
    if args.chat:
        with open(args.chat, encoding="utf-8") as f:
            loaded = json.load(f)
        chat = loaded if isinstance(loaded, dict) else {"messages": loaded}
    if args.system is not None:
        chat["messages"].append({"role": "system", "content": args.system})
    users = []
    if args.user:
        with open(args.user, encoding="utf-8") as f:
            users = [line.rstrip("\n") for line in f if line.strip()]

    def render(messages):
        return render_chat(args.template, dict(chat, messages=messages), special, True,
                           args.thinking)

    def encode(text):
        return tokenizer.encode(text, add_special_tokens=False).ids

    turns = read_transcript(args.transcript)
    expected_turns = max(1, len(users)) if not args.chat else 1
    if len(turns) != expected_turns:
        fail(f"{len(turns)} turns in the transcript, {expected_turns} messages")
    messages = list(chat["messages"])
    state = []  # every id the model has read
    replies = []
    for k, turn in enumerate(turns, 1):
        fed, generated = turn["fed"], turn["generated"]
        if users:
            messages.append({"role": "user", "content": users[k - 1]})
        if k == 1:
            want = encode(render(messages))
        else:
            marked = messages[:-2] + [{"role": "assistant", "content": MARKER}, messages[-1]]
            text = render(marked)
            want = encode(text[text.rindex(MARKER) + len(MARKER):])
            previous = turns[k - 2]["generated"]
            if previous[-1] not in eos:
                want = [previous[-1]] + want
        if fed != want:
            fail(f"turn {k}: linnet fed {fed}, jinja2 and HF give {want}")
        if turn["pos"] != len(state):
            fail(f"turn {k}: fed at position {turn['pos']}, but the state holds {len(state)} ids")
        state += fed
        with open(f"{args.prompts}{k}.txt", "w") as f:
            f.write(",".join(str(i) for i in state))
        state += generated[:-1]
        reply_ids = generated[:-1] if generated[-1] in eos else generated
        reply = tokenizer.decode(reply_ids, skip_special_tokens=False)
        replies.append(reply)
        messages.append({"role": "assistant", "content": reply})
    if args.output:
        with open(args.output, encoding="utf-8", errors="surrogateescape", newline="") as f:
            printed = f.read()
        want = "".join(reply + "\n" for reply in replies)
        if printed != want:
            fail(f"linnet printed {printed!r}, the replies are {want!r}")
    print(f"ok: {len(turns)} turns fed as jinja2 and HF render and encode them, "
          f"{len(state) + 1} ids in all")


if __name__ == "__main__":
    sys.exit(main())
