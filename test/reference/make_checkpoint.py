#!/usr/bin/env python3
"""Write a random tiny `qwen3_5_moe` checkpoint directory (MODEL.md §1, §2).

Output: ``config.json`` in the HF layout (dimensions under ``text_config``, like the real
Qwen3.6-35B-A3B config) and ``model.safetensors`` (or shards + ``model.safetensors.index.json``).

Options choose the name prefix (``model.language_model.`` as in Qwen3_5MoeForConditionalGeneration
or ``model.`` as in Qwen3_5MoeForCausalLM), the expert layout (fused ``experts.gate_up_proj`` /
``experts.down_proj`` or per-expert ``experts.{e}.gate_proj/up_proj/down_proj.weight``), and the
storage dtype (F32 or BF16).

Scales keep activations sane: 2-D weights ~ N(0, 1/fan_in) (std 1/sqrt(fan_in)), embeddings
~ N(0, 1), zero-centred norm offsets ~ N(0, 0.1²), the plain DeltaNet norm weight ~ 1 + N(0, 0.1²),
conv taps std 1/sqrt(K), A_log = log(U(1, 16)), dt_bias ~ U(lo, hi) (default U(−3, −1), so that
α = e^g spans roughly 0.1…0.9 and the recurrent state actually remembers several tokens).

Example:
    python3 make_checkpoint.py --out /tmp/tiny --seed 1 --groups 2 --experts 8 --topk 2 \
        --dtype bf16 --shards 3 --prefix model --experts-layout per-expert
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, Optional

import numpy as np

try:
    from . import safetensors_io as st  # type: ignore
    from .qwen3_5_moe import Config  # type: ignore
except ImportError:  # pragma: no cover
    import safetensors_io as st  # type: ignore
    from qwen3_5_moe import Config  # type: ignore

# (CLI flag, text_config field, default) -- small defaults that exercise every feature:
# Groups 2, GQA, r = Hv/Hk = 2, TopK > 1 and Experts > TopK.
SIZE_FLAGS = [
    ("vocab", "vocab_size", 64),
    ("hidden", "hidden_size", 32),
    ("heads", "num_attention_heads", 4),
    ("kv-heads", "num_key_value_heads", 2),
    ("head-dim", "head_dim", 16),
    ("key-heads", "linear_num_key_heads", 2),
    ("value-heads", "linear_num_value_heads", 4),
    ("key-dim", "linear_key_head_dim", 8),
    ("value-dim", "linear_value_head_dim", 8),
    ("conv-width", "linear_conv_kernel_dim", 4),
    ("experts", "num_experts", 8),
    ("topk", "num_experts_per_tok", 2),
    ("expert-inner", "moe_intermediate_size", 16),
    ("shared-inner", "shared_expert_intermediate_size", 16),
    ("max-seq", "max_position_embeddings", 4096),
]


def _mrope_section(half: int):
    """Split R/2 frequencies into three sections like [11, 11, 10] for 32 (metadata only)."""
    base, rem = divmod(half, 3)
    return [base + (1 if i < rem else 0) for i in range(3)]


def text_config_dict(groups: int = 2, rope_theta: float = 10000000.0,
                     partial_rotary_factor: float = 0.25, rms_norm_eps: float = 1e-6,
                     **sizes) -> dict:
    """The `text_config` object (§1) for the given sizes (HF field names as keyword args)."""
    vals = {field: default for _, field, default in SIZE_FLAGS}
    for k, v in sizes.items():
        if k not in vals:
            raise ValueError(f"unknown size field {k!r}")
        vals[k] = int(v)
    L = 4 * groups
    D = vals["head_dim"]
    R = int(D * partial_rotary_factor)
    tc = {
        "model_type": "qwen3_5_moe_text",
        "vocab_size": vals["vocab_size"],
        "hidden_size": vals["hidden_size"],
        "num_hidden_layers": L,
        "num_attention_heads": vals["num_attention_heads"],
        "num_key_value_heads": vals["num_key_value_heads"],
        "head_dim": D,
        "hidden_act": "silu",
        "max_position_embeddings": vals["max_position_embeddings"],
        "initializer_range": 0.02,
        "rms_norm_eps": rms_norm_eps,
        "use_cache": True,
        "tie_word_embeddings": False,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": float(rope_theta),
            "partial_rotary_factor": partial_rotary_factor,
            "mrope_section": _mrope_section(R // 2),
            "mrope_interleaved": True,
        },
        "partial_rotary_factor": partial_rotary_factor,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attn_output_gate": True,
        "linear_conv_kernel_dim": vals["linear_conv_kernel_dim"],
        "linear_key_head_dim": vals["linear_key_head_dim"],
        "linear_value_head_dim": vals["linear_value_head_dim"],
        "linear_num_key_heads": vals["linear_num_key_heads"],
        "linear_num_value_heads": vals["linear_num_value_heads"],
        "moe_intermediate_size": vals["moe_intermediate_size"],
        "shared_expert_intermediate_size": vals["shared_expert_intermediate_size"],
        "num_experts_per_tok": vals["num_experts_per_tok"],
        "num_experts": vals["num_experts"],
        "output_router_logits": False,
        "router_aux_loss_coef": 0.001,
        "full_attention_interval": 4,
        "layer_types": ["full_attention" if i % 4 == 3 else "linear_attention"
                        for i in range(L)],
        "mamba_ssm_dtype": "float32",
        "mtp_num_hidden_layers": 1,
        "mtp_use_dedicated_embeddings": False,
        "dtype": "bfloat16",
    }
    return tc


def hf_config(text_config: dict, text_only: bool = False, dtype: str = "bfloat16") -> dict:
    """Full config.json (§1 top level) around a text_config; or the flat text-only form."""
    tc = dict(text_config)
    tc["dtype"] = dtype
    if text_only:
        return tc
    return {
        "architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe",
        "tie_word_embeddings": False,
        "text_config": tc,
        "vision_config": {"model_type": "qwen3_5_moe_vision",
                          "note": "vision tower omitted; random tiny text checkpoint"},
        "image_token_id": 248056,
        "video_token_id": 248057,
        "vision_start_token_id": 248053,
        "vision_end_token_id": 248054,
    }


def random_tensors(cfg: Config, seed: int, dt_bias_range=(-3.0, -1.0)) -> Dict[str, np.ndarray]:
    """Random float32 weights with canonical names: prefix `model.language_model.`, fused experts."""
    rng = np.random.default_rng(seed)
    H, V, D = cfg.hidden_size, cfg.vocab_size, cfg.head_dim
    nH, nKV = cfg.num_attention_heads, cfg.num_key_value_heads
    Hv, Dv, C, K = (cfg.linear_num_value_heads, cfg.linear_value_head_dim, cfg.conv_dim,
                    cfg.linear_conv_kernel_dim)
    E, I, Is = cfg.num_experts, cfg.moe_intermediate_size, cfg.shared_expert_intermediate_size
    f32 = np.float32

    def lin(out, inp, *lead):
        return (rng.standard_normal(lead + (out, inp)) / np.sqrt(inp)).astype(f32)

    def offs(n):  # zero-centred norm weight (offset from 1)
        return (0.1 * rng.standard_normal(n)).astype(f32)

    P = "model.language_model."
    t: Dict[str, np.ndarray] = {
        P + "embed_tokens.weight": rng.standard_normal((V, H)).astype(f32),
        P + "norm.weight": offs(H),
        "lm_head.weight": lin(V, H),
    }
    for i in range(cfg.num_hidden_layers):
        lp = f"{P}layers.{i}."
        t[lp + "input_layernorm.weight"] = offs(H)
        t[lp + "post_attention_layernorm.weight"] = offs(H)
        if cfg.is_full_attention(i):
            a = lp + "self_attn."
            t[a + "q_proj.weight"] = lin(2 * nH * D, H)
            t[a + "k_proj.weight"] = lin(nKV * D, H)
            t[a + "v_proj.weight"] = lin(nKV * D, H)
            t[a + "o_proj.weight"] = lin(H, nH * D)
            t[a + "q_norm.weight"] = offs(D)
            t[a + "k_norm.weight"] = offs(D)
        else:
            a = lp + "linear_attn."
            t[a + "in_proj_qkv.weight"] = lin(C, H)
            t[a + "in_proj_z.weight"] = lin(cfg.value_dim, H)
            t[a + "in_proj_b.weight"] = lin(Hv, H)
            t[a + "in_proj_a.weight"] = lin(Hv, H)
            t[a + "conv1d.weight"] = (rng.standard_normal((C, 1, K)) / np.sqrt(K)).astype(f32)
            t[a + "dt_bias"] = rng.uniform(*dt_bias_range, size=Hv).astype(f32)
            t[a + "A_log"] = np.log(rng.uniform(1.0, 16.0, size=Hv)).astype(f32)
            t[a + "norm.weight"] = (1.0 + 0.1 * rng.standard_normal(Dv)).astype(f32)
            t[a + "out_proj.weight"] = lin(H, cfg.value_dim)
        m = lp + "mlp."
        t[m + "gate.weight"] = lin(E, H)
        t[m + "experts.gate_up_proj"] = lin(2 * I, H, E)
        t[m + "experts.down_proj"] = lin(H, I, E)
        t[m + "shared_expert.gate_proj.weight"] = lin(Is, H)
        t[m + "shared_expert.up_proj.weight"] = lin(Is, H)
        t[m + "shared_expert.down_proj.weight"] = lin(H, Is)
        t[m + "shared_expert_gate.weight"] = lin(1, H)
    return t


def relayout(tensors: Dict[str, np.ndarray], prefix: str = "language_model",
             experts: str = "fused") -> Dict[str, np.ndarray]:
    """Rename canonical tensors to another prefix ('language_model' | 'model') and/or split the
    fused experts into per-expert tensors (§2: gate_up_proj[e] = concat(gate, up))."""
    if prefix not in ("language_model", "model"):
        raise ValueError(f"prefix must be 'language_model' or 'model', got {prefix!r}")
    if experts not in ("fused", "per-expert"):
        raise ValueError(f"experts must be 'fused' or 'per-expert', got {experts!r}")
    src = "model.language_model."
    dst = src if prefix == "language_model" else "model."
    out: Dict[str, np.ndarray] = {}
    for name, a in tensors.items():
        new = dst + name[len(src):] if name.startswith(src) else name
        if experts == "per-expert" and new.endswith("mlp.experts.gate_up_proj"):
            base = new[: -len("gate_up_proj")]
            I = a.shape[1] // 2
            for e in range(a.shape[0]):
                out[f"{base}{e}.gate_proj.weight"] = np.ascontiguousarray(a[e, :I])
                out[f"{base}{e}.up_proj.weight"] = np.ascontiguousarray(a[e, I:])
        elif experts == "per-expert" and new.endswith("mlp.experts.down_proj"):
            base = new[: -len("down_proj")]
            for e in range(a.shape[0]):
                out[f"{base}{e}.down_proj.weight"] = np.ascontiguousarray(a[e])
        else:
            out[new] = a
    return out


def write_checkpoint(out_dir: str, seed: int = 0, groups: int = 2, prefix: str = "language_model",
                     experts: str = "fused", dtype: str = "f32", shards: int = 1,
                     rope_theta: float = 10000000.0, partial_rotary_factor: float = 0.25,
                     rms_norm_eps: float = 1e-6, text_only_config: bool = False,
                     f32_ssm_params: bool = False, dt_bias_range=(-3.0, -1.0),
                     **sizes) -> Dict[str, np.ndarray]:
    """Write a checkpoint directory; return the tensors as written (BF16 values rounded)."""
    if dtype not in ("f32", "bf16"):
        raise ValueError(f"dtype must be 'f32' or 'bf16', got {dtype!r}")
    tc = text_config_dict(groups=groups, rope_theta=rope_theta,
                          partial_rotary_factor=partial_rotary_factor,
                          rms_norm_eps=rms_norm_eps, **sizes)
    cfg = Config.from_dict({"text_config": tc})
    tensors = relayout(random_tensors(cfg, seed, dt_bias_range), prefix, experts)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(hf_config(tc, text_only_config,
                            "bfloat16" if dtype == "bf16" else "float32"), f, indent=2)
    float_dtype = "BF16" if dtype == "bf16" else "F32"
    overrides = {}
    if dtype == "bf16" and f32_ssm_params:  # [3p]: A_log and linear_attn.norm stored F32 (§2)
        overrides = {n: "F32" for n in tensors
                     if n.endswith("linear_attn.A_log") or n.endswith("linear_attn.norm.weight")}
    for old in os.listdir(out_dir):  # remove stale weights from an earlier run
        if old.endswith(".safetensors") or old == st.INDEX_NAME:
            os.remove(os.path.join(out_dir, old))
    if shards <= 1:
        st.save_file(tensors, os.path.join(out_dir, st.SINGLE_NAME), metadata={"format": "pt"},
                     float_dtype=float_dtype, dtypes=overrides)
    else:
        st.save_sharded(tensors, out_dir, shards, float_dtype=float_dtype, dtypes=overrides)
    if dtype == "bf16":
        tensors = {n: (a if n in overrides else st.bf16_round(a)) for n, a in tensors.items()}
    return tensors


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--groups", type=int, default=2, help="num_hidden_layers = 4 * groups")
    for flag, field, default in SIZE_FLAGS:
        ap.add_argument(f"--{flag}", type=int, default=default, dest=field,
                        help=f"text_config.{field} (default {default})")
    ap.add_argument("--rope-theta", type=float, default=10000000.0)
    ap.add_argument("--partial-rotary-factor", type=float, default=0.25)
    ap.add_argument("--rms-norm-eps", type=float, default=1e-6)
    ap.add_argument("--prefix", choices=["language_model", "model"], default="language_model",
                    help="'language_model': model.language_model.*; 'model': model.* (CausalLM)")
    ap.add_argument("--experts-layout", choices=["fused", "per-expert"], default="fused")
    ap.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    ap.add_argument("--shards", type=int, default=1, help="> 1 writes a sharded checkpoint")
    ap.add_argument("--text-only-config", action="store_true",
                    help="write a flat qwen3_5_moe_text config instead of text_config nesting")
    ap.add_argument("--f32-ssm-params", action="store_true",
                    help="with --dtype bf16, keep A_log and linear_attn.norm.weight in F32")
    ap.add_argument("--dt-bias-range", type=float, nargs=2, default=(-3.0, -1.0),
                    metavar=("LO", "HI"))
    a = ap.parse_args(argv)
    sizes = {field: getattr(a, field) for _, field, _ in SIZE_FLAGS}
    try:
        t = write_checkpoint(a.out, seed=a.seed, groups=a.groups, prefix=a.prefix,
                             experts=a.experts_layout, dtype=a.dtype, shards=a.shards,
                             rope_theta=a.rope_theta, partial_rotary_factor=a.partial_rotary_factor,
                             rms_norm_eps=a.rms_norm_eps, text_only_config=a.text_only_config,
                             f32_ssm_params=a.f32_ssm_params, dt_bias_range=tuple(a.dt_bias_range),
                             **sizes)
    except ValueError as e:
        print(f"make_checkpoint: error: {e}", file=sys.stderr)
        return 2
    n = sum(int(np.prod(x.shape)) for x in t.values())
    print(f"wrote {a.out}: {len(t)} tensors, {n} parameters, {a.dtype}, "
          f"{'sharded x%d' % a.shards if a.shards > 1 else 'single file'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
