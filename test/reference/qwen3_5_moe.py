"""Independent numpy reference of the `qwen3_5_moe` text model (Qwen3.6-35B-A3B).

Written from /work/shared/docs/MODEL.md (cited as "§n") and the entry semantics of DESIGN.md
("The model's entries") only.  It is the oracle the compiler's CPU output is compared against,
so it favours clarity and exactness over speed: every sequence (row) is processed on its own,
the delta rule runs token by token in the recurrent form of §8.7, and the default precision is
float64.

Precision modes (``Model(..., dtype=, bf16=)``):
  * ``dtype=np.float64`` (default): exact-as-possible oracle; the recurrent state is float64.
  * ``dtype=np.float32``: everything in float32 (recurrent state float32, §11/§13).
  * ``bf16=True``: float32 arithmetic, weights rounded to bfloat16, and activations rounded to
    bfloat16 (round-to-nearest-even, bit manipulation) at the HF rounding points of §13: every
    linear/matmul output, norm outputs, RoPE tables and products, attention scores/probabilities,
    sigmoid/SiLU outputs, β, the delta-rule output, the gated-norm steps of §8.9, routing
    weights, each step of the routed-expert accumulation (ascending expert id, like HF's
    ``index_add_``), residual adds and logits.  The f32 islands (norm statistics, softmaxes,
    router renormalisation, g, l2norm, the delta rule itself and its state) stay float32.
    Use it only for statistical comparisons with bf16 runs (§13).

Entries (DESIGN.md): :meth:`Model.forward`, :meth:`Model.next_token` (stateless) and, on a
:class:`Session` holding ``batch`` state slots, :meth:`Session.prefill`, :meth:`Session.decode`,
:meth:`Session.decode_rows`, :meth:`Session.prefill_slots`.

Per-slot state (:class:`RowState`, §11), layouts used for comparisons:
  * attention layer i: ``kv[i] = (K, V)``, each ``[nKV, T, D]``; K after k_norm and RoPE, V raw;
  * DeltaNet layer i: ``conv[i]`` = last K−1 pre-conv rows ``[K−1, C]`` (zeros before the start),
    ``rec[i]`` = recurrent state ``[Hv, Dk, Dv]`` (HF/FLA layout);
  * ``count`` = number of tokens already in the state (the next token's position).
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

try:  # works both as a script folder on sys.path and as a package
    from . import safetensors_io as st  # type: ignore
except ImportError:  # pragma: no cover
    import safetensors_io as st  # type: ignore

__all__ = ["Config", "Model", "Session", "RowState", "load_config", "load_model",
           "recurrent_gated_delta_rule", "chunked_gated_delta_rule", "bf16_round",
           "LANGUAGE_MODEL_PREFIX", "CAUSAL_LM_PREFIX"]

bf16_round = st.bf16_round

LANGUAGE_MODEL_PREFIX = "model.language_model."   # Qwen3_5MoeForConditionalGeneration (§2)
CAUSAL_LM_PREFIX = "model."                       # Qwen3_5MoeForCausalLM (§2)
L2NORM_EPS = 1e-6                                 # §8.4: fixed, not rms_norm_eps
SOFTPLUS_THRESHOLD = 20.0                         # §3: torch softplus returns u when u > 20


# ==============================================================================================
# §1 / §16  Configuration
# ==============================================================================================

@dataclass
class Config:
    """The text configuration (§1), with the Linnet generic names of §16 as properties."""
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    linear_num_key_heads: int
    linear_num_value_heads: int
    linear_key_head_dim: int
    linear_value_head_dim: int
    linear_conv_kernel_dim: int
    num_experts: int
    num_experts_per_tok: int
    moe_intermediate_size: int
    shared_expert_intermediate_size: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000000.0
    partial_rotary_factor: float = 0.25
    max_position_embeddings: int = 32768
    layer_types: List[str] = field(default_factory=list)

    # ---- derived (§1) ----
    @property
    def key_dim(self) -> int:
        return self.linear_num_key_heads * self.linear_key_head_dim

    @property
    def value_dim(self) -> int:
        return self.linear_num_value_heads * self.linear_value_head_dim

    @property
    def conv_dim(self) -> int:
        """C = 2·key_dim + value_dim (Linnet `Conv`)."""
        return 2 * self.key_dim + self.value_dim

    @property
    def value_per_key(self) -> int:
        """r = Hv / Hk."""
        return self.linear_num_value_heads // self.linear_num_key_heads

    @property
    def queries_per_kv(self) -> int:
        """g_att = nH / nKV."""
        return self.num_attention_heads // self.num_key_value_heads

    @property
    def rotary_dim(self) -> int:
        """R = int(D · partial_rotary_factor) (§1, §7.3)."""
        return int(self.head_dim * self.partial_rotary_factor)

    @property
    def groups(self) -> int:
        """Linnet `Groups` = num_hidden_layers / 4 (§16)."""
        return self.num_hidden_layers // 4

    def is_full_attention(self, i: int) -> bool:
        return self.layer_types[i] == "full_attention"

    def validate(self) -> None:
        """Check the divisibility and pattern constraints the model relies on (ValueError)."""
        def need(cond, msg):
            if not cond:
                raise ValueError(f"config: {msg}")
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "num_key_value_heads", "head_dim", "linear_num_key_heads",
                     "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
                     "linear_conv_kernel_dim", "num_experts", "num_experts_per_tok",
                     "moe_intermediate_size", "shared_expert_intermediate_size",
                     "max_position_embeddings"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                 f"{name} must be a positive integer, got {v!r}")
        need(self.num_attention_heads % self.num_key_value_heads == 0,
             "num_attention_heads must be a multiple of num_key_value_heads")
        need(self.linear_num_value_heads % self.linear_num_key_heads == 0,
             "linear_num_value_heads must be a multiple of linear_num_key_heads")
        need(self.num_experts_per_tok <= self.num_experts,
             "num_experts_per_tok must not exceed num_experts")
        R = self.rotary_dim
        need(0 <= R <= self.head_dim and R % 2 == 0,
             f"rotary dim int(head_dim·partial_rotary_factor) = {R} must be even and <= head_dim")
        need(self.rms_norm_eps > 0, "rms_norm_eps must be positive")
        need(self.rope_theta > 0, "rope_theta must be positive")
        lt = self.layer_types
        need(isinstance(lt, list) and len(lt) == self.num_hidden_layers,
             f"layer_types must list {self.num_hidden_layers} entries, got "
             f"{len(lt) if isinstance(lt, list) else lt!r}")
        for i, t in enumerate(lt):
            need(t in ("linear_attention", "full_attention"),
                 f"layer_types[{i}] = {t!r} is neither linear_attention nor full_attention")
        # §16: the binding requires the 3:1 pattern (groups of 3 DeltaNet + 1 attention layer).
        need(self.num_hidden_layers % 4 == 0,
             f"num_hidden_layers = {self.num_hidden_layers} is not a multiple of 4 (3:1 pattern)")
        for i, t in enumerate(lt):
            want = "full_attention" if i % 4 == 3 else "linear_attention"
            need(t == want, f"layer_types[{i}] = {t!r} breaks the 3:1 pattern (expected "
                            f"{want!r}: full attention exactly at layers 3, 7, 11, ...)")

    @staticmethod
    def from_dict(d: Mapping) -> "Config":
        """Read a HF `config.json` dict (§1): dimensions under `text_config`; top level only for
        a text-only `qwen3_5_moe_text` config."""
        if "text_config" in d:
            tc = d["text_config"]
            if not isinstance(tc, dict):
                raise ValueError("config: text_config must be an object")
            top = d
        elif d.get("model_type") == "qwen3_5_moe_text":
            tc, top = d, d
        else:
            raise ValueError("config: no text_config (and model_type is "
                             f"{d.get('model_type')!r}, not a text-only 'qwen3_5_moe_text')")
        if "model_type" in tc and tc["model_type"] != "qwen3_5_moe_text":
            raise ValueError(f"config: text_config.model_type is {tc['model_type']!r}, expected "
                             "'qwen3_5_moe_text'")

        def get(name, default=None, required=True):
            if name in tc:
                return tc[name]
            if required and default is None:
                raise ValueError(f"config: text_config.{name} is missing")
            return default

        act = tc.get("hidden_act", "silu")
        if act != "silu":
            raise ValueError(f"config: hidden_act {act!r} is not 'silu'")
        for where in (tc, top):
            if where.get("tie_word_embeddings", False):
                raise ValueError("config: tie_word_embeddings is true, but this model has an "
                                 "untied lm_head (§10)")
        rp = tc.get("rope_parameters") or tc.get("rope_scaling") or {}
        if not isinstance(rp, dict):
            raise ValueError("config: rope_parameters must be an object")
        rope_type = rp.get("rope_type", rp.get("type", "default"))
        if rope_type != "default":
            raise ValueError(f"config: rope_type {rope_type!r} is not supported (only 'default')")
        theta = rp.get("rope_theta", tc.get("rope_theta", 10000.0))
        prf = rp.get("partial_rotary_factor", tc.get("partial_rotary_factor", 0.25))
        L = get("num_hidden_layers")
        lt = tc.get("layer_types")
        if lt is None:
            # §1: default pattern, layer i is linear iff (i+1) % interval != 0.
            interval = tc.get("full_attention_interval", 4)
            lt = ["linear_attention" if (i + 1) % interval else "full_attention"
                  for i in range(L)]
        cfg = Config(
            vocab_size=get("vocab_size"), hidden_size=get("hidden_size"),
            num_hidden_layers=L, num_attention_heads=get("num_attention_heads"),
            num_key_value_heads=get("num_key_value_heads"), head_dim=get("head_dim"),
            linear_num_key_heads=get("linear_num_key_heads"),
            linear_num_value_heads=get("linear_num_value_heads"),
            linear_key_head_dim=get("linear_key_head_dim"),
            linear_value_head_dim=get("linear_value_head_dim"),
            linear_conv_kernel_dim=get("linear_conv_kernel_dim"),
            num_experts=get("num_experts"), num_experts_per_tok=get("num_experts_per_tok"),
            moe_intermediate_size=get("moe_intermediate_size"),
            shared_expert_intermediate_size=get("shared_expert_intermediate_size"),
            rms_norm_eps=float(tc.get("rms_norm_eps", 1e-6)),
            rope_theta=float(theta), partial_rotary_factor=float(prf),
            max_position_embeddings=tc.get("max_position_embeddings", 32768),
            layer_types=list(lt))
        cfg.validate()
        return cfg


def load_config(path: str) -> Config:
    """Load `config.json` (path to the file or to the checkpoint directory)."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    with open(path) as f:
        return Config.from_dict(json.load(f))


