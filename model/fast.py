"""The `fast` precision: load-time transforms that make a loaded model faster on its device.

The `exact` path is never touched: every transform here is applied to a loaded float32 model only
when the fast path is chosen. What each device gets, and why:

- every device: q/k/v and gate/up projections fused into one matmul each (fewer, larger GEMMs);
- CUDA: float16 weights and activations (as upstream's fp16 autocast, without per-op casts), with
  rotary tables and softmax statistics in float32 as in the exact path;
- CPU with native bf16 (AVX512-BF16 or AMX): bfloat16 weights;
- other CPUs (AVX2): fbgemm's dynamic linears with packed weights. The decoder's SwiGLU linears
  (82% of its weights) get int8 weights per output channel, activations quantised per call; every
  other large linear (decoder attention, output head, vision tower) gets float16 weights computed in
  float32, which halves the bytes a decode step reads at almost no cost in accuracy. Decode is
  memory-bound, so this is what makes it fast: 23.6 → 14.4 ms per token for fp16 attention + head
  on top of int8 FFN, and the fp16 tower reads a crop 15% faster. More int8 fails the fidelity bar
  (cosine ≥ 0.999 per position against exact fp32, real-size random weights, `hayai bench
  --fidelity`): FFN only 0.99912 (with the fp16 rest 0.99911); + tower MLPs 0.99883; + whole tower
  0.99829; every decoder linear 0.99868; everything 0.99775 with top-1 agreement 98.5%. bf16 without
  hardware support is slower than fp32, and int8 weight-only kernels (`_weight_int8pack_mm`,
  `_int_mm`) are not vectorised for AVX2 (5-30× slower than fp32). Under torch.compile the packed
  linears are opaque ops (`PackedLinear`), so the rest of the decode step still fuses.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn
from torch.ao.nn.quantized import dynamic as nnqd

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
    flags = cpu_flags() if flags is None else flags
    if flags:
        return "avx512_bf16" in flags or "amx_bf16" in flags
    capability = torch.backends.cpu.get_cpu_capability().upper()  # no /proc/cpuinfo: macOS, Windows
    return "BF16" in capability or "AMX" in capability


def int8_kernels_available() -> bool:
    return (
        "x86" in torch.backends.quantized.supported_engines
        or "fbgemm" in torch.backends.quantized.supported_engines
    )


def cpu_fast_kind() -> str | None:
    """Which CPU fast path this machine gets: "bf16", "int8", or None (exact is used)."""
    if cpu_has_native_bf16():
        return "bf16"
    if int8_kernels_available():
        return "int8"
    return None


def fuse_projections(model) -> None:
    """q/k/v → one `wqkv`, gate/up → one `w_gate_up` (the originals are dropped to save memory)."""
    for module in model.modules():
        if isinstance(module, Attention) and module.wqkv is None:
            module.wqkv = _linear(
                torch.cat([module.w_q.weight, module.w_k.weight, module.w_v.weight])
            )
            del module.w_q, module.w_k, module.w_v
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


def is_packed_key(key: str) -> bool:
    """The checkpoint weights the AVX2 path packs: left unloaded by `weights.load_model`, read from the
    file by `pack_linears_`."""
    if key.startswith("decoder.layers."):
        return key.endswith(".weight") and key.rsplit(".", 2)[-2] in FFN_WEIGHTS + ATTENTION_WEIGHTS
    if key.startswith("vision_encoder.encoder.layers."):
        return any(key.endswith(f".{name}.weight") for name in TOWER_LINEARS)
    return key == HEAD_WEIGHT


def pack_linears_(model, source=None) -> None:
    """The AVX2 path (see above): int8 SwiGLU, float16-weight attention, head and tower linears.

    source: a `weights.Checkpoint` to read the float weights from, one tensor at a time, into private
    memory that is freed as soon as it is packed. Through the memory map instead, their pages would
    stay resident for the life of the process (peak RSS is a target of its own). Packing is most of
    the load time, and fbgemm packs without holding the GIL, so the linears are packed in parallel.
    """
    jobs = []  # (parent module, attribute, [(weight key, attribute it was under)], packed dtype, bias)

    def job(parent, name, parts, dtype, bias=None):
        jobs.append((parent, name, parts, dtype, bias))

    for i, layer in enumerate(model.decoder.layers):
        ffn, attn, prefix = layer.ffn, layer.attn, f"decoder.layers.{i}"
        ffn_key = [(f"{prefix}.ffn.{n}.weight", n) for n in FFN_WEIGHTS]
        attn_key = [(f"{prefix}.attn.{n}.weight", n) for n in ATTENTION_WEIGHTS]
        job(ffn, "w_gate_up", ffn_key[:2], torch.qint8)
        job(ffn, "w_down", ffn_key[2:], torch.qint8)
        job(attn, "wqkv", attn_key[:3], torch.float16)
        job(attn, "w_o", attn_key[3:], torch.float16)
    job(model.decoder, "output_head", [(HEAD_WEIGHT, "output_head")], torch.float16)
    for i, layer in enumerate(model.vision_encoder.encoder.layers):
        for path in TOWER_LINEARS:
            parent_name, name = path.split(".")
            parent = getattr(layer, parent_name)
            key = f"vision_encoder.encoder.layers.{i}.{path}.weight"
            job(parent, name, [(key, name)], torch.float16, getattr(parent, name).bias)

    def pack(parent, name, parts, dtype, bias, module):
        tensors = [
            source.read(key) if source is not None else getattr(parent, old).weight
            for key, old in parts
        ]
        return _packed(
            torch.cat(tensors) if len(tensors) > 1 else tensors[0], dtype, bias, into=module
        )

    with warnings.catch_warnings(), ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
        # torch.ao warns that quantized tensors move to torchao; fbgemm's kernels still work as they are
        warnings.filterwarnings("ignore", category=UserWarning, message=".*quantiz")
        # Made here in a fixed order, not in the pool: their numbers, and so torch.compile's cache key
        # for the graph that calls them, are then the same at every start (see PackedLinear).
        modules = [
            PackedLinear(1, 1, bias_=bias is not None, dtype=dtype) for _, _, _, dtype, bias in jobs
        ]
        packed = list(pool.map(lambda j, m: pack(*j, m), jobs, modules))
    for (parent, name, parts, _, _), module in zip(jobs, packed):
        for _, old in parts:  # q/k/v → wqkv and gate/up → w_gate_up replace the separate linears
            if old != name:
                delattr(parent, old)
        setattr(parent, name, module)


def _packed(weight: torch.Tensor, dtype: torch.dtype, bias=None, into=None) -> nn.Module:
    """An fbgemm dynamic linear with `weight` packed as int8 (per output channel, symmetric: what
    `quantize_dynamic` with `per_channel_dynamic_qconfig` makes) or as float16.
    into: the `PackedLinear` to fill (made with a 1×1 weight and this dtype); a new one by default."""
    from torch.ao.quantization import per_channel_dynamic_qconfig

    # A 1×1 placeholder: its constructor packs a zero weight of the given size, which costs as much as
    # packing the real one.
    module = into if into is not None else PackedLinear(1, 1, bias_=bias is not None, dtype=dtype)
    module.out_features, module.in_features = weight.shape
    if dtype == torch.qint8:
        observer = per_channel_dynamic_qconfig.weight()
        observer(weight)
        scales, zero_points = observer.calculate_qparams()
        weight = torch.quantize_per_channel(
            weight, scales.double(), zero_points.long(), 0, torch.qint8
        )
    module.set_weight_bias(weight, None if bias is None else bias.detach())
    return module


# torch.compile cannot trace fbgemm's packed weights (script objects). Inside a compiled graph each
# packed linear is therefore one opaque op that names its module by number; everything around it
# (norms, rotary, residuals, the cache writes) still fuses. Eager calls go straight to fbgemm.
# A module takes the lowest number no live one holds, so a model built again after the last one was
# dropped gets the same numbers, and its compiled graph is found in torch.compile's on-disk cache.
_PACKED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # number → live packed linear
_NUMBERING = threading.Lock()


@torch.library.custom_op("hayai::packed_linear", mutates_args=())
def _packed_linear(x: torch.Tensor, number: int) -> torch.Tensor:
    return _PACKED[number].forward_eager(x)


@_packed_linear.register_fake
def _(x, number):
    return x.new_empty((*x.shape[:-1], _PACKED[number].out_features))


class PackedLinear(nnqd.Linear):
    """fbgemm's dynamic linear, callable from a torch.compile'd graph (see above)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with _NUMBERING:
            self.number = next(n for n in itertools.count() if n not in _PACKED)
            _PACKED[self.number] = self

    forward_eager = nnqd.Linear.forward

    def forward(self, x):
        if torch.compiler.is_compiling():
            return torch.ops.hayai.packed_linear(x, self.number)
        return self.forward_eager(x)


def _linear(weight: torch.Tensor) -> nn.Linear:
    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=False, device="meta")
    lin.weight = nn.Parameter(weight, requires_grad=False)
    return lin


def make_fast(model, device: torch.device, source=None) -> tuple[nn.Module, str]:
    """Apply the fast transforms for `device` in place; returns (model, short description).

    source: the Checkpoint the model was loaded from with `is_packed_key` tensors left out (AVX2 path)."""
    from model.weights import materialize_buffers

    kind = "fp16" if device.type in ("cuda", "mps") else cpu_fast_kind()
    if kind == "int8":
        pack_linears_(model, source)  # fuses q/k/v and gate/up itself, from the source's weights
    fuse_projections(model)
    if kind in ("fp16", "bf16"):
        dtype = torch.float16 if kind == "fp16" else torch.bfloat16
        model = model.to(dtype)
        materialize_buffers(model)  # the rotary frequencies stay float32
        return model, str(dtype).replace("torch.", "")
    return model, "int8+fp16" if kind == "int8" else "float32"
