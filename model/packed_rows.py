"""Packed rows (CPU; docs/model.md, "Packed rows"): the crops of a batch one after another, each
with its own rows only, instead of a batch padded to its largest crop.

Every row-wise op then runs once over the packed rows and the attention runs crop by crop over the
crop's own rows, so the work is the sum of the crops' rows and a crop's rows are computed the same
way in any batch. The network (model/hayai.py) calls in here where `HayaiModel.packed` is set: the
vision tower (`tower_rows`, its projector's output laid out by `unpack_rows`), and the decoder's
prefill (`pack_prefill`, its layers' `attend_by_crop`, `unpack_text`). The results have the padded
computation's layout, so the decode steps and every caller are unchanged. This module knows tensors
and transformers' tower, not the network's classes: model/hayai.py imports it, never the reverse.

Shapes as in model/hayai.py; R = packed rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F

# MKL's float32 GEMM computes a row with other kernels when a call has few rows (1-3, 5-7 and 9-11
# at 2 threads differ from larger calls in the last bits): a packed call has at least this many rows,
# so that a crop's rows come out the same whatever else is packed beside it.
PACKED_MIN_ROWS = 16


def pack_rows(parts: list[torch.Tensor]) -> torch.Tensor:
    """(n_i, ...) tensors → one (max(Σ n_i, PACKED_MIN_ROWS), ...) tensor, zero rows at the end."""
    rows = torch.cat(parts)
    extra = PACKED_MIN_ROWS - rows.shape[0]
    if extra > 0:
        rows = torch.cat([rows, rows.new_zeros(extra, *rows.shape[1:])])
    return rows


# ---------------------------------------------------------------------------------------------
# The vision tower and the projector
# ---------------------------------------------------------------------------------------------


def tower_rows(tower, pixel_values, spatial_shapes, rows: list[int]) -> torch.Tensor:
    """The tower (`tower_packed`) over `rows[i]` slots of image i → (max(Σ rows, PACKED_MIN_ROWS),
    d_vision) packed; each image's slots attend to its h·w real patches."""
    patches = spatial_shapes.prod(-1).tolist()
    if tower.embeddings.patch_embedding.weight.dtype != torch.bfloat16:
        return tower_packed(tower, pixel_values, spatial_shapes, rows, patches)
    # where the CPU has AMX, oneDNN's bf16 GEMM gives some rows other bits by the call's row count
    # (768→768: a few rows of a call of 47-511 rows differ from the same rows in a call of 4096):
    # the tower runs crop by crop, so a crop's calls have its own rows, alone or not.
    return pack_rows(
        [
            tower_packed(
                tower,
                pixel_values[i : i + 1],
                spatial_shapes[i : i + 1],
                rows[i : i + 1],
                patches[i : i + 1],
            )[: rows[i]]
            for i in range(len(rows))
        ]
    )


def unpack_rows(x: torch.Tensor, rows: list[int], width: int) -> torch.Tensor:
    """Packed rows (R, d), `rows[i]` of image i → (b, width, d): each image's rows first, zeros after."""
    out = x.new_zeros(len(rows), width, x.shape[-1])
    start = 0
    for i, n in enumerate(rows):
        out[i, :n] = x[start : start + n]
        start += n
    return out


def tower_packed(tower, pixel_values, spatial_shapes, rows: list[int], patches: list[int]):
    """SigLIP2 (transformers' `Siglip2VisionModel`, the same modules and order of operations) over
    `rows[i]` slots of image i, packed → (max(Σ rows, PACKED_MIN_ROWS), d_vision). Each image's
    slots attend to its own `patches[i]` real patches, as the padded tower's key mask makes them."""
    embeddings = tower.embeddings
    dtype = embeddings.patch_embedding.weight.dtype
    x = pack_rows([pixel_values[i, :n] for i, n in enumerate(rows)]).to(dtype)
    grid = embeddings.position_embedding.weight.reshape(
        embeddings.position_embedding_size, embeddings.position_embedding_size, -1
    )
    positions = [
        embeddings.resize_positional_embeddings(
            grid, spatial_shapes[i : i + 1], max(n, PACKED_MIN_ROWS)
        )[0, :n]
        for i, n in enumerate(rows)
    ]
    h = embeddings.patch_embedding(x) + pack_rows(positions)
    starts = [sum(rows[:i]) for i in range(len(rows))]
    # transformers' Siglip2EncoderLayer (its modules are typed as Module | Tensor)
    for layer in cast("list[Any]", tower.encoder.layers):
        attn = layer.self_attn
        residual, h = h, layer.layer_norm1(h)
        q, k, v = (
            proj(h).view(-1, attn.num_heads, attn.head_dim).transpose(0, 1)
            for proj in (attn.q_proj, attn.k_proj, attn.v_proj)
        )  # (heads, R, head_dim)
        out = q.new_zeros(q.shape)
        for start, n, real in zip(starts, rows, patches):
            keys = slice(start, start + real)
            out[:, start : start + n] = F.scaled_dot_product_attention(
                q[None, :, start : start + n],
                k[None, :, keys],
                v[None, :, keys],
                scale=attn.scale,
            )[0]
        h = residual + attn.out_proj(out.transpose(0, 1).reshape(h.shape))
        residual, h = h, layer.layer_norm2(h)
        h = residual + layer.mlp(h)
    return tower.post_layernorm(h)