# ==============================================================================================
# §2 / §16  Weights
# ==============================================================================================

def _detect_prefix(names) -> str:
    if any(n.startswith(LANGUAGE_MODEL_PREFIX) for n in names):
        return LANGUAGE_MODEL_PREFIX
    if any(n.startswith(CAUSAL_LM_PREFIX) for n in names):
        return CAUSAL_LM_PREFIX
    raise ValueError("weights: no tensor starts with 'model.language_model.' or 'model.'")


def _ignored(name: str) -> bool:
    """Vision tower and MTP head tensors are not part of the text model (§2)."""
    return name.startswith(("model.visual.", "visual.", "mtp.", "model.mtp."))


class _Taker:
    """Takes tensors by name, checks shapes, and reports leftovers (unexpected names)."""

    def __init__(self, tensors: Mapping[str, np.ndarray], prefix: str, dtype, bf16: bool):
        self.t = tensors
        self.prefix = prefix
        self.dtype = dtype
        self.bf16 = bf16
        self.left = {n for n in tensors if not _ignored(n)}

    def has(self, rel: str, top: bool = False) -> bool:
        return (rel if top else self.prefix + rel) in self.t

    def take(self, rel: str, shape: Tuple[int, ...], top: bool = False) -> np.ndarray:
        name = rel if top else self.prefix + rel
        if name not in self.t:
            raise ValueError(f"weights: missing tensor {name!r} (expected shape {list(shape)})")
        a = np.asarray(self.t[name])
        if tuple(a.shape) != tuple(shape):
            raise ValueError(f"weights: tensor {name!r} has shape {list(a.shape)}, expected "
                             f"{list(shape)}")
        if not np.issubdtype(a.dtype, np.floating):
            raise ValueError(f"weights: tensor {name!r} has non-float dtype {a.dtype}")
        self.left.discard(name)
        a = a.astype(np.float32 if self.bf16 else self.dtype)
        if self.bf16:
            a = bf16_round(a)
        return a

    def finish(self) -> None:
        if self.left:
            names = sorted(self.left)
            more = f" (and {len(names) - 10} more)" if len(names) > 10 else ""
            raise ValueError(f"weights: unexpected tensors {names[:10]}{more}")


