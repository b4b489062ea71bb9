"""Linears with weights packed once at load time, as the `fast` precision's CPU recipes use them
(which linears get which, and why: model/fast.py): fbgemm's dynamic linears (int8 and float16,
below) and oneDNN's bfloat16 linear (`Bf16Linear`, at the end).

A weight is packed once at load time, as int8 per output channel or as float16 (`pack`), into a
`PackedLinear`. Two things are added to fbgemm's own module:

- batch invariance (docs/model.md, "Batch invariance"): a row's output does not depend on the other
  rows of the call (`_int8_rows`; `fp16_row_tile`, `fp16_rows` and `_padded_rows` for float16);
- torch.compile: inside a compiled graph each packed linear is one opaque op (`hayai::packed_linear`),
  so everything around it still fuses.
"""

from __future__ import annotations

import functools
import itertools
import threading
import warnings
import weakref

import torch
from torch import nn
from torch.ao.nn.quantized import dynamic as nnqd


def pack(weight: torch.Tensor, dtype: torch.dtype, bias=None, into=None) -> PackedLinear:
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


# Batch invariance (docs/model.md, "Batch invariance"): a row's output must not depend on the other
# rows of the call. fbgemm's dynamic int8 linear quantises its input with ONE scale for the whole
# tensor, so a crop's activations were rounded by a scale its batch-mates set. Each row is instead
# scaled to max |x| = 1 and quantised with fixed parameters (7 bits, as fbgemm's reduce_range: u8·s8
# pairs cannot saturate), and the integer product is exact whatever the blocking: the same per-token
# activation scales as before, now independent of the batch. fbgemm's fp16-weight kernel splits the
# rows of a call into tiles of a few rows (a table per row count) and accumulates tiles of 1-2 rows
# in a different order, so a row's result depends on M; a call whose row count is not one where
# every row comes out as in full tiles (`fp16_rows`, found by experiment on this CPU) is padded with
# zero rows to one that is.
_INT8_SCALE, _INT8_ZERO = 1 / 63, 64  # [-1, 1] → [1, 127]
_TINY = torch.finfo(torch.float32).tiny


def _int8_rows(x: torch.Tensor, packed, bias=None) -> torch.Tensor:
    """x (M, K) → x·Wᵀ + bias, each row quantised on its own scale (the kernel adds the bias to the
    scaled-down product, so it is taken out before scaling back). In place after the product: each
    elementwise pass over a decode step's few rows costs more in dispatch than in arithmetic."""
    scale = x.abs().amax(-1, keepdim=True).clamp_min_(_TINY)
    y = torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32(
        x / scale, _INT8_SCALE, _INT8_ZERO, packed
    )
    return y.mul_(scale) if bias is None else y.sub_(bias).mul_(scale).add_(bias)


def _padded_rows(forward, x: torch.Tensor, rows: int) -> torch.Tensor:
    """forward(x) with x's rows (flattened) padded with zero rows to `rows`, the padding dropped."""
    flat = x.reshape(-1, x.shape[-1])
    extra = rows - flat.shape[0]
    if not extra:
        return forward(x)
    y = forward(torch.nn.functional.pad(flat, (0, 0, 0, extra)))
    return y[: flat.shape[0]].reshape(*x.shape[:-1], y.shape[-1])


def _fp16_probe():
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(64, 96, generator=generator)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning, message=".*quantiz")
        linear = nnqd.Linear(96, 64, bias_=False, dtype=torch.float16)
        linear.set_weight_bias(weight, None)
    return linear, generator


