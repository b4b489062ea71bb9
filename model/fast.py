"""The `fast` precision: load-time transforms that make a loaded model faster on its device.

The `exact` path is never touched: every transform here is applied to a loaded float32 model only
when the fast path is chosen. What each device gets, and why:

- every device: q/k/v and gate/up projections fused into one matmul each (fewer, larger GEMMs);
- CUDA: float16 weights and activations (as upstream's fp16 autocast, without per-op casts), with
  rotary tables and softmax statistics in float32 as in the exact path;
- CPU: one recipe per stage, chosen from the CPU flags at run time (`cpu_recipes`): with native
  bf16 (AVX512-BF16 or AMX) the vision tower in bfloat16 (its weights prepacked for oneDNN,
  `packed_linear.Bf16Linear`); the decoder (prefill and decode) on
  fbgemm's packed linears wherever fbgemm runs, as follows;
- fbgemm's dynamic linears with packed weights (the whole model on AVX2, the decoder beside a bf16
  tower). The decoder's SwiGLU linears (82% of its weights) get int8 weights per output channel,
  activations quantised per call; every other large linear (decoder attention, output head, and on
  AVX2 the vision tower) gets float16 weights computed in float32, which halves the bytes a decode
  step reads at almost no cost in accuracy. Decode is memory-bound, so this is what makes it fast:
  23.6 → 14.4 ms per token for fp16 attention + head on top of int8 FFN, and the fp16 tower reads a crop 15% faster. More int8 fails the fidelity bar
  (cosine ≥ 0.999 per position against exact fp32, real-size random weights, `hayai bench
  --fidelity`): FFN only 0.99912 (with the fp16 rest 0.99911); + tower MLPs 0.99883; + whole tower
  0.99829; every decoder linear 0.99868; everything 0.99775 with top-1 agreement 98.5%. bf16 without
  hardware support is slower than fp32, and int8 weight-only kernels (`_weight_int8pack_mm`,
  `_int_mm`) are not vectorised for AVX2 (5-30× slower than fp32). The packed linears themselves,
  batch-invariant and opaque ops under torch.compile (so the rest of the decode step still fuses),
  are model/packed_linear.py.
"""

from __future__ import annotations

import functools
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn

from model import packed_linear
from model.config import N_HEADS, N_KV_HEADS
from model.hayai import Attention, SwiGLU


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return set(next((line for line in f if line.startswith("flags")), "").split())
    except OSError:
        return set()


@functools.lru_cache(maxsize=1)
def cpu_has_native_bf16(flags: frozenset | None = None) -> bool:
    """True where the CPU computes bf16 in hardware (read at run time, never assumed)."""
    flags = frozenset(cpu_flags()) if flags is None else flags
    if flags:
        return "avx512_bf16" in flags or "amx_bf16" in flags
    capability = torch.backends.cpu.get_cpu_capability().upper()  # no /proc/cpuinfo: macOS, Windows
    return "BF16" in capability or "AMX" in capability


def int8_kernels_available() -> bool:
    return (
        "x86" in torch.backends.quantized.supported_engines
        or "fbgemm" in torch.backends.quantized.supported_engines
    )


# The recipes a stage can run (what `hayai bench` reports per stage):
FLOAT32 = "float32"  # the exact path
BFLOAT16 = "bfloat16"  # bf16 weights and activations: CPUs with native bf16
FLOAT16 = "float16"  # fp16 weights and activations: CUDA, MPS
PACKED_FP16 = "fp16-packed"  # fbgemm: fp16 weights, fp32 arithmetic
PACKED_INT8 = "int8+fp16-packed"  # fbgemm: int8 SwiGLU, fp16-weight attention and output head
STAGES = ("vision", "prefill", "decode")


def uniform(recipe: str) -> dict[str, str]:
    return dict.fromkeys(STAGES, recipe)


def cpu_recipes(flags: frozenset | None = None) -> dict[str, str] | None:
    """Stage → recipe of the CPU fast path, from the CPU flags read at run time (None: exact is used).

    The vision tower is compute-bound (a 256-patch crop is a 256-row GEMM per linear): native bf16
    runs it 1.8× faster than fbgemm's fp16 weights. The prefill and the decode steps share the
    decoder's weights, so they share a recipe: fbgemm's packed int8/fp16 linears (decode is memory-
    bound GEMV, where oneDNN's bf16 is hardly faster than fp32 even on bf16 hardware: 15.9 ms/token
    against 7.5 packed; the 257-token prefill is faster packed too, 81 ms against 99). The mix passes
    the fidelity bar: min cosine 0.99909, top-1 100% (docs/performance.md, "Per-stage CPU recipes")."""
    bf16, packed = cpu_has_native_bf16(flags), int8_kernels_available()
    if not (bf16 or packed):
        return None
    decoder = PACKED_INT8 if packed else BFLOAT16
    return {"vision": BFLOAT16 if bf16 else PACKED_FP16, "prefill": decoder, "decode": decoder}


