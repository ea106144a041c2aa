#!/usr/bin/env python3
"""Replace the token ids that `hidden_states` embeds in a copy of the model's module.linnet.

    edit_hidden_states.py MODULE_LINNET "EXPRESSION"

`embed_tokens.forward(tokens)` inside `fn hidden_states` becomes
`embed_tokens.forward(EXPRESSION)`, for tests of out-of-range `take` ids.
"""
import sys

path, expression = sys.argv[1], sys.argv[2]
text = open(path).read()
start = text.index("fn hidden_states")
call = "embed_tokens.forward(tokens)"
at = text.index(call, start)
text = text[:at] + "embed_tokens.forward(" + expression + ")" + text[at + len(call):]
open(path, "w").write(text)
