#!/usr/bin/env python3
"""Renders every chat with every template through `linnet template` and through jinja2 (as
transformers does, test/reference/chat_template_reference.py, in this process) and compares
the bytes.

    compare_chat_templates.py LINNET TEMPLATES_DIR CHATS_DIR TOKENS_DIR [--require NAME...]

TOKENS_DIR holds the tokenizer_config.json whose special tokens both renderings get.

Each chat is rendered with add_generation_prompt off and on, and the chats with thinking or tools
also with `--thinking off`. A case agrees when both print the same bytes or both refuse the chat
(the template's raise_exception, an undefined value); it is *unsupported* when jinja2 renders
and linnet refuses with [TemplateUnsupported] naming a line and column. Anything else is a
mismatch. Prints one line per template and a summary; exits 1 on any mismatch, or when a
template named by --require has an unsupported case or renders no case at all.
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "reference", "chat_template_reference.py")
spec = importlib.util.spec_from_file_location("chat_template_reference", REFERENCE)
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)


def render_reference(template, chat, config, generation, thinking):
    try:
        prompt = reference.render(template, chat, config, generation, thinking)
        return 0, prompt.encode("utf-8", "surrogatepass"), ""
    except Exception as error:
        return 3, b"", f"{type(error).__name__}: {error}"


def run(command):
    result = subprocess.run(command, capture_output=True)
    return result.returncode, result.stdout, result.stderr.decode("utf-8", "replace")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("linnet")
    parser.add_argument("templates")
    parser.add_argument("chats")
    parser.add_argument("tokens")
    parser.add_argument("--require", nargs="*", default=[])
    args = parser.parse_args()
    templates = sorted(f for f in os.listdir(args.templates) if f.endswith(".jinja"))
    chats = sorted(f for f in os.listdir(args.chats) if f.endswith(".json"))
    config = os.path.join(args.tokens, "tokenizer_config.json")
    cases = []
    for chat in chats:
        for generation in (False, True):
            cases.append((chat, generation, None))
        if chat.startswith(("thinking", "tools")):
            cases.append((chat, True, "off"))

    mismatches = unsupported_total = rendered_total = 0
    failed_required = []
    for name in templates:
        path = os.path.join(args.templates, name)
        counts = {"equal": 0, "both-refuse": 0, "unsupported": 0, "mismatch": 0}
        notes = []
        for chat, generation, thinking in cases:
            chat_path = os.path.join(args.chats, chat)
            flags = (["--add-generation-prompt"] if generation else []) + (
                ["--thinking", thinking] if thinking else [])
            ref = render_reference(path, chat_path, config, generation, thinking)
            got = run([args.linnet, "template", args.tokens, "--chat-template", path,
                       "--messages", chat_path] + flags)
            label = f"{chat}{' +gen' if generation else ''}{' thinking=' + thinking if thinking else ''}"
            if ref[0] == 0 and got[0] == 0:
                if ref[1] == got[1]:
                    counts["equal"] += 1
                else:
                    counts["mismatch"] += 1
                    a, b = ref[1], got[1]
                    at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]),
                              min(len(a), len(b)))
                    notes.append(f"  {label}: differ at byte {at}: jinja2 {a[at:at + 60]!r} "
                                 f"linnet {b[at:at + 60]!r}")
            elif ref[0] != 0 and got[0] != 0:
                counts["both-refuse"] += 1
            elif ref[0] == 0 and "[TemplateUnsupported]" in got[2] and re.search(
                    r"\.jinja:\d+:\d+: ", got[2]):
                counts["unsupported"] += 1
                notes.append(f"  {label}: unsupported: {got[2].strip()}")
            else:
                counts["mismatch"] += 1
                notes.append(f"  {label}: jinja2 {'renders' if ref[0] == 0 else 'refuses: ' + ref[2].strip()}; "
                             f"linnet {'renders' if got[0] == 0 else 'refuses: ' + got[2].strip()}")
        mismatches += counts["mismatch"]
        unsupported_total += counts["unsupported"]
        rendered_total += counts["equal"]
        summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        print(f"{name}: {summary}")
        for note in sorted(set(notes)):
            print(note)
        if name[:-len(".jinja")] in args.require and (counts["unsupported"] or counts["mismatch"]
                                                      or not counts["equal"]):
            failed_required.append(name)
    print(f"summary: {len(templates)} templates, {len(cases)} cases each: {rendered_total} equal, "
          f"{unsupported_total} unsupported, {mismatches} mismatches")
    for name in failed_required:
        print(f"required template not fully equal: {name}")
    return 1 if mismatches or failed_required else 0


if __name__ == "__main__":
    sys.exit(main())
