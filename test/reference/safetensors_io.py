"""Minimal, strict reader and writer of the safetensors format (numpy only).

Format (https://github.com/huggingface/safetensors, the Rust crate is the reference):

    [8 bytes: N, unsigned little-endian]  [N bytes: UTF-8 JSON header]  [data buffer]

The header is a JSON object mapping tensor names to
``{"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [begin, end]}`` with offsets relative to
the start of the data buffer, plus an optional ``"__metadata__"`` object of string -> string.
All tensors are little-endian, C-contiguous.

Validation done by :func:`load_file` / :func:`parse_header` (every violation is a ``ValueError``
naming the file and the tensor):

* file at least 8 bytes, header length N within the file and at most 100,000,000 bytes;
* header is UTF-8, valid JSON, a JSON object, without duplicate keys;
* ``__metadata__`` (if present) is an object of string values;
* each entry has exactly the keys dtype / shape / data_offsets, a known dtype, a shape made of
  non-negative integers, and offsets ``0 <= begin <= end <= len(data)``;
* ``end - begin == prod(shape) * itemsize(dtype)``;
* no two tensors overlap; and (like the Rust crate, unless ``allow_gaps=True``) the tensors
  cover the data buffer exactly, with no holes and no trailing bytes.

Supported dtypes: F32, F16, BF16, I32, I64 (plus F64, U8, I8, I16, BOOL for reading
convenience).  BF16 has no numpy type: it is read as its uint16 bit patterns and converted to
float32 exactly (``bits << 16``), and written by rounding float32 to nearest-even (see
:func:`float32_to_bf16_bits`).

Sharded checkpoints: ``model.safetensors.index.json`` = ``{"metadata": {...}, "weight_map":
{name: shard_file}}``; :func:`load_checkpoint_tensors` reads either that or ``model.safetensors``.
"""

from __future__ import annotations

import json
import os
from typing import Dict, Iterable, Mapping, Optional, Tuple

import numpy as np

__all__ = [
    "DTYPES",
    "float32_to_bf16_bits",
    "bf16_bits_to_float32",
    "bf16_round",
    "parse_header",
    "load_file",
    "save_file",
    "save_sharded",
    "load_checkpoint_tensors",
    "INDEX_NAME",
    "SINGLE_NAME",
]

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
MAX_HEADER = 100_000_000  # same limit as the Rust crate

# safetensors dtype -> (numpy storage dtype, itemsize).  BF16 is stored as uint16 bit patterns.
DTYPES: Dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


# ----------------------------------------------------------------------------------------------
# bfloat16 <-> float32 (bit manipulation)
# ----------------------------------------------------------------------------------------------

def float32_to_bf16_bits(x) -> np.ndarray:
    """Round float32 values to bfloat16 (round to nearest, ties to even); return uint16 bits.

    bf16 is the upper 16 bits of an IEEE float32.  Rounding adds 0x7FFF plus the lowest kept bit
    (ties to even) before truncating; overflow of the largest finite values correctly produces
    infinity.  NaNs are kept NaN (quiet bit forced so truncation cannot turn them into inf).
    """
    a = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    bits = a.view(np.uint32)
    with np.errstate(over="ignore"):
        rounded = (bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))) \
            & np.uint32(0xFFFF0000)
    nan = np.isnan(a)
    if np.any(nan):
        rounded = np.where(nan, (bits | np.uint32(0x00400000)) & np.uint32(0xFFFF0000), rounded)
    return (rounded >> np.uint32(16)).astype(np.uint16)


def bf16_bits_to_float32(bits) -> np.ndarray:
    """Exact conversion of bfloat16 bit patterns (uint16) to float32."""
    b = np.ascontiguousarray(np.asarray(bits, dtype=np.uint16))
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


def bf16_round(x) -> np.ndarray:
    """Round to the nearest bfloat16 value (ties to even), returned as float32."""
    return bf16_bits_to_float32(float32_to_bf16_bits(x))


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------