@dataclass
class LayerWeights:
    """One decoder layer's parameters (§6–§9), in `[out, in]` layout."""
    kind: str                                 # "full_attention" | "linear_attention"
    input_norm: np.ndarray                    # [H]
    post_norm: np.ndarray                     # [H]
    p: Dict[str, np.ndarray]                  # mixer parameters (names as in the checkpoint)
    router: np.ndarray                        # [E, H]
    gate_up: np.ndarray                       # [E, 2I, H]  rows 0:I gate, I:2I up
    down: np.ndarray                          # [E, H, I]
    shared_gate: np.ndarray                   # [Is, H]
    shared_up: np.ndarray                     # [Is, H]
    shared_down: np.ndarray                   # [H, Is]
    shared_expert_gate: np.ndarray            # [1, H]


def _load_weights(cfg: Config, tensors: Mapping[str, np.ndarray], dtype, bf16: bool):
    prefix = _detect_prefix(tensors)
    tk = _Taker(tensors, prefix, dtype, bf16)
    V, H, D = cfg.vocab_size, cfg.hidden_size, cfg.head_dim
    nH, nKV = cfg.num_attention_heads, cfg.num_key_value_heads
    Hv, Dv, C, K = cfg.linear_num_value_heads, cfg.linear_value_head_dim, cfg.conv_dim, \
        cfg.linear_conv_kernel_dim
    E, I, Is = cfg.num_experts, cfg.moe_intermediate_size, cfg.shared_expert_intermediate_size
    embed = tk.take("embed_tokens.weight", (V, H))
    final_norm = tk.take("norm.weight", (H,))
    lm_head = tk.take("lm_head.weight", (V, H), top=True)
    layers: List[LayerWeights] = []
    for i in range(cfg.num_hidden_layers):
        lp = f"layers.{i}."
        if cfg.is_full_attention(i):
            a = lp + "self_attn."
            p = {"q_proj": tk.take(a + "q_proj.weight", (2 * nH * D, H)),
                 "k_proj": tk.take(a + "k_proj.weight", (nKV * D, H)),
                 "v_proj": tk.take(a + "v_proj.weight", (nKV * D, H)),
                 "o_proj": tk.take(a + "o_proj.weight", (H, nH * D)),
                 "q_norm": tk.take(a + "q_norm.weight", (D,)),
                 "k_norm": tk.take(a + "k_norm.weight", (D,))}
        else:
            a = lp + "linear_attn."
            p = {"in_proj_qkv": tk.take(a + "in_proj_qkv.weight", (C, H)),
                 "in_proj_z": tk.take(a + "in_proj_z.weight", (cfg.value_dim, H)),
                 "in_proj_b": tk.take(a + "in_proj_b.weight", (Hv, H)),
                 "in_proj_a": tk.take(a + "in_proj_a.weight", (Hv, H)),
                 "conv": tk.take(a + "conv1d.weight", (C, 1, K))[:, 0, :],   # [C, K]
                 "dt_bias": tk.take(a + "dt_bias", (Hv,)),
                 "A_log": tk.take(a + "A_log", (Hv,)),
                 "norm": tk.take(a + "norm.weight", (Dv,)),
                 "out_proj": tk.take(a + "out_proj.weight", (H, cfg.value_dim))}
        m = lp + "mlp."
        fused = tk.has(m + "experts.gate_up_proj") or tk.has(m + "experts.down_proj")
        per_expert = any(tk.has(f"{m}experts.{e}.{w}.weight") for e in range(E)
                         for w in ("gate_proj", "up_proj", "down_proj"))
        if fused and per_expert:
            raise ValueError(f"weights: layer {i} has both fused and per-expert expert tensors")
        if fused or not per_expert:
            gate_up = tk.take(m + "experts.gate_up_proj", (E, 2 * I, H))
            down = tk.take(m + "experts.down_proj", (E, H, I))
        else:  # §2: gate_up_proj[e] = concat(gate_proj, up_proj, dim=0)
            gate_up = np.stack([np.concatenate(
                [tk.take(f"{m}experts.{e}.gate_proj.weight", (I, H)),
                 tk.take(f"{m}experts.{e}.up_proj.weight", (I, H))], axis=0) for e in range(E)])
            down = np.stack([tk.take(f"{m}experts.{e}.down_proj.weight", (H, I))
                             for e in range(E)])
        layers.append(LayerWeights(
            kind=cfg.layer_types[i],
            input_norm=tk.take(lp + "input_layernorm.weight", (H,)),
            post_norm=tk.take(lp + "post_attention_layernorm.weight", (H,)),
            p=p,
            router=tk.take(m + "gate.weight", (E, H)),
            gate_up=gate_up, down=down,
            shared_gate=tk.take(m + "shared_expert.gate_proj.weight", (Is, H)),
            shared_up=tk.take(m + "shared_expert.up_proj.weight", (Is, H)),
            shared_down=tk.take(m + "shared_expert.down_proj.weight", (H, Is)),
            shared_expert_gate=tk.take(m + "shared_expert_gate.weight", (1, H))))
    tk.finish()
    return embed, final_norm, lm_head, layers