@functools.lru_cache(maxsize=1)
def fp16_row_tile() -> int:
    """The smallest row count T such that fbgemm's fp16-weight linear gives every row the same result in
    any call of a multiple of T rows as in a call of T rows beside zeros (1 where no T up to 16 does:
    then every row is computed alone). Measured once per process on a small random linear, ~0.1 s;
    3 on AVX2 (only tiles of 1-2 rows differ). The 130 rows cross fbgemm's block of 120 rows."""
    linear, generator = _fp16_probe()
    x = torch.randn(130, 96, generator=generator)
    for tile in range(2, 17):
        alone = linear(torch.cat([x[:1], x.new_zeros(tile - 1, x.shape[1])]))[:1]
        if not torch.equal(alone, linear(x[:tile])[:1]):
            continue
        reference = torch.cat([linear(chunk) for chunk in x[: len(x) // tile * tile].split(tile)])
        sizes = range(2 * tile, len(x) + 1, tile)
        if all(torch.equal(linear(x[:m]), reference[:m]) for m in sizes):
            return tile
    return 1


_FP16_ROWS: dict[tuple[int, int], int] = {}  # (rows, threads) → rows to call the kernel with


def fp16_rows(m: int) -> int:
    """The row count to run a call of `m` rows with: `m` itself where the probe linear gives every
    row of an m-row call the same result as a call of a multiple of `fp16_row_tile()` rows does, else
    the next row count that does, at most that multiple. fbgemm splits a call's rows into tiles by a
    table of M and the threads, never by the weight's shape: on AVX2 8 rows are 4 + 4 and need
    nothing, 7 are 6 + 1 and get one zero row. Measured once per row count and thread count (two
    small calls). It saves a copy and most of the padding: a decode step of 8 crops, the tower of
    one crop (256 rows) and the prefill of 8 (2056 rows) run unpadded on AVX2."""
    key = (m, torch.get_num_threads())
    if m and key not in _FP16_ROWS:
        tile = fp16_row_tile()
        top = -(-m // tile) * tile
        linear, generator = _fp16_probe()
        x = torch.randn(top, 96, generator=generator)
        reference = linear(x)  # a multiple of the tile: as in calls of one tile each
        _FP16_ROWS[key] = next(
            (n for n in range(m, top) if torch.equal(linear(x[:n]), reference[:n])), top
        )
    return _FP16_ROWS.get(key, m)


class PackedLinear(nnqd.Linear):
    """fbgemm's dynamic linear, batch-invariant (above), callable from a torch.compile'd graph."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with _NUMBERING:
            self.number = next(n for n in itertools.count() if n not in _PACKED)
            _PACKED[self.number] = self
        self.float_bias = None  # `bias()` unpacks the whole weight: the bias is kept beside it

    def set_weight_bias(self, weight, bias):
        super().set_weight_bias(weight, bias)
        self.float_bias = bias

    def forward_eager(self, x):
        if self._packed_params.dtype == torch.qint8:
            rows = x.reshape(-1, x.shape[-1])
            y = _int8_rows(rows, self._packed_params._packed_params, self.float_bias)
            return y.reshape(*x.shape[:-1], y.shape[-1])
        if fp16_row_tile() == 1:
            return torch.cat([nnqd.Linear.forward(self, row) for row in x.split(1, dim=-2)], -2)
        rows = fp16_rows(x.numel() // x.shape[-1])
        return _padded_rows(functools.partial(nnqd.Linear.forward, self), x, rows)

    def forward(self, x):
        if torch.compiler.is_compiling():
            return torch.ops.hayai.packed_linear(x, self.number)
        return self.forward_eager(x)


class Bf16Linear(nn.Module):
    """A bfloat16 linear whose weight oneDNN reorders once, here, into the blocked layout its AMX and
    AVX512-BF16 kernels read. `F.linear` on a plain bf16 weight reorders it on every call: a 768→3072
    linear over one crop's 256 rows took 0.75 ms that way and 0.45 ms prepacked (Xeon with AMX,
    2026-12-03), the same bits. Where PyTorch has no oneDNN, the plain weight and `F.linear`.

    gelu: "tanh" or "erf" to apply GELU (that form) to the output, fused into the GEMM
    where prepacked: computed on the float32 sums before they are rounded to bf16 (a separate bf16
    GELU over the tower's 3072-wide MLP took longer than the GEMM itself: 0.67 against 0.45 ms)."""

    def __init__(self, linear: nn.Linear, gelu: str | None = None):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.gelu = gelu
        # torch's and oneDNN's name for the GELU's form
        self._approximate = "none" if gelu in (None, "erf") else gelu
        weight = linear.weight.detach().to(torch.bfloat16)
        bias = linear.bias
        self.bias = None if bias is None else bias.detach().to(torch.bfloat16)
        # oneDNN's bf16 kernels need AVX512-BF16, AMX or AVX-NE-CONVERT (the tests force the bf16
        # recipe on any CPU; the app picks it only where the CPU computes bf16 natively)
        self.prepacked = (
            torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
        )
        # an opaque oneDNN tensor where prepacked: its dtype and shape read as the plain weight's
        self.weight = torch.ops.mkldnn._reorder_linear_weight(weight) if self.prepacked else weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.prepacked:
            if self.gelu is None:
                return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", [], "")
            return torch.ops.mkldnn._linear_pointwise(
                x, self.weight, self.bias, "gelu", [], self._approximate
            )
        y = nn.functional.linear(x, self.weight, self.bias)
        if self.gelu is None:
            return y
        return nn.functional.gelu(y, approximate=self._approximate)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"gelu={self.gelu}, prepacked={self.prepacked}"
        )