# ---------------------------------------------------------------------------------------------
# The decoder's prefill
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """One crop's rows in a packed prefill: `n_vision` vision tokens, then its text, from `start`."""

    start: int
    n_vision: int
    length: int  # vision + text rows
    text_slot: int  # the cache slot of its first text token (the batch's vision slots M)
    mask: torch.Tensor  # (length, length) bool, True = attend: the block-causal mask of one crop


def block_causal(n_vision: int, length: int, device=None) -> torch.Tensor:
    """One crop's `HayaiModel.attention_mask` over its own rows: vision rows see the vision, text rows
    the vision and the text up to themselves."""
    q = torch.arange(length, device=device)[:, None]
    k = torch.arange(length, device=device)[None, :]
    return (k < n_vision) | ((q >= n_vision) & (k <= q))


def pack_prefill(tokens, positions, valid, text, text_positions):
    """Vision tokens (b, M, d) with their positions (b, M, 2) and validity (b, M) — the valid slots
    of a row come first —, text embeddings (b, n, d) at positions (b, n, 2) → each crop's valid
    vision rows and then its text, packed: the rows (1, R, d), their positions (1, R, 2) and each
    crop's `Segment`."""
    m = valid.shape[1]
    n = text.shape[1]
    lengths = valid.sum(-1).tolist()
    if not all(bool(valid[i, :k].all()) for i, k in enumerate(lengths)):
        raise ValueError("packed prefill: a row's valid vision slots must come first")
    parts, places, segments, masks = [], [], [], {}
    start = 0
    for i, k in enumerate(lengths):
        parts += [tokens[i, :k].to(text.dtype), text[i]]
        places += [positions[i, :k], text_positions[i]]
        if k not in masks:
            masks[k] = block_causal(k, k + n, device=valid.device)
        segments.append(Segment(start, k, k + n, m, masks[k]))
        start += k + n
    return pack_rows(parts)[None], pack_rows(places)[None], segments


def attend_by_crop(
    q, k, v, segments: list[Segment], cache_k: torch.Tensor, cache_v: torch.Tensor
) -> torch.Tensor:
    """q (1, H, R, D), k and v (1, G, R, D) of packed rows → the attention's output (1, H, R, D):
    each crop attends to its own rows only, and its keys and values go to its row of the cache
    (b, G, C, D) where the padded prefill writes them (vision at slots 0.., the text from
    `text_slot`)."""
    out = q.new_zeros(q.shape)  # rows past the last crop (padding) stay zero
    for row, seg in enumerate(segments):
        rows = slice(seg.start, seg.start + seg.length)
        out[:, :, rows] = F.scaled_dot_product_attention(
            q[:, :, rows], k[:, :, rows], v[:, :, rows], attn_mask=seg.mask, enable_gqa=True
        )
        vision, text = seg.start + seg.n_vision, seg.start + seg.length
        for buffer, source in ((cache_k, k), (cache_v, v)):
            buffer[row, :, : seg.n_vision] = source[0, :, seg.start : vision]
            buffer[row, :, seg.text_slot : seg.text_slot + text - vision] = source[
                0, :, vision:text
            ]
    return out


def unpack_text(x: torch.Tensor, segments: list[Segment]) -> torch.Tensor:
    """Packed hidden states (R, d) → each crop's text rows (b, n, d)."""
    return torch.stack([x[s.start + s.n_vision : s.start + s.length] for s in segments])