# ==============================================================================================
# Elementwise helpers (§3)
# ==============================================================================================

def _sigmoid(x):
    """Numerically stable logistic σ(x) = exp(−log(1 + e^(−x))) (no overflow for any x)."""
    return np.exp(-np.logaddexp(0, -x))


def _silu(x):
    return x * _sigmoid(x)


def _softplus(x):
    """torch.nn.functional.softplus (beta 1, threshold 20): u if u > 20 else log(1 + e^u)."""
    return np.where(x > SOFTPLUS_THRESHOLD, x, np.logaddexp(0, x)).astype(x.dtype, copy=False)


def _softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


# ==============================================================================================
# §8.7 / §8.8  Gated delta rule
# ==============================================================================================

def recurrent_gated_delta_rule(q, k, v, g, beta, S0=None):
    """§8.7, token by token.  Shapes (one sequence, value heads already expanded, §8.6):
    q, k: [T, Hv, Dk] (q̂, k̂ of §8.4); v: [T, Hv, Dv]; g, beta: [T, Hv]; S0: [Hv, Dk, Dv] or None.

        S̃_t = exp(g_t)·S_{t−1};  u_t = β_t·(v_t − S̃_tᵀ k̂_t);  S_t = S̃_t + k̂_t u_tᵀ;  o_t = S_tᵀ q̂_t

    Returns (o [T, Hv, Dv], S_T [Hv, Dk, Dv]); computed in the dtype of q.
    """
    T, Hv, Dk = q.shape
    Dv = v.shape[-1]
    dt = q.dtype
    S = np.zeros((Hv, Dk, Dv), dt) if S0 is None else np.array(S0, dtype=dt, copy=True)
    o = np.empty((T, Hv, Dv), dt)
    for t in range(T):
        S = np.exp(g[t]).astype(dt)[:, None, None] * S
        pred = np.einsum("hkv,hk->hv", S, k[t])
        u = beta[t][:, None] * (v[t] - pred)
        S = S + k[t][:, :, None] * u[:, None, :]
        o[t] = np.einsum("hkv,hk->hv", S, q[t])
    return o, S


def chunked_gated_delta_rule(q, k, v, g, beta, S0=None, chunk: int = 64):
    """§8.8, the chunked (WY / UT-transform) form; equal to §8.7 in exact arithmetic.

    Same shapes as :func:`recurrent_gated_delta_rule`.  The final partial chunk is padded with
    zeros (β = 0, g = 0, k = 0), which changes neither outputs nor state.  Within a chunk with
    G = cumsum(g), Γ_ij = exp(G_i − G_j) (j ≤ i), A = strictly-lower β_i (k̂_i·k̂_j) Γ_ij,
    T = (I + A)^{-1}:  U = T(β⊙V), W = T(β⊙e^G⊙K̂), V_new = U − W S₀,
    O = (Q̂⊙e^G) S₀ + ((Q̂K̂ᵀ)⊙Γ) V_new,  S_n = e^{G_n} S₀ + (K̂⊙e^{G_n−G})ᵀ V_new.
    Used only to cross-check the recurrent form in the self-test.
    """
    T, Hv, Dk = q.shape
    Dv = v.shape[-1]
    dt = q.dtype
    pad = (-T) % chunk
    if pad:
        z3 = lambda a: np.concatenate([a, np.zeros((pad,) + a.shape[1:], a.dtype)], axis=0)
        q, k, v, g, beta = z3(q), z3(k), z3(v), z3(g), z3(beta)
    S = np.zeros((Hv, Dk, Dv), dt) if S0 is None else np.array(S0, dtype=dt, copy=True)
    out = np.empty((T + pad, Hv, Dv), dt)
    n = chunk
    incl = np.tril(np.ones((n, n), bool))          # j <= i
    strict = np.tril(np.ones((n, n), bool), -1)    # j < i
    eye = np.eye(n, dtype=dt)
    for c0 in range(0, T + pad, n):
        Q = q[c0:c0 + n].transpose(1, 0, 2)        # [Hv, n, Dk]
        Kc = k[c0:c0 + n].transpose(1, 0, 2)       # [Hv, n, Dk]
        Vc = v[c0:c0 + n].transpose(1, 0, 2)       # [Hv, n, Dv]
        gg = g[c0:c0 + n].T                        # [Hv, n]
        bb = beta[c0:c0 + n].T                     # [Hv, n]
        G = np.cumsum(gg, axis=1)                  # inclusive cumsum
        diff = G[:, :, None] - G[:, None, :]       # G_i − G_j
        Gam = np.exp(np.where(incl, diff, -np.inf))  # masked before exp (no overflow)
        KK = Kc @ Kc.transpose(0, 2, 1)
        A = np.where(strict, bb[:, :, None] * KK * Gam, 0.0)
        M = eye + A                                # unit lower triangular
        U = np.linalg.solve(M, bb[:, :, None] * Vc)
        W = np.linalg.solve(M, (bb * np.exp(G))[:, :, None] * Kc)
        Vnew = U - W @ S
        O = (Q * np.exp(G)[:, :, None]) @ S + ((Q @ Kc.transpose(0, 2, 1)) * Gam) @ Vnew
        Gn = G[:, -1]
        S = np.exp(Gn)[:, None, None] * S + \
            (Kc * np.exp(Gn[:, None] - G)[:, :, None]).transpose(0, 2, 1) @ Vnew
        out[c0:c0 + n] = O.transpose(1, 0, 2)
    return out[:T], S


