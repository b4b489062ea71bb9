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


def _fused(*linears: nn.Linear) -> nn.Linear:
    weight = torch.cat([lin.weight for lin in linears], dim=0)
    fused = nn.Linear(weight.shape[1], weight.shape[0], bias=False, device=weight.device, dtype=weight.dtype)
    fused.weight = nn.Parameter(weight, requires_grad=False)
    return fused


def fuse_projections(model) -> None:
    """q/k/v → one `wqkv`, gate/up → one `w_gate_up` (the originals are dropped to save memory)."""
    for module in model.modules():
        if isinstance(module, Attention) and module.wqkv is None:
            module.wqkv = _fused(module.w_q, module.w_k, module.w_v)
            del module.w_q, module.w_k, module.w_v
        elif isinstance(module, SwiGLU) and module.w_gate_up is None:
            module.w_gate_up = _fused(module.w_gate, module.w_up)
            del module.w_gate, module.w_up


def quantize_int8_(model) -> None:
    """Int8 dynamic quantisation (per-channel weights) of the decoder's SwiGLU linears (see above)."""
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():  # torch.ao's eager API warns that it moves to torchao; it still works
        warnings.simplefilter("ignore")
        for layer in model.decoder.layers:
            quantize_dynamic(layer.ffn, {nn.Linear: per_channel_dynamic_qconfig}, inplace=True)


def make_fast(model, device: torch.device) -> tuple[nn.Module, str]:
    """Apply the fast transforms for `device` in place; returns (model, short description)."""
    from model.weights import materialize_buffers

    fuse_projections(model)
    kind = "fp16" if device.type in ("cuda", "mps") else cpu_fast_kind()
    if kind in ("fp16", "bf16"):
        dtype = torch.float16 if kind == "fp16" else torch.bfloat16
        model = model.to(dtype)
        materialize_buffers(model)  # the rotary frequencies stay float32
        return model, str(dtype).replace("torch.", "")
    if kind == "int8":
        quantize_int8_(model)
        return model, "int8"
    return model, "float32"
