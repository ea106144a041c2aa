"""Writes a small byte-level tokenizer.json (every byte, a few merges, two
added tokens, Qwen3.5's normalizer and split) with edits, for the tests of
what linnet refuses.

  tokenizer_variant.py OUT_DIR [PATH=JSON ...] [--drop-byte HEX] [--raw TEXT]
  tokenizer_variant.py --bytes-file FILE HEX    (writes raw bytes)

PATH is dotted with list indices (`model.type`, `added_tokens[0].lstrip`);
JSON is the value (`"WordPiece"`, `true`); PATH=- deletes the field.
"""

import json
import os
import re
import sys

PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}|"
           r" ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_characters():
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD))
                 + list(range(0xAE, 0x100)))
    table, extra = {}, 0
    for b in range(256):
        table[b] = chr(b) if b in printable else chr(256 + (extra := extra + 1) - 1)
    return table


def base(dropped):
    chars = byte_characters()
    # A dropped byte's id goes to a token of no bytes, so that ids stay dense.
    vocab = {(chars[b] if b not in dropped else f"<unused{b}>"): b for b in range(256)}
    merges = []
    for left, right in [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o"),
                        ("Ġ", "w"), ("o", "r"), ("Ġw", "or"), ("l", "d"), ("Ġwor", "ld")]:
        vocab[left + right] = len(vocab)
        merges.append(f"{left} {right}")
    byte_level = {"add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    first = len(vocab)
    added = [{"id": first, "content": "<|im_start|>", "special": True},
             {"id": first + 1, "content": "<|im_end|>", "special": True}]
    for token in added:
        token.update(single_word=False, lstrip=False, rstrip=False, normalized=False)
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Isolated",
             "invert": False},
            dict(type="ByteLevel", **byte_level)]},
        "post_processor": dict(type="ByteLevel", **byte_level),
        "decoder": dict(type="ByteLevel", **byte_level),
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }


def edit(document, path, value):
    keys = [int(k) if k.isdigit() else k for k in re.findall(r"[^.\[\]]+", path)]
    node = document
    for key in keys[:-1]:
        node = node[key]
    if value == "-":
        del node[keys[-1]]
    else:
        node[keys[-1]] = json.loads(value)


def main():
    args = sys.argv[1:]
    if args[0] == "--bytes-file":
        with open(args[1], "wb") as f:
            f.write(bytes.fromhex(args[2]))
        return
    out, rest = args[0], args[1:]
    dropped, raw, edits = set(), None, []
    i = 0
    while i < len(rest):
        if rest[i] == "--drop-byte":
            dropped.add(int(rest[i + 1], 16))
            i += 2
        elif rest[i] == "--raw":
            raw = rest[i + 1]
            i += 2
        else:
            edits.append(rest[i].split("=", 1))
            i += 1
    document = base(dropped)
    for path, value in edits:
        edit(document, path, value)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(raw if raw is not None else json.dumps(document, ensure_ascii=False))


if __name__ == "__main__":
    main()