def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r} in safetensors header")
        out[k] = v
    return out


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_header(raw: bytes, data_len: int, where: str = "<buffer>", allow_gaps: bool = False
                 ) -> Tuple[Dict[str, dict], Dict[str, str]]:
    """Parse and validate a header (the N JSON bytes) against a data buffer of ``data_len`` bytes.

    Returns ``(entries, metadata)`` where entries maps name -> {"dtype", "shape" (tuple),
    "begin", "end"}.  Raises ValueError on any violation (see module docstring).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: safetensors header is not valid UTF-8 ({e})") from None
    try:
        hdr = json.loads(text, object_pairs_hook=_no_duplicates)
    except ValueError as e:  # json.JSONDecodeError is a ValueError; so is our duplicate error
        raise ValueError(f"{where}: safetensors header is not valid JSON: {e}") from None
    if not isinstance(hdr, dict):
        raise ValueError(f"{where}: safetensors header must be a JSON object, got "
                         f"{type(hdr).__name__}")
    metadata: Dict[str, str] = {}
    if "__metadata__" in hdr:
        md = hdr.pop("__metadata__")
        if not isinstance(md, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in md.items()):
            raise ValueError(f"{where}: __metadata__ must be an object of string values")
        metadata = dict(md)
    entries: Dict[str, dict] = {}
    for name, info in hdr.items():
        tag = f"{where}: tensor {name!r}"
        if not name:
            raise ValueError(f"{where}: empty tensor name in header")
        if not isinstance(info, dict):
            raise ValueError(f"{tag}: header entry must be an object")
        keys = set(info)
        if keys != {"dtype", "shape", "data_offsets"}:
            missing = {"dtype", "shape", "data_offsets"} - keys
            extra = keys - {"dtype", "shape", "data_offsets"}
            raise ValueError(f"{tag}: header entry must have exactly dtype, shape, data_offsets"
                             f" (missing {sorted(missing)}, unexpected {sorted(extra)})")
        dt = info["dtype"]
        if not isinstance(dt, str) or dt not in DTYPES:
            raise ValueError(f"{tag}: unsupported dtype {dt!r} (known: {', '.join(DTYPES)})")
        shape = info["shape"]
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise ValueError(f"{tag}: shape must be a list of non-negative integers, got "
                             f"{shape!r}")
        offs = info["data_offsets"]
        if (not isinstance(offs, list) or len(offs) != 2 or not all(_is_int(o) for o in offs)):
            raise ValueError(f"{tag}: data_offsets must be [begin, end] integers, got {offs!r}")
        begin, end = offs
        if not (0 <= begin <= end <= data_len):
            raise ValueError(f"{tag}: data_offsets [{begin}, {end}] out of range for a data "
                             f"buffer of {data_len} bytes")
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        want = n * DTYPES[dt].itemsize
        if end - begin != want:
            raise ValueError(f"{tag}: data_offsets span {end - begin} bytes but shape {shape} of "
                             f"{dt} needs {want} bytes")
        entries[name] = {"dtype": dt, "shape": tuple(shape), "begin": begin, "end": end}
    # Overlap / coverage: sort by (begin, end); each tensor must start at or after the previous end.
    order = sorted(entries.items(), key=lambda kv: (kv[1]["begin"], kv[1]["end"]))
    cursor, prev = 0, None
    for name, e in order:
        if e["begin"] < cursor:
            raise ValueError(f"{where}: tensors {prev!r} and {name!r} overlap in the data buffer "
                             f"({name!r} starts at {e['begin']}, before {prev!r} ends at {cursor})")
        if e["begin"] > cursor and not allow_gaps:
            raise ValueError(f"{where}: hole in the data buffer: bytes {cursor}..{e['begin']} "
                             f"before tensor {name!r} belong to no tensor")
        cursor, prev = e["end"], name
    if cursor != data_len and not allow_gaps:
        raise ValueError(f"{where}: data buffer has {data_len} bytes but the tensors cover only "
                         f"{cursor} (trailing bytes)")
    return entries, metadata


def _decode(buf, e, bf16: str):
    raw = np.frombuffer(buf, dtype=DTYPES[e["dtype"]], count=(e["end"] - e["begin"]) //
                        DTYPES[e["dtype"]].itemsize, offset=e["begin"]).reshape(e["shape"])
    if e["dtype"] == "BF16":
        if bf16 == "float32":
            return bf16_bits_to_float32(raw)
        if bf16 == "uint16":
            return raw.copy()
        raise ValueError(f"bf16 must be 'float32' or 'uint16', got {bf16!r}")
    return raw.astype(raw.dtype.newbyteorder("="), copy=True)


def read_header(path: str, allow_gaps: bool = False):
    """Read and validate the header of a safetensors file.

    Returns ``(entries, metadata, data_start)``; see :func:`parse_header`.
    """
    size = os.path.getsize(path)
    if size < 8:
        raise ValueError(f"{path}: file of {size} bytes is too short for a safetensors header")
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        if n > MAX_HEADER:
            raise ValueError(f"{path}: header length {n} exceeds the limit of {MAX_HEADER} bytes")
        if 8 + n > size:
            raise ValueError(f"{path}: header length {n} runs past the end of the file "
                             f"({size} bytes)")
        raw = f.read(n)
    entries, metadata = parse_header(raw, size - 8 - n, path, allow_gaps)
    return entries, metadata, 8 + n


def load_file(path: str, bf16: str = "float32", allow_gaps: bool = False,
              names: Optional[Iterable[str]] = None, with_metadata: bool = False):
    """Load the tensors of a safetensors file into a dict of numpy arrays (native byte order).

    ``bf16="float32"`` converts BF16 tensors exactly to float32; ``"uint16"`` returns the raw bits.
    ``names``: load only these (each must exist).  ``with_metadata``: also return ``__metadata__``.
    """
    entries, metadata, start = read_header(path, allow_gaps)
    wanted = list(entries) if names is None else list(names)
    for nm in wanted:
        if nm not in entries:
            raise ValueError(f"{path}: no tensor named {nm!r}")
    mm = np.memmap(path, dtype=np.uint8, mode="r", offset=start) if \
        os.path.getsize(path) > start else np.zeros(0, np.uint8)
    out = {nm: _decode(mm, entries[nm], bf16) for nm in wanted}
    del mm
    return (out, metadata) if with_metadata else out


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------

_NP_TO_ST = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32",
             np.dtype(np.float16): "F16", np.dtype(np.int64): "I64", np.dtype(np.int32): "I32",
             np.dtype(np.int16): "I16", np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8",
             np.dtype(np.bool_): "BOOL"}


def _encode(name: str, arr, dtype: Optional[str]) -> Tuple[str, bytes, tuple]:
    a = np.asarray(arr)
    if dtype is None:
        if a.dtype not in _NP_TO_ST:
            raise ValueError(f"tensor {name!r}: numpy dtype {a.dtype} has no safetensors dtype; "
                             f"pass dtype=")
        dtype = _NP_TO_ST[a.dtype]
    if dtype not in DTYPES:
        raise ValueError(f"tensor {name!r}: unsupported dtype {dtype!r}")
    if dtype == "BF16":
        if not np.issubdtype(a.dtype, np.floating):
            raise ValueError(f"tensor {name!r}: pass BF16 tensors as float values, not "
                             f"{a.dtype} (bits)")
        data = float32_to_bf16_bits(a.astype(np.float32)).astype("<u2")
    else:
        src_float = bool(np.issubdtype(a.dtype, np.floating))
        dst_float = dtype in ("F64", "F32", "F16")
        if src_float != dst_float:
            raise ValueError(f"tensor {name!r}: cannot store {a.dtype} as {dtype}")
        data = a.astype(DTYPES[dtype])
    return dtype, np.ascontiguousarray(data).tobytes(), tuple(int(d) for d in a.shape)


def save_file(tensors: Mapping[str, np.ndarray], path: str,
              metadata: Optional[Mapping[str, str]] = None,
              float_dtype: Optional[str] = None,
              dtypes: Optional[Mapping[str, str]] = None) -> None:
    """Write tensors to a safetensors file.

    ``float_dtype`` ("F32", "F16", "BF16", "F64") converts every floating tensor; ``dtypes`` is a
    per-name override.  Integer tensors keep their type (I32/I64...).  The header is padded with
    spaces to a multiple of 8 bytes (as the Rust crate does); tensors are laid out contiguously in
    name order.
    """
    dtypes = dict(dtypes or {})
    header: Dict[str, object] = {}
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("metadata must map strings to strings")
        header["__metadata__"] = dict(metadata)
    blobs = []
    off = 0
    for name in sorted(tensors):
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise ValueError(f"invalid tensor name {name!r}")
        arr = np.asarray(tensors[name])
        dt = dtypes.get(name)
        if dt is None and float_dtype is not None and np.issubdtype(arr.dtype, np.floating):
            dt = float_dtype
        dt, blob, shape = _encode(name, arr, dt)
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * ((-len(raw)) % 8)
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for b in blobs:
            f.write(b)


def save_sharded(tensors: Mapping[str, np.ndarray], directory: str, num_shards: int,
                 float_dtype: Optional[str] = None,
                 dtypes: Optional[Mapping[str, str]] = None,
                 metadata: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """Write ``num_shards`` files ``model-0000i-of-0000n.safetensors`` plus the index JSON.

    Tensors are assigned to shards greedily by size (in name order) so that shards are balanced.
    Returns the weight_map.
    """
    if num_shards < 1:
        raise ValueError("num_shards must be >= 1")
    names = sorted(tensors)
    sizes = {n: np.asarray(tensors[n]).size for n in names}
    total = sum(sizes.values())
    target = total / num_shards
    groups: list = [[] for _ in range(num_shards)]
    acc, s = 0, 0
    for n in names:
        if s < num_shards - 1 and acc >= target * (s + 1) and groups[s]:
            s += 1
        groups[s].append(n)
        acc += sizes[n]
    weight_map: Dict[str, str] = {}
    total_bytes = 0
    for i, grp in enumerate(groups):
        fname = f"model-{i + 1:05d}-of-{num_shards:05d}.safetensors"
        sub = {n: tensors[n] for n in grp}
        save_file(sub, os.path.join(directory, fname), metadata=metadata or {"format": "pt"},
                  float_dtype=float_dtype, dtypes=dtypes)
        for n in grp:
            weight_map[n] = fname
        ents, _, _ = read_header(os.path.join(directory, fname))
        total_bytes += sum(e["end"] - e["begin"] for e in ents.values())
    with open(os.path.join(directory, INDEX_NAME), "w") as f:
        json.dump({"metadata": {"total_size": total_bytes}, "weight_map": weight_map}, f,
                  indent=2, sort_keys=True)
    return weight_map


def load_checkpoint_tensors(directory: str, bf16: str = "float32") -> Dict[str, np.ndarray]:
    """Load every tensor of a checkpoint directory (sharded via the index, or model.safetensors).

    With an index, every name in ``weight_map`` must exist in its shard, every tensor of every
    shard must be listed in ``weight_map`` for that shard, and shard names must be plain file
    names inside the directory.
    """
    index = os.path.join(directory, INDEX_NAME)
    if os.path.exists(index):
        try:
            with open(index) as f:
                idx = json.load(f, object_pairs_hook=_no_duplicates)
        except ValueError as e:
            raise ValueError(f"{index}: not valid JSON: {e}") from None
        wm = idx.get("weight_map") if isinstance(idx, dict) else None
        if not isinstance(wm, dict) or not wm:
            raise ValueError(f"{index}: missing or empty 'weight_map' object")
        shards: Dict[str, list] = {}
        for name, shard in wm.items():
            if not isinstance(shard, str) or not shard or os.path.basename(shard) != shard \
                    or shard in (".", ".."):
                raise ValueError(f"{index}: tensor {name!r} maps to invalid shard name {shard!r}")
            shards.setdefault(shard, []).append(name)
        out: Dict[str, np.ndarray] = {}
        for shard, names in sorted(shards.items()):
            path = os.path.join(directory, shard)
            if not os.path.exists(path):
                raise ValueError(f"{index}: shard {shard!r} does not exist")
            ents, _, _ = read_header(path)
            listed = set(names)
            for n in names:
                if n not in ents:
                    raise ValueError(f"{index}: tensor {n!r} is mapped to {shard!r}, which does "
                                     f"not contain it")
            for n in ents:
                if n not in listed:
                    raise ValueError(f"{path}: tensor {n!r} is not mapped to this shard in "
                                     f"{INDEX_NAME}")
            out.update(load_file(path, bf16=bf16))
        return out
    single = os.path.join(directory, SINGLE_NAME)
    if os.path.exists(single):
        return load_file(single, bf16=bf16)
    raise ValueError(f"{directory}: neither {INDEX_NAME} nor {SINGLE_NAME} found")
