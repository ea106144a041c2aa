"""Compares linnet's tokenizer with HF `tokenizers` on the same
tokenizer.json (issue 12).

  compare_tokenizer.py encode TOKENIZER.json TEXT_FILE LINNET_IDS
    every id equal to HF's encode of the text (no special tokens added)
  compare_tokenizer.py random-ids TOKENIZER.json COUNT SEED IDS_OUT TEXT_OUT
    draws COUNT ids (ordinary tokens, pieces of characters, added tokens)
    and writes them and HF's decode of them, for linnet's to be compared
  compare_tokenizer.py nfc TEXT_FILE OUT
    the text in NFC (Python's unicodedata), what decode(encode(text)) gives
"""

import random
import sys
import unicodedata

import tokenizers


def read_ids(path):
    with open(path) as f:
        text = f.read().strip()
    return [int(x) for x in text.split(",")] if text else []


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "nfc":
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        with open(sys.argv[3], "w", encoding="utf-8", newline="") as f:
            f.write(unicodedata.normalize("NFC", text))
        return 0
    tokenizer = tokenizers.Tokenizer.from_file(path)
    if mode == "encode":
        with open(sys.argv[3], "rb") as f:
            text = f.read().decode("utf-8")
        want = tokenizer.encode(text, add_special_tokens=False).ids
        got = read_ids(sys.argv[4])
        for i, (a, b) in enumerate(zip(want, got)):
            if a != b:
                tokens = [tokenizer.id_to_token(t) for t in want[max(0, i - 3):i + 4]]
                print(f"FAIL: token {i}: HF {a}, linnet {b}; HF's tokens there: {tokens}")
                return 1
        if len(want) != len(got):
            print(f"FAIL: HF gives {len(want)} tokens, linnet {len(got)}")
            return 1
        print(f"ok: {len(text.encode('utf-8'))} bytes, {len(want)} tokens equal")
        return 0
    if mode == "random-ids":
        count, seed = int(sys.argv[3]), int(sys.argv[4])
        rng = random.Random(seed)
        size = tokenizer.get_vocab_size(with_added_tokens=True)
        ids = [rng.randrange(size) if rng.random() < 0.9 else rng.randrange(256)
               for _ in range(count)]
        with open(sys.argv[5], "w") as f:
            f.write(",".join(map(str, ids)))
        with open(sys.argv[6], "wb") as f:
            f.write(tokenizer.decode(ids, skip_special_tokens=False).encode("utf-8"))
        return 0
    print(f"unknown mode {mode}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