# ==============================================================================================
# §11  Per-slot state
# ==============================================================================================

@dataclass
class RowState:
    """State of one sequence (slot), §11.  See the module docstring for the layouts."""
    count: int
    kv: Dict[int, Tuple[np.ndarray, np.ndarray]]
    conv: Dict[int, np.ndarray]
    rec: Dict[int, np.ndarray]

    def copy(self) -> "RowState":
        return copy.deepcopy(self)

    def equals(self, other: "RowState") -> bool:
        """Exact (bitwise-value) equality of two states."""
        if self.count != other.count or set(self.kv) != set(other.kv) \
                or set(self.conv) != set(other.conv):
            return False
        for i in self.kv:
            for a, b in zip(self.kv[i], other.kv[i]):
                if a.shape != b.shape or not np.array_equal(a, b):
                    return False
        for i in self.conv:
            if not np.array_equal(self.conv[i], other.conv[i]) or \
                    not np.array_equal(self.rec[i], other.rec[i]):
                return False
        return True


# ==============================================================================================
# The model
# ==============================================================================================

class Model:
    """The text model of §4–§10 with exact (float64 / float32) or bf16-emulating arithmetic."""

    def __init__(self, config: Config, tensors: Mapping[str, np.ndarray],
                 dtype=np.float64, bf16: bool = False):
        config.validate()
        self.cfg = config
        self.bf16 = bool(bf16)
        self.dtype = np.dtype(np.float32 if bf16 else dtype)
        if self.dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be float64 or float32, got {self.dtype}")
        # §11/§13: recurrent state in f32 (f64 in the float64 oracle).
        self.state_dtype = self.dtype
        (self.embed, self.final_norm, self.lm_head,
         self.layers) = _load_weights(config, tensors, self.dtype, self.bf16)
        # Rotary inverse frequencies (§7.3): inv_freq_m = θ^(−2m/R), m = 0 … R/2−1.
        R = config.rotary_dim
        self.inv_freq = (1.0 / (config.rope_theta ** (np.arange(0, R, 2, dtype=np.float64) / R))
                         ).astype(self.dtype)
        self.min_router_gap = np.inf   # smallest π_(k) − π_(k+1) seen (near-tie diagnostics)
        self.trace: Optional[list] = None  # set to [] to record (layer, name, array) tuples

    # ---------------------------------------------------------------- rounding helpers (§13)
    def _r(self, x):
        """Round to bf16 in bf16 mode (an HF rounding point); identity otherwise."""
        if self.bf16:
            return bf16_round(x)
        return x.astype(self.dtype, copy=False)

    def _lin(self, x, W):
        """y = x·Wᵀ (nn.Linear, §2), output rounded in bf16 mode."""
        return self._r(x @ W.T)

    # ---------------------------------------------------------------- §5 RMSNorm
    def _rmsnorm(self, x, w):
        """Zero-centred RMSNorm: x / sqrt(mean(x²) + ε) ⊙ (1 + w), statistics over the last axis."""
        eps = self.cfg.rms_norm_eps
        y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
        return self._r(y * (1.0 + w))

    # ---------------------------------------------------------------- §7.3 RoPE
    def _rope(self, x, pos):
        """Partial rotate-half RoPE on x [n, heads, D] at positions pos [n] (§7.3).

        Pairs (i, i + R/2) inside the first R dims; dims R… pass through."""
        R = self.cfg.rotary_dim
        if R == 0:
            return x
        h = R // 2
        ang = pos.astype(self.dtype)[:, None] * self.inv_freq[None, :]      # [n, R/2]
        cos = self._r(np.cos(ang))[:, None, :]                            # HF: cast to bf16
        sin = self._r(np.sin(ang))[:, None, :]
        a, b = x[..., :h], x[..., h:R]
        ya = self._r(self._r(a * cos) - self._r(b * sin))   # q·cos + rotate_half(q)·sin
        yb = self._r(self._r(b * cos) + self._r(a * sin))
        return np.concatenate([ya, yb, x[..., R:]], axis=-1)

    # ---------------------------------------------------------------- §7 gated attention
    def _attention(self, lw: LayerWeights, u, p0: int, cache):
        cfg = self.cfg
        n = u.shape[0]
        nH, nKV, D = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        P = self._lin(u, lw.p["q_proj"]).reshape(n, nH, 2 * D)      # §7.1 interleaved per head
        q = P[:, :, :D]
        gate = P[:, :, D:].reshape(n, nH * D)
        k = self._lin(u, lw.p["k_proj"]).reshape(n, nKV, D)
        v = self._lin(u, lw.p["v_proj"]).reshape(n, nKV, D)
        q = self._rmsnorm(q, lw.p["q_norm"])                         # §7.2
        k = self._rmsnorm(k, lw.p["k_norm"])
        pos = p0 + np.arange(n)
        q = self._rope(q, pos)                                       # §7.3
        k = self._rope(k, pos)
        Kc = np.concatenate([cache[0], k.transpose(1, 0, 2)], axis=1)  # [nKV, p0+n, D]
        Vc = np.concatenate([cache[1], v.transpose(1, 0, 2)], axis=1)
        kv_of = np.arange(nH) // cfg.queries_per_kv                  # §7.4 GQA: j = ⌊h / g⌋
        Kh, Vh = Kc[kv_of], Vc[kv_of]                                # [nH, T, D]
        qh = q.transpose(1, 0, 2)                                    # [nH, n, D]
        scores = self._r(self._r(qh @ Kh.transpose(0, 2, 1)) * (D ** -0.5))  # [nH, n, T]
        allowed = np.arange(Kc.shape[1])[None, :] <= pos[:, None]    # causal: τ ≤ p(t)
        scores = np.where(allowed[None], scores, -np.inf)
        probs = self._r(_softmax(scores, axis=-1))
        o = self._r(probs @ Vh).transpose(1, 0, 2).reshape(n, nH * D)  # head-major
        o = self._r(o * self._r(_sigmoid(gate)))                     # §7.5 sigmoid gate
        y = self._lin(o, lw.p["o_proj"])
        return y, (Kc, Vc)

    # ---------------------------------------------------------------- §8 Gated DeltaNet
    def _deltanet(self, lw: LayerWeights, u, hist, S):
        cfg = self.cfg
        n = u.shape[0]
        Hk, Hv = cfg.linear_num_key_heads, cfg.linear_num_value_heads
        Dk, Dv, K = cfg.linear_key_head_dim, cfg.linear_value_head_dim, cfg.linear_conv_kernel_dim
        kd = cfg.key_dim
        sd = self.state_dtype
        p = lw.p
        m = self._lin(u, p["in_proj_qkv"])                       # §8.1  [n, C]
        z = self._lin(u, p["in_proj_z"]).reshape(n, Hv, Dv)
        b = self._lin(u, p["in_proj_b"])                         # [n, Hv] → β
        a = self._lin(u, p["in_proj_a"])                         # [n, Hv] → g
        # §8.2 / §11: causal depthwise conv over history ‖ new rows, then SiLU.
        ext = np.concatenate([hist, m], axis=0)                  # [K−1+n, C]
        w = p["conv"]                                            # [C, K]; w[:, K−1] = current
        conv = np.zeros_like(m)
        for j in range(K):
            conv = conv + w[:, j][None, :] * ext[j:j + n]
        c = self._r(_silu(self._r(conv)))
        new_hist = ext[n:].copy()                                # last K−1 pre-conv rows
        # §8.3 split (q, k, v contiguous, head-major)
        q = c[:, :kd].reshape(n, Hk, Dk).astype(sd)
        k = c[:, kd:2 * kd].reshape(n, Hk, Dk).astype(sd)
        v = c[:, 2 * kd:].reshape(n, Hv, Dv).astype(sd)
        # §8.4 l2norm with eps inside the sqrt, q scaled by Dk^(−1/2)
        q = q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True) + L2NORM_EPS) * (Dk ** -0.5)
        k = k / np.sqrt(np.sum(k * k, axis=-1, keepdims=True) + L2NORM_EPS)
        # §8.5 gates
        beta = self._r(_sigmoid(b)).astype(sd)
        g = (-np.exp(p["A_log"].astype(sd)) *
             _softplus(a.astype(sd) + p["dt_bias"].astype(sd)))
        # §8.6 value head n reads key head ⌊n / r⌋ (repeat_interleave)
        r = cfg.value_per_key
        q = np.repeat(q, r, axis=1)
        k = np.repeat(k, r, axis=1)
        # §8.7 recurrent delta rule from the stored state
        o, S_new = recurrent_gated_delta_rule(q, k, v, g, beta, S)
        o = self._r(o.astype(self.dtype))
        # §8.9 gated RMSNorm: plain weight, SiLU(z) gate, eps = rms_norm_eps
        hn = self._r(o / np.sqrt(np.mean(o * o, axis=-1, keepdims=True) + cfg.rms_norm_eps))
        hn = self._r(p["norm"] * hn)
        hn = self._r(hn * _silu(z))
        y = self._lin(hn.reshape(n, Hv * Dv), p["out_proj"])     # §8.10
        return y, new_hist, S_new

    # ---------------------------------------------------------------- §9 sparse MoE
    def _moe(self, lw: LayerWeights, u):
        cfg = self.cfg
        E, k, I = cfg.num_experts, cfg.num_experts_per_tok, cfg.moe_intermediate_size
        n = u.shape[0]
        logits = self._lin(u, lw.router)                         # [n, E]
        pi = _softmax(logits.astype(self.state_dtype), axis=-1)  # over all experts (f32 island)
        order = np.argsort(-pi, axis=-1, kind="stable")          # ties → lower expert id
        top = order[:, :k]
        if k < E:
            srt = np.take_along_axis(pi, order[:, k - 1:k + 1], axis=-1)
            self.min_router_gap = min(self.min_router_gap, float(np.min(srt[:, 0] - srt[:, 1])))
        tp = np.take_along_axis(pi, top, axis=-1)
        wts = self._r((tp / np.sum(tp, axis=-1, keepdims=True)).astype(self.dtype))  # renormalise
        out = np.zeros_like(u)
        for e in range(E):                                       # ascending id (HF order)
            rows, slot = np.nonzero(top == e)
            if rows.size == 0:
                continue
            x = u[rows]
            gu = self._lin(x, lw.gate_up[e])                      # [m, 2I]
            h = self._r(self._r(_silu(gu[:, :I])) * gu[:, I:])   # SwiGLU
            y = self._lin(h, lw.down[e])
            y = self._r(y * wts[rows, slot][:, None])
            out[rows] = self._r(out[rows] + y)
        hs = self._r(self._r(_silu(self._lin(u, lw.shared_gate))) * self._lin(u, lw.shared_up))
        shared = self._lin(hs, lw.shared_down)
        sg = self._r(_sigmoid(self._lin(u, lw.shared_expert_gate)))   # [n, 1] scalar gate
        return self._r(out + self._r(sg * shared))

    # ---------------------------------------------------------------- §6 / §10 one row
    def new_row_state(self) -> RowState:
        """Empty state (count 0, no cached tokens, zero history and recurrent state)."""
        cfg = self.cfg
        nKV, D = cfg.num_key_value_heads, cfg.head_dim
        kv, conv, rec = {}, {}, {}
        for i in range(cfg.num_hidden_layers):
            if cfg.is_full_attention(i):
                kv[i] = (np.zeros((nKV, 0, D), self.dtype), np.zeros((nKV, 0, D), self.dtype))
            else:
                conv[i] = np.zeros((cfg.linear_conv_kernel_dim - 1, cfg.conv_dim), self.dtype)
                rec[i] = np.zeros((cfg.linear_num_value_heads, cfg.linear_key_head_dim,
                                   cfg.linear_value_head_dim), self.state_dtype)
        return RowState(0, kv, conv, rec)

    def run_row(self, tokens: np.ndarray, state: RowState, last_only: bool = False):
        """Process n ≥ 1 new tokens of one sequence at positions state.count … (§6, §11).

        Updates ``state`` in place and returns logits [n, V] (or [V] if ``last_only``)."""
        cfg = self.cfg
        tokens = np.asarray(tokens, dtype=np.int64)
        n = tokens.shape[0]
        p0 = state.count
        x = self.embed[tokens]                                  # §4 row lookup
        for i, lw in enumerate(self.layers):
            hin = self._rmsnorm(x, lw.input_norm)
            if lw.kind == "full_attention":
                y, state.kv[i] = self._attention(lw, hin, p0, state.kv[i])
            else:
                y, state.conv[i], state.rec[i] = self._deltanet(lw, hin, state.conv[i],
                                                                state.rec[i])
            h = self._r(x + y)
            x = self._r(h + self._moe(lw, self._rmsnorm(h, lw.post_norm)))
            if self.trace is not None:
                self.trace.append((i, "mixer", y.copy()))
                self.trace.append((i, "hidden", x.copy()))
        state.count = p0 + n
        xs = x[-1:] if last_only else x
        logits = self._lin(self._rmsnorm(xs, self.final_norm), self.lm_head)   # §10
        return logits[0] if last_only else logits

    # ---------------------------------------------------------------- stateless entries
    def _check_tokens(self, tokens, what="tokens") -> np.ndarray:
        t = np.asarray(tokens)
        if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 1:
            raise ValueError(f"{what} must be a non-empty 2-D array [rows, S], got shape "
                             f"{t.shape}")
        if not np.issubdtype(t.dtype, np.integer):
            raise ValueError(f"{what} must be integer token ids, got {t.dtype}")
        bad = (t < 0) | (t >= self.cfg.vocab_size)
        if np.any(bad):
            raise ValueError(f"{what}: token id {int(t[bad][0])} out of range [0, "
                             f"{self.cfg.vocab_size})")
        if t.shape[1] > self.cfg.max_position_embeddings:
            raise ValueError(f"{what}: sequence length {t.shape[1]} exceeds "
                             f"max_position_embeddings {self.cfg.max_position_embeddings}")
        return t.astype(np.int64)

    def forward(self, tokens) -> np.ndarray:
        """Entry `forward(tokens[B,S]) -> logits[B,S,V]`: stateless, each row from position 0."""
        t = self._check_tokens(tokens)
        return np.stack([self.run_row(row, self.new_row_state()) for row in t])

    def next_token(self, tokens) -> np.ndarray:
        """Entry `next_token(tokens[B,S]) -> logits[B,V]` of the last position (stateless)."""
        t = self._check_tokens(tokens)
        return np.stack([self.run_row(row, self.new_row_state(), last_only=True) for row in t])

    def session(self, batch: int = 1, **kw) -> "Session":
        return Session(self, batch, **kw)