def describe(recipes: dict[str, str]) -> str:
    """One name where every stage runs the same recipe, else each stage's."""
    if len(set(recipes.values())) == 1:
        return recipes["vision"]
    return " · ".join(f"{stage} {recipe}" for stage, recipe in recipes.items())


def fuse_projections(model) -> None:
    """q/k/v → one `wqkv`, gate/up → one `w_gate_up` (the originals are dropped to save memory); the
    q and k norm gains per head (`Attention.qk_gain`), so that q and k are normed and rotated as one."""
    for module in model.modules():
        if isinstance(module, Attention):
            if module.wqkv is None:
                module.wqkv = _linear(
                    torch.cat([module.w_q.weight, module.w_k.weight, module.w_v.weight])
                )
                del module.w_q, module.w_k, module.w_v
            if module.qk_gain is None:
                gains = [module.q_norm.weight.expand(N_HEADS, -1)]
                gains.append(module.k_norm.weight.expand(N_KV_HEADS, -1))
                module.qk_gain = torch.cat(gains)[:, None, :]
        elif isinstance(module, SwiGLU) and module.w_gate_up is None:
            module.w_gate_up = _linear(torch.cat([module.w_gate.weight, module.w_up.weight]))
            del module.w_gate, module.w_up


FFN_WEIGHTS = ("w_gate", "w_up", "w_down")
ATTENTION_WEIGHTS = ("w_q", "w_k", "w_v", "w_o")
TOWER_LINEARS = (
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.out_proj",
    "mlp.fc1",
    "mlp.fc2",
)
HEAD_WEIGHT = "decoder.output_head.weight"


def file_key_filter(recipes: dict[str, str] | None):
    """key → True for the checkpoint weights the fast transforms read from the file themselves, one
    at a time (left unloaded by `weights.load_model`): the linears `recipes` pack (`pack_linears_`),
    and a bf16 tower's linears (`_tower_to_bf16`). None where there are none."""
    tower = (recipes or {}).get("vision") in (PACKED_FP16, BFLOAT16)
    decoder = packs(recipes)[1]
    if not (tower or decoder):
        return None

    def from_file(key: str) -> bool:
        if key.startswith("decoder.layers."):
            return (
                decoder
                and key.endswith(".weight")
                and key.rsplit(".", 2)[-2] in FFN_WEIGHTS + ATTENTION_WEIGHTS
            )
        if key.startswith("vision_encoder.encoder.layers."):
            return tower and any(key.endswith(f".{name}.weight") for name in TOWER_LINEARS)
        return decoder and key == HEAD_WEIGHT

    return from_file


def packs(recipes: dict[str, str] | None) -> tuple[bool, bool]:
    """(the tower's linears are packed, the decoder's are)."""
    recipes = recipes or {}
    return recipes.get("vision") == PACKED_FP16, recipes.get("decode") == PACKED_INT8


def _tower_linears(model):
    """(weight key, parent module, attribute) of each of the tower's large linears."""
    for i, layer in enumerate(model.vision_encoder.encoder.layers):
        for path in TOWER_LINEARS:
            parent_name, name = path.split(".")
            yield (
                f"vision_encoder.encoder.layers.{i}.{path}.weight",
                getattr(layer, parent_name),
                name,
            )


# transformers' activation names → the GELU a `Bf16Linear` fuses into its GEMM
TOWER_GELUS = {"gelu_pytorch_tanh": "tanh", "gelu": "erf"}


def _tower_to_bf16(model, source=None) -> None:
    """The tower in bfloat16, its linears prepacked for oneDNN (`packed_linear.Bf16Linear`, the
    MLP's GELU fused into its first linear). Their weights come from `source` one at a time where
    given: the float32 copies through the memory map would stay resident for the life of the
    process."""
    if source is not None:
        for key, parent, name in _tower_linears(model):
            weight = source.read(key).to(torch.bfloat16)
            getattr(parent, name).weight = nn.Parameter(weight, requires_grad=False)
    model.vision_encoder.to(torch.bfloat16)
    # SigLIP2's MLP: fc1, GELU (tanh approximation), fc2; the GELU goes into fc1's GEMM
    for layer in model.vision_encoder.encoder.layers:
        mlp = layer.mlp
        if mlp.config.hidden_act in TOWER_GELUS:
            mlp.fc1 = packed_linear.Bf16Linear(mlp.fc1, gelu=TOWER_GELUS[mlp.config.hidden_act])
            mlp.activation_fn = nn.Identity()
    for parent in list(model.vision_encoder.modules()):
        for name, child in parent.named_children():
            if type(child) is nn.Linear:
                setattr(parent, name, packed_linear.Bf16Linear(child))


