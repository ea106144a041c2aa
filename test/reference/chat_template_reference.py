#!/usr/bin/env python3
"""A chat rendered by Python's jinja2 exactly as transformers' apply_chat_template renders it.

    chat_template_reference.py TEMPLATE.jinja CHAT.json [--special-tokens tokenizer_config.json]
        [--add-generation-prompt] [--thinking on|off]

The environment is transformers' (utils/chat_template_utils.py): jinja2's
ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the loop
controls extension and the `{% generation %}` tag, a `tojson` that is
json.dumps(ensure_ascii=False, indent, separators, sort_keys) without HTML
escaping, and the globals raise_exception and strftime_now; the variables are
the special tokens, messages, tools, documents, add_generation_prompt and the
chat object's other members. CHAT.json is a list of messages or an object
with `messages` (as `linnet template --messages` reads it).

Prints the prompt, with nothing added, and exits 0; when the template fails,
prints `error: <type>: <message>` to stderr and exits 3.
"""
import argparse
import json
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(Extension):
    """transformers' AssistantTracker, not tracking: renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def special_tokens(path):
    if not path:
        return {}
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    names = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
             "mask_token", "additional_special_tokens"]

    def text(value):
        if isinstance(value, dict):
            return value.get("content")
        return value

    tokens = {}
    for name in names:
        if name not in config:
            continue
        value = config[name]
        if isinstance(value, list):
            tokens[name] = [t for t in (text(v) for v in value) if isinstance(t, str)]
        elif isinstance(text(value), str):
            tokens[name] = text(value)
    return tokens


def render(template_path, chat_path, special_tokens_path=None, add_generation_prompt=False,
           thinking=None):
    """The prompt (a str); raises what the template raises."""
    with open(chat_path, encoding="utf-8") as f:
        chat = json.load(f)
    return render_chat(template_path, chat, special_tokens_path, add_generation_prompt, thinking)


def render_chat(template_path, chat, special_tokens_path=None, add_generation_prompt=False,
                thinking=None):
    """render() of a chat given as its JSON value."""
    with open(template_path, encoding="utf-8", newline="") as f:
        source = f.read()
    variables = {}
    if isinstance(chat, dict):
        variables = {k: v for k, v in chat.items() if k not in ("messages", "tools")}
        messages, tools = chat["messages"], chat.get("tools")
    else:
        messages, tools = chat, None
    add_generation_prompt = bool(variables.pop("add_generation_prompt", False)) or \
        add_generation_prompt
    if thinking:
        variables["enable_thinking"] = thinking == "on"

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = strftime_now
    template = environment.from_string(source)
    return template.render(**special_tokens(special_tokens_path), messages=messages, tools=tools,
                           documents=None, add_generation_prompt=add_generation_prompt,
                           **variables)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("template")
    parser.add_argument("chat")
    parser.add_argument("--special-tokens")
    parser.add_argument("--add-generation-prompt", action="store_true")
    parser.add_argument("--thinking", choices=["on", "off"])
    args = parser.parse_args()
    try:
        prompt = render(args.template, args.chat, args.special_tokens,
                        args.add_generation_prompt, args.thinking)
    except Exception as error:  # every failure of the template is a result to compare
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return 3
    sys.stdout.buffer.write(prompt.encode("utf-8", "surrogatepass"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
