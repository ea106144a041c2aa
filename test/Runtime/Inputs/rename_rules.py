#!/usr/bin/env python3
"""Put rename rules first in a copy of a model's checkpoint_binding.json.

    rename_rules.py BINDING MODE

Modes (for fail_binding_renames.test; both were timeouts of the
checkpoint-binding fuzz target):
  double     40 rules `{r*}` -> `{r}.{r}`: each doubles the name
  backtrack  a rule that makes names of about 120 segments, then one with
             five `{x*}` placeholders before a literal no name has
"""
import json
import sys

path, mode = sys.argv[1], sys.argv[2]
binding = json.load(open(path))
if mode == "double":
    rules = [{"from": "{r*}", "to": "{r}.{r}"}] * 40
elif mode == "backtrack":
    rules = [{"from": "{r*}", "to": "{r}" + ".a" * 120},
             {"from": "{a*}.{b*}.{c*}.{d*}.{e*}.zz", "to": "never"}]
else:
    sys.exit(f"unknown mode {mode}")
binding["parameters"]["rename"] = rules + binding["parameters"]["rename"]
json.dump(binding, open(path, "w"), indent=2)
