"""Checks that docs/language.md's built-in operations table names exactly the
built-ins of Builtins.def (`matmul` also appears as the `@` operator).

Usage: check_builtins_documented.py Builtins.def language.md
"""
import re
import sys

declared = set(re.findall(r'^LINNET_(?:UNARY_FLOAT_)?BUILTIN\(\w+, "(\w+)"',
                          open(sys.argv[1]).read(), re.M))
text = open(sys.argv[2]).read()
section = text[text.index("### Built-in operations"):]
section = section[:section.index("\n### ", 1)]
documented = set()
for row in re.findall(r"^\| `([^`]*)`", section, re.M):
    documented.update(re.findall(r"[a-z_]+", row.split("(")[0]))
operators = text[text.index("### Operators"):text.index("### Built-in operations")]
if "`matmul(a, b)`" in operators:
    documented.add("matmul")
missing = sorted(declared - documented)
extra = sorted(documented - declared)
for name in missing:
    print(f"error: built-in `{name}` is not in docs/language.md's table")
for name in extra:
    print(f"error: docs/language.md lists `{name}`, which is not a built-in")
sys.exit(1 if missing or extra else 0)
