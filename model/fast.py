"""The `fast` precision: load-time transforms that make a loaded model faster on its device.

The `exact` path is never touched: every transform here is applied to a loaded float32 model only
when the fast path is chosen. What each device gets, and why:

- every device: q/k/v and gate/up projections fused into one matmul each (fewer, larger GEMMs);
- CUDA: float16 weights and activations (as upstream's fp16 autocast, without per-op casts), with
  rotary tables and softmax statistics in float32 as in the exact path;
- CPU with native bf16 (AVX512-BF16 or AMX): bfloat16 weights;
- other CPUs (AVX2): int8 dynamic quantisation (int8 weights per output channel, activations
  quantised per call) of the decoder's SwiGLU linears only. They hold 82% of the decoder's weights,
  and decode is memory-bound, so a token reads ~2× fewer bytes. Quantising more fails the fidelity
  bar (cosine ≥ 0.999 per position against exact fp32, real-size random weights, `hayai bench
  --fidelity`): FFN only 0.99912; + tower MLPs 0.99883; + whole tower 0.99829; every decoder linear
  0.99868; everything 0.99775 with top-1 agreement 98.5%. bf16 without hardware support is slower
  than fp32, and int8 weight-only kernels (`_weight_int8pack_mm`, `_int_mm`) are not vectorised for
  AVX2 (5-30× slower than fp32), so the tower stays float32 on such CPUs.
"""

from __future__ import annotations

import functools
import warnings

import torch
from torch import nn

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
    return "x86" in torch.backends.quantized.supported_engines or "fbgemm" in torch.backends.quantized.supported_engines


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
            module.wqkv = _linear(torch.cat([module.w_q.weight, module.w_k.weight, module.w_v.weight]))
            del module.w_q, module.w_k, module.w_v
        elif isinstance(module, SwiGLU) and module.w_gate_up is None:
            module.w_gate_up = _linear(torch.cat([module.w_gate.weight, module.w_up.weight]))
            del module.w_gate, module.w_up


FFN_WEIGHTS = ("w_gate", "w_up", "w_down")


def is_int8_key(key: str) -> bool:
    """The checkpoint tensors that the int8 path quantises (left unloaded by `weights.load_model`)."""
    return key.startswith("decoder.layers.") and key.rsplit(".", 2)[-2] in FFN_WEIGHTS


def quantize_int8_(model, source=None) -> None:
    """Int8 dynamic quantisation (per-channel weights) of the decoder's SwiGLU linears (see above).

    source: a `weights.Checkpoint` to read the float weights from, one layer at a time, into private
    memory that is freed as soon as that layer is quantised. Through the memory map instead, their
    pages would stay resident for the life of the process (peak RSS is a target of its own).
    """
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    for i, layer in enumerate(model.decoder.layers):
        ffn = layer.ffn
        if source is not None:
            gate, up, down = (source.read(f"decoder.layers.{i}.ffn.{n}.weight") for n in FFN_WEIGHTS)
        else:
            gate, up, down = ffn.w_gate.weight, ffn.w_up.weight, ffn.w_down.weight
        parts = nn.ModuleDict({"w_gate_up": _linear(torch.cat([gate, up])), "w_down": _linear(down)})
        with warnings.catch_warnings():  # torch.ao's eager API warns that it moves to torchao; it still works
            warnings.simplefilter("ignore")
            quantize_dynamic(parts, {nn.Linear: per_channel_dynamic_qconfig}, inplace=True)
        ffn.w_gate_up, ffn.w_down = parts["w_gate_up"], parts["w_down"]
        del ffn.w_gate, ffn.w_up


def _linear(weight: torch.Tensor) -> nn.Linear:
    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=False, device="meta")
    lin.weight = nn.Parameter(weight, requires_grad=False)
    return lin


def make_fast(model, device: torch.device, source=None) -> tuple[nn.Module, str]:
    """Apply the fast transforms for `device` in place; returns (model, short description).

    source: the Checkpoint the model was loaded from with `is_int8_key` tensors left out (int8 path)."""
    from model.weights import materialize_buffers

    kind = "fp16" if device.type in ("cuda", "mps") else cpu_fast_kind()
    if kind == "int8":
        quantize_int8_(model, source)  # fuses gate/up itself, from the source's weights
    fuse_projections(model)
    if kind in ("fp16", "bf16"):
        dtype = torch.float16 if kind == "fp16" else torch.bfloat16
        model = model.to(dtype)
        materialize_buffers(model)  # the rotary frequencies stay float32
        return model, str(dtype).replace("torch.", "")
    return model, "int8" if kind == "int8" else "float32"