def pack_linears_(model, source=None, tower: bool = True, decoder: bool = True) -> None:
    """fbgemm's packed linears (see above): for the decoder int8 SwiGLU, float16-weight attention and
    head (PACKED_INT8); for the tower float16-weight linears (PACKED_FP16).

    source: a `weights.Checkpoint` to read the float weights from, one tensor at a time, into private
    memory that is freed as soon as it is packed. Through the memory map instead, their pages would
    stay resident for the life of the process (peak RSS is a target of its own). Packing is most of
    the load time, and fbgemm packs without holding the GIL, so the linears are packed in parallel.
    """
    # (parent module, attribute, [(weight key, attribute it was under)], packed dtype, bias)
    jobs: list[tuple[nn.Module, str, list[tuple[str, str]], torch.dtype, torch.Tensor | None]] = []

    def job(parent, name, parts, dtype, bias=None):
        jobs.append((parent, name, parts, dtype, bias))

    for i, layer in enumerate(model.decoder.layers if decoder else ()):
        ffn, attn, prefix = layer.ffn, layer.attn, f"decoder.layers.{i}"
        ffn_key = [(f"{prefix}.ffn.{n}.weight", n) for n in FFN_WEIGHTS]
        attn_key = [(f"{prefix}.attn.{n}.weight", n) for n in ATTENTION_WEIGHTS]
        job(ffn, "w_gate_up", ffn_key[:2], torch.qint8)
        job(ffn, "w_down", ffn_key[2:], torch.qint8)
        job(attn, "wqkv", attn_key[:3], torch.float16)
        job(attn, "w_o", attn_key[3:], torch.float16)
    if decoder:
        job(model.decoder, "output_head", [(HEAD_WEIGHT, "output_head")], torch.float16)
    for key, parent, name in _tower_linears(model) if tower else ():
        job(parent, name, [(key, name)], torch.float16, getattr(parent, name).bias)

    def pack(job, module):
        parent, name, parts, dtype, bias = job
        tensors = [
            source.read(key) if source is not None else getattr(parent, old).weight
            for key, old in parts
        ]
        return packed_linear.pack(
            torch.cat(tensors) if len(tensors) > 1 else tensors[0], dtype, bias, into=module
        )

    with warnings.catch_warnings(), ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
        # torch.ao warns that quantized tensors move to torchao; fbgemm's kernels still work as they are
        warnings.filterwarnings("ignore", category=UserWarning, message=".*quantiz")
        # Made here in a fixed order, not in the pool: their numbers, and so torch.compile's cache key
        # for the graph that calls them, are then the same at every start (see PackedLinear).
        modules = [
            packed_linear.PackedLinear(1, 1, bias_=bias is not None, dtype=dtype)
            for _, _, _, dtype, bias in jobs
        ]
        packed = list(pool.map(pack, jobs, modules))
    for (parent, name, parts, _, _), module in zip(jobs, packed):
        for _, old in parts:  # q/k/v → wqkv and gate/up → w_gate_up replace the separate linears
            if old != name:
                delattr(parent, old)
        setattr(parent, name, module)


def _linear(weight: torch.Tensor) -> nn.Linear:
    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=False, device="meta")
    lin.weight = nn.Parameter(weight, requires_grad=False)
    return lin


def make_fast(model, device: torch.device, source=None, recipes=None) -> tuple[nn.Module, dict]:
    """Apply the fast transforms for `device` in place; returns (model, stage → recipe).

    recipes: for the CPU, what `cpu_recipes()` gives (its default); source: the Checkpoint the model
    was loaded from with the `file_key_filter(recipes)` tensors left out."""
    from model.weights import materialize_buffers

    if device.type in ("cuda", "mps"):
        recipes = uniform(FLOAT16)
    elif recipes is None:
        recipes = cpu_recipes() or uniform(FLOAT32)
    if recipes["prefill"] != recipes["decode"]:
        raise ValueError(f"prefill and decode share the decoder's weights: {recipes}")
    tower, decoder = packs(recipes)
    if tower or decoder:  # fuses q/k/v and gate/up itself, from the source's weights
        pack_linears_(model, source, tower=tower, decoder=decoder)
    fuse_projections(model)
    if recipes["vision"] == BFLOAT16:
        _tower_to_bf16(model, source)
    elif recipes["vision"] == FLOAT16:
        model.vision_encoder.to(torch.float16)
    dtypes = {BFLOAT16: torch.bfloat16, FLOAT16: torch.float16}
    if recipes["decode"] in dtypes:
        model.decoder.to(dtypes[recipes["decode"]])
    materialize_buffers(model)  # the rotary frequencies stay float32
    return model, dict(recipes)
