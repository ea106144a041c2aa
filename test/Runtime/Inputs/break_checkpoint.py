#!/usr/bin/env python3
"""Damage a tiny checkpoint folder in one way, for the loader's fail_* tests.

    break_checkpoint.py DIR MODE [NAME]

Modes rewrite DIR/model.safetensors (or the index) in place:
  drop NAME        remove a tensor (header entry and bytes)
  transpose NAME   swap the shape of a 2-D tensor (same bytes, wrong shape)
  bf16 NAME...     store these tensors as BF16 instead of F32
  extra NAME       add an F32 tensor [2] that nothing uses
  truncate         cut the file 100 bytes short of its end
  overlap          make the second tensor's byte range start inside the first's
  past-end         make the last tensor's range end past the data
  dtype            name an unknown dtype `F8_E9M0` for the first tensor
  huge-empty       add an empty tensor of shape [2^31, 2^32, 0], whose leading
                   sizes overflow int64 before the 0
  shard-missing    write an index naming a shard file that does not exist
  index-json       write an index that is not valid JSON
  layer-types      make layer 1 of config.json a full attention layer
  poison NAME N M  set N elements of NAME to NaN and the M after them to +inf
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import numpy as np  # noqa: E402
import safetensors_io as st  # noqa: E402


def read(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def write(path, header, data):
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)


def tensors_in_order(header):
    return sorted((k for k in header if k != "__metadata__"),
                  key=lambda k: header[k]["data_offsets"][0])


def main():
    folder, mode = sys.argv[1], sys.argv[2]
    name = sys.argv[3] if len(sys.argv) > 3 else None
    path = os.path.join(folder, "model.safetensors")
    if mode in ("drop", "bf16", "extra"):
        tensors = st.load_file(path)
        if mode == "drop":
            del tensors[name]
        elif mode == "extra":
            tensors[name] = np.zeros(2, np.float32)
        st.save_file(tensors, path, metadata={"format": "pt"}, float_dtype="F32",
                     dtypes={n: "BF16" for n in sys.argv[3:]} if mode == "bf16" else {})
        return
    if mode == "poison":
        tensors = st.load_file(path)
        nans, infs = int(sys.argv[4]), int(sys.argv[5])
        flat = tensors[name].reshape(-1)
        flat[:nans] = np.nan
        flat[nans:nans + infs] = np.inf
        st.save_file(tensors, path, metadata={"format": "pt"}, float_dtype="F32")
        return
    if mode == "layer-types":
        config_path = os.path.join(folder, "config.json")
        config = json.load(open(config_path))
        config["text_config"]["layer_types"][1] = "full_attention"
        json.dump(config, open(config_path, "w"), indent=2)
        return
    if mode == "shard-missing":
        header, _ = read(path)
        names = tensors_in_order(header)
        weight_map = {n: "model.safetensors" for n in names}
        weight_map[names[-1]] = "model-00002-of-00002.safetensors"
        json.dump({"metadata": {}, "weight_map": weight_map},
                  open(os.path.join(folder, st.INDEX_NAME), "w"), indent=2)
        return
    if mode == "index-json":
        open(os.path.join(folder, st.INDEX_NAME), "w").write('{"weight_map": {"a": ')
        return
    header, data = read(path)
    names = tensors_in_order(header)
    if mode == "truncate":
        raw = open(path, "rb").read()
        open(path, "wb").write(raw[:-100])
        return
    if mode == "overlap":
        first, second = header[names[0]], header[names[1]]
        begin, end = first["data_offsets"]
        length = second["data_offsets"][1] - second["data_offsets"][0]
        start = begin + 4
        second["data_offsets"] = [start, start + length]
    elif mode == "past-end":
        last = header[names[-1]]
        last["data_offsets"] = [last["data_offsets"][0] + 8, last["data_offsets"][1] + 8]
    elif mode == "dtype":
        header[names[0]]["dtype"] = "F8_E9M0"
    elif mode == "huge-empty":
        end = len(data)
        header["huge"] = {"dtype": "F32", "shape": [2**31, 2**32, 0],
                          "data_offsets": [end, end]}
    elif mode == "transpose":
        header[name]["shape"] = list(reversed(header[name]["shape"]))
    else:
        sys.exit(f"unknown mode {mode}")
    write(path, header, data)


if __name__ == "__main__":
    main()
