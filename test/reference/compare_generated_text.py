"""Checks `linnet run --prompt` against the reference (issue 12): the
prompt's ids are HF `tokenizers`' encoding of the prompt, and the text
linnet printed is HF's decoding of the ids the reference generated from
them (up to the first end-of-sequence id, which is not printed), with the
newline linnet ends its output with.

  compare_generated_text.py TOKENIZER.json PROMPT_FILE PROMPT_IDS REFERENCE_IDS LINNET_TEXT
      [--stop ID ...] [--stop-file generation_config.json]
"""

import argparse
import sys

import tokenizers


def main():
    parser = argparse.ArgumentParser()
    for name in ["tokenizer", "prompt", "prompt_ids", "reference_ids", "linnet_text"]:
        parser.add_argument(name)
    parser.add_argument("--stop", type=int, action="append", default=[])
    # The stop ids of a generation_config.json.
    parser.add_argument("--stop-file")
    args = parser.parse_args()
    if args.stop_file:
        import json
        with open(args.stop_file) as f:
            eos = json.load(f)["eos_token_id"]
        args.stop += eos if isinstance(eos, list) else [eos]
    tokenizer = tokenizers.Tokenizer.from_file(args.tokenizer)
    with open(args.prompt, encoding="utf-8", newline="") as f:
        prompt = f.read()
    want = tokenizer.encode(prompt, add_special_tokens=False).ids
    with open(args.prompt_ids) as f:
        got = [int(x) for x in f.read().strip().split(",")]
    if want != got:
        print(f"FAIL: the prompt's ids: HF {want}, linnet {got}")
        return 1
    with open(args.reference_ids) as f:
        generated = [int(x) for x in f.read().split()]
    shown = []
    for token in generated:
        if token in args.stop:
            break
        shown.append(token)
    text = tokenizer.decode(shown, skip_special_tokens=False) + "\n"
    with open(args.linnet_text, "rb") as f:
        printed = f.read().decode("utf-8")
    if printed != text:
        print(f"FAIL: linnet printed {printed!r}, the reference's text is {text!r}")
        return 1
    print(f"ok: {len(want)} prompt tokens, {len(shown)} generated, "
          f"{len(text.encode('utf-8'))} bytes of text equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