# ==============================================================================================
# Stateful entries (DESIGN.md "The model's entries", §11, §12)
# ==============================================================================================

class Session:
    """`batch` state slots and the stateful entries.

    Position rules: the session keeps each row's token count.  A row addressed at position 0
    starts fresh (its state is reset); at any other position p the row must hold exactly p
    tokens, otherwise ValueError (the recurrent state cannot be rewound).  With
    ``decode_restarts_at_zero=False`` only `prefill` (and `prefill_slots`) may restart a row;
    `decode`/`decode_rows` at position 0 then require an empty row.
    Every call validates all rows before changing any state, so a failing call changes nothing.
    """

    def __init__(self, model: Model, batch: int = 1, decode_restarts_at_zero: bool = True):
        if not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ValueError(f"batch must be a positive integer, got {batch!r}")
        self.model = model
        self.batch = int(batch)
        self.decode_restarts_at_zero = decode_restarts_at_zero
        self.rows: List[RowState] = [model.new_row_state() for _ in range(self.batch)]

    # ------------------------------------------------------------------ helpers
    @property
    def counts(self) -> np.ndarray:
        return np.array([r.count for r in self.rows], dtype=np.int64)

    def snapshot(self) -> List[RowState]:
        """Deep copy of every slot's state."""
        return [r.copy() for r in self.rows]

    def reset(self, slot: Optional[int] = None) -> None:
        for s in (range(self.batch) if slot is None else [slot]):
            self.rows[s] = self.model.new_row_state()

    def _batch_tokens(self, tokens, entry: str, width: Optional[int] = None) -> np.ndarray:
        t = self.model._check_tokens(tokens, f"{entry}: tokens")
        if t.shape[0] != self.batch:
            raise ValueError(f"{entry}: tokens has {t.shape[0]} rows but the session has "
                             f"{self.batch} slots (Batch)")
        if width is not None and t.shape[1] != width:
            raise ValueError(f"{entry}: tokens must be [Batch, {width}], got {list(t.shape)}")
        return t

    @staticmethod
    def _as_int(v, what: str) -> int:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{what} must be an integer, got {v!r}")
        return int(v)

    def _start(self, r: int, pos: int, n: int, entry: str, may_restart: bool) -> RowState:
        """Apply the position rule to row r; return the working state (a copy) for n tokens."""
        row = self.rows[r]
        maxp = self.model.cfg.max_position_embeddings
        if pos < 0:
            raise ValueError(f"{entry}: row {r}: position {pos} is negative")
        if pos + n > maxp:
            raise ValueError(f"{entry}: row {r}: positions {pos}..{pos + n - 1} exceed "
                             f"max_position_embeddings {maxp}")
        if pos == 0 and (may_restart or row.count == 0):
            return self.model.new_row_state()
        if pos != row.count:
            hint = (" or restart it at position 0" if may_restart
                    else " (only prefill at 0 or prefill_slots restarts a row)")
            raise ValueError(
                f"{entry}: row {r} holds {row.count} tokens, so it can only continue at position "
                f"{row.count}{hint}; got position {pos}. The recurrent state cannot be rewound.")
        return row.copy()

    # ------------------------------------------------------------------ entries
    def prefill(self, tokens, pos) -> np.ndarray:
        """`prefill(tokens[Batch,S], pos) -> logits[Batch,V]`: every row continues at `pos`
        (or restarts at 0); returns the logits of each row's last token."""
        t = self._batch_tokens(tokens, "prefill")
        pos = self._as_int(pos, "prefill: pos")
        work = [self._start(r, pos, t.shape[1], "prefill", True) for r in range(self.batch)]
        out = np.stack([self.model.run_row(t[r], work[r], last_only=True)
                        for r in range(self.batch)])
        self.rows = work
        return out

    def decode(self, tokens, pos) -> np.ndarray:
        """`decode(token[Batch,1], pos) -> logits[Batch,V]`: one step, all rows at `pos`."""
        t = self._batch_tokens(tokens, "decode", width=1)
        pos = self._as_int(pos, "decode: pos")
        work = [self._start(r, pos, 1, "decode", self.decode_restarts_at_zero)
                for r in range(self.batch)]
        out = np.stack([self.model.run_row(t[r], work[r], last_only=True)
                        for r in range(self.batch)])
        self.rows = work
        return out

    def decode_rows(self, tokens, positions) -> np.ndarray:
        """`decode_rows(tokens[Batch,1], positions[Batch]) -> logits[Batch,V]`: one step, each
        row at its own position (its own RoPE angle and causal extent, §12)."""
        t = self._batch_tokens(tokens, "decode_rows", width=1)
        ps = np.asarray(positions)
        if ps.shape != (self.batch,) or not np.issubdtype(ps.dtype, np.integer):
            raise ValueError(f"decode_rows: positions must be an integer array of shape "
                             f"[{self.batch}], got {ps.dtype} {list(ps.shape)}")
        work = [self._start(r, int(ps[r]), 1, "decode_rows", self.decode_restarts_at_zero)
                for r in range(self.batch)]
        out = np.stack([self.model.run_row(t[r], work[r], last_only=True)
                        for r in range(self.batch)])
        self.rows = work
        return out

    def prefill_slots(self, tokens, slots, lengths) -> np.ndarray:
        """`prefill_slots(tokens[M,S], slots[M], lengths[M]) -> logits[M,V]` (§12).

        Row m starts a new sequence in slot ``slots[m]`` from its first ``lengths[m]`` tokens;
        the padding after them is skipped entirely (its values are not even validated), so it
        never touches any state.  Returns the logits at position ``lengths[m] − 1``.  Slots not
        named are untouched."""
        t = np.asarray(tokens)
        if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 1:
            raise ValueError(f"prefill_slots: tokens must be a non-empty [M, S] array, got "
                             f"shape {t.shape}")
        if not np.issubdtype(t.dtype, np.integer):
            raise ValueError(f"prefill_slots: tokens must be integer ids, got {t.dtype}")
        M, S = t.shape
        sl, ln = np.asarray(slots), np.asarray(lengths)
        for name, a in (("slots", sl), ("lengths", ln)):
            if a.shape != (M,) or not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"prefill_slots: {name} must be an integer array of shape [{M}],"
                                 f" got {a.dtype} {list(a.shape)}")
        if np.any((sl < 0) | (sl >= self.batch)):
            raise ValueError(f"prefill_slots: slot {int(sl[(sl < 0) | (sl >= self.batch)][0])} "
                             f"out of range [0, {self.batch})")
        if len(set(sl.tolist())) != M:
            raise ValueError(f"prefill_slots: slots {sl.tolist()} name a slot more than once")
        if np.any((ln < 1) | (ln > S)):
            raise ValueError(f"prefill_slots: lengths {ln.tolist()} must each be in [1, S={S}]")
        for m in range(M):
            self.model._check_tokens(t[m:m + 1, :int(ln[m])], f"prefill_slots: row {m}")
        work = {}
        out = []
        for m in range(M):
            stt = self._start(int(sl[m]), 0, int(ln[m]), "prefill_slots", True)
            out.append(self.model.run_row(t[m, :int(ln[m])].astype(np.int64), stt,
                                          last_only=True))
            work[int(sl[m])] = stt
        for s, stt in work.items():
            self.rows[s] = stt
        return np.stack(out)


# ==============================================================================================
# Convenience
# ==============================================================================================

def load_model(directory: str, dtype=np.float64, bf16: bool = False) -> Model:
    """Load `config.json` and the safetensors checkpoint (single or sharded) of a directory."""
    cfg = load_config(directory)
    return Model(cfg, st.load_checkpoint_tensors(directory), dtype=dtype, bf16=bf16)


def _main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="Run the numpy reference on a checkpoint.")
    ap.add_argument("checkpoint", help="directory with config.json and *.safetensors")
    ap.add_argument("--tokens", required=True,
                    help="token ids: rows separated by ';', ids by ',' (e.g. '1,2,3;4,5,6')")
    ap.add_argument("--dtype", choices=["f64", "f32", "bf16"], default="f64")
    ap.add_argument("--out", help="write logits [B,S,V] to this .npy file")
    args = ap.parse_args(argv)
    rows = [[int(x) for x in r.split(",")] for r in args.tokens.split(";")]
    model = load_model(args.checkpoint, dtype=np.float32 if args.dtype == "f32" else np.float64,
                       bf16=args.dtype == "bf16")
    logits = model.forward(np.array(rows, dtype=np.int64))
    if args.out:
        np.save(args.out, logits)
    print("logits shape", logits.shape)
    print("greedy next tokens", np.argmax(logits[:, -1], axis=-1).tolist())
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
