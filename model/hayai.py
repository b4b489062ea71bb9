"""The Hayai OCR network: SigLIP2 NaFlex tower → projector → prefix decoder (docs/model.md).

Module names follow the released state dict after key normalisation (weights.py): `vision_encoder.*`
(transformers' Siglip2VisionModel without its pooling head) and `decoder.*`.

Shapes: b = batch, P = patch slots, M = vision tokens, L = tokens in this call, C = cache slots,
d = d_model, H = 8 query heads, G = 2 kv heads, D = 64 head dim.
"""

from __future__ import annotations

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from model.config import HEAD_DIM, N_HEADS, N_KV_HEADS, NORM_EPS, ROPE_THETA, HayaiConfig
from model.packed_rows import (
    Segment,
    attend_by_crop,
    pack_prefill,
    tower_rows,
    unpack_rows,
    unpack_text,
)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = NORM_EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


# ---------------------------------------------------------------------------------------------
# Rotary positions (docs/model.md, "Rotary positions"). Every token carries two positions (a, b): head dims 0-31 rotate by a,
# dims 32-63 by b. Vision token: (row, col); text token n: (n, n); padded vision slot: (0, 0),
# which is "no rotation" (cos 1, sin 0) exactly as upstream.
# ---------------------------------------------------------------------------------------------


def rope_frequencies(device=None) -> torch.Tensor:
    # Computed exactly as upstream: other algebraically equal forms round differently in the last bit.
    exponents = torch.arange(0, HEAD_DIM // 2, 2, device=device)[: HEAD_DIM // 4].float() / (
        HEAD_DIM // 2
    )
    return 1.0 / (ROPE_THETA**exponents)  # (16,)


def rope_tables(positions: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """positions (..., 2) int → (..., 32, 2) float32 rotations (cos a, sin a), one per interleaved pair."""
    angles = torch.cat(
        [positions[..., :1].float() * freqs, positions[..., 1:].float() * freqs], dim=-1
    )
    return torch.stack((angles.cos(), angles.sin()), dim=-1)


def apply_rope(x: torch.Tensor, rot: torch.Tensor) -> torch.Tensor:
    """x (b, heads, L, 64); rot (b, L, 32, 2). Pair (2j, 2j+1) is the complex number x₂ⱼ + i·x₂ⱼ₊₁,
    multiplied by its rotation in float32 (upstream's view_as_complex form, not rotate-half)."""
    pairs = x.float().unflatten(-1, (-1, 2))  # (b, heads, L, 32, 2)
    rot = rot[:, None]  # broadcast over heads
    if torch.compiler.is_compiling():
        # Inductor generates no code for complex numbers: the same product written out in reals
        # (equal up to rounding) fuses into one kernel. Eager, the complex form is fewer kernels.
        (re, im), (cos, sin) = pairs.unbind(-1), rot.unbind(-1)
        out = torch.stack((re * cos - im * sin, re * sin + im * cos), dim=-1)
    else:
        out = torch.view_as_real(torch.view_as_complex(pairs) * torch.view_as_complex(rot))
    return out.flatten(-2).type_as(x)


def vision_positions(grids: torch.Tensor, n_slots: int) -> torch.Tensor:
    """grids (b, 2) = (h, w) per image → (b, n_slots, 2) row/col of each vision slot; (0, 0) past h·w."""
    t = torch.arange(n_slots, device=grids.device)[None, :]  # (1, M)
    h, w = grids[:, :1], grids[:, 1:]
    valid = t < h * w
    return torch.stack((torch.where(valid, t // w, 0), torch.where(valid, t % w, 0)), dim=-1)


# ---------------------------------------------------------------------------------------------
# Decoder
# ---------------------------------------------------------------------------------------------


class KVCache(nn.Module):
    """Static per-layer cache written by position: every decode step has the same shapes."""

    k: torch.Tensor  # buffers, registered in __init__
    v: torch.Tensor

    def __init__(self, batch: int, capacity: int, dtype: torch.dtype, device):
        super().__init__()
        shape = (batch, N_KV_HEADS, capacity, HEAD_DIM)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype, device=device), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype, device=device), persistent=False)

    def update(self, input_pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        self.k.index_copy_(2, input_pos, k)
        self.v.index_copy_(2, input_pos, v)
        return self.k, self.v


class Attention(nn.Module):
    qk_gain: torch.Tensor | None  # a buffer, registered in __init__

    def __init__(self, d_model: int):
        super().__init__()
        self.w_q = nn.Linear(d_model, N_HEADS * HEAD_DIM, bias=False)
        self.w_k = nn.Linear(d_model, N_KV_HEADS * HEAD_DIM, bias=False)
        self.w_v = nn.Linear(d_model, N_KV_HEADS * HEAD_DIM, bias=False)
        self.w_o = nn.Linear(N_HEADS * HEAD_DIM, d_model, bias=False)
        self.q_norm = RMSNorm(HEAD_DIM)  # shared by all heads, applied before the rotation
        self.k_norm = RMSNorm(HEAD_DIM)
        self.wqkv: nn.Module | None = None  # q, k, v fused into one matmul by model/fast.py
        # With wqkv, model/fast.py also sets each q and k head's norm gain, (H + G, 1, D): the q and k
        # heads are then normed and rotated together, one op each instead of two (same values).
        self.register_buffer("qk_gain", None, persistent=False)

    def project(self, x):
        if self.wqkv is None:
            return self.w_q(x), self.w_k(x), self.w_v(x)
        return self.wqkv(x).split(
            [N_HEADS * HEAD_DIM, N_KV_HEADS * HEAD_DIM, N_KV_HEADS * HEAD_DIM], dim=-1
        )

    def heads(self, x, rot):
        """x (b, L, d) → q (b, H, L, D), k and v (b, G, L, D): projected, q and k normed and rotated."""
        b, L, _ = x.shape
        if self.qk_gain is None:
            q, k, v = self.project(x)
            q = q.reshape(b, L, N_HEADS, HEAD_DIM).transpose(1, 2)  # (b, H, L, D)
            k = k.reshape(b, L, N_KV_HEADS, HEAD_DIM).transpose(1, 2)  # (b, G, L, D)
            v = v.reshape(b, L, N_KV_HEADS, HEAD_DIM).transpose(1, 2)
            q = apply_rope(self.q_norm(q), rot)
            k = apply_rope(self.k_norm(k), rot)
        else:
            assert self.wqkv is not None  # model/fast.py sets qk_gain only together with wqkv
            heads = self.wqkv(x).reshape(b, L, N_HEADS + 2 * N_KV_HEADS, HEAD_DIM).transpose(1, 2)
            qk = heads[:, : N_HEADS + N_KV_HEADS]  # (b, H + G, L, D)
            qk = F.rms_norm(qk, (HEAD_DIM,), eps=self.q_norm.eps) * self.qk_gain
            qk = apply_rope(qk, rot)
            q, k, v = qk[:, :N_HEADS], qk[:, N_HEADS:], heads[:, N_HEADS + N_KV_HEADS :]
        return q, k, v

    def forward(self, x, rot, mask, input_pos, cache: KVCache, keys: int | None = None):
        """keys: read only the cache's first `keys` slots (an eager decode step on the CPU: the
        slots written so far; `mask` covers just those). Default: the whole cache."""
        b, L, _ = x.shape
        q, k, v = self.heads(x, rot)
        # (b, G, C, D): the whole cache, unwritten slots masked
        k, v = cache.update(input_pos, k, v)
        if keys is not None:
            k, v = k[:, :, :keys], v[:, :, :keys]
        # Query head i reads kv head i // 4 (GQA); the scale is 1/sqrt(64) = 1/8.
        if keys is not None and L == 1:
            # one token: the 4 query heads of a kv head are its 4 queries, one product per kv head
            group = N_HEADS // N_KV_HEADS
            out = F.scaled_dot_product_attention(
                q.view(b, N_KV_HEADS, group, HEAD_DIM), k, v, attn_mask=mask
            ).view(b, N_HEADS, 1, HEAD_DIM)
        else:  # (b, H, L, D)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        return self.w_o(out.transpose(1, 2).reshape(b, L, N_HEADS * HEAD_DIM))

    def forward_packed(self, x, rot, segments: list[Segment], cache: KVCache) -> torch.Tensor:
        """The prefill of crops packed one after another (`HayaiModel.prefill_packed`): x (1, R, d);
        each crop attends to its own rows only, and its keys and values go to its row of the cache."""
        q, k, v = self.heads(x, rot)  # (1, H, R, D), (1, G, R, D)
        out = attend_by_crop(q, k, v, segments, cache.k, cache.v)
        return self.w_o(out.transpose(1, 2).reshape(1, x.shape[1], N_HEADS * HEAD_DIM))


class SwiGLU(nn.Module):
    def __init__(self, d_model: int, d_ffn: int):
        super().__init__()
        self.w_gate = nn.Linear(d_model, d_ffn, bias=False)
        self.w_up = nn.Linear(d_model, d_ffn, bias=False)
        self.w_down = nn.Linear(d_ffn, d_model, bias=False)
        # gate and up fused into one matmul by model/fast.py
        self.w_gate_up: nn.Module | None = None

    def forward(self, x):
        if self.w_gate_up is None:
            gate, up = self.w_gate(x), self.w_up(x)
        else:
            gate, up = self.w_gate_up(x).chunk(2, dim=-1)
        return self.w_down(F.silu(gate) * up)


class DecoderLayer(nn.Module):
    def __init__(self, d_model: int, d_ffn: int):
        super().__init__()
        self.attn_norm = RMSNorm(d_model)
        self.attn = Attention(d_model)
        self.attn_res_scale = nn.Parameter(torch.ones(d_model))
        self.ffn_norm = RMSNorm(d_model)
        self.ffn = SwiGLU(d_model, d_ffn)
        self.ffn_res_scale = nn.Parameter(torch.ones(d_model))

    def forward(self, x, rot, mask, input_pos, cache, keys=None):
        h = x + self.attn_res_scale * self.attn(
            self.attn_norm(x), rot, mask, input_pos, cache, keys
        )
        return h + self.ffn_res_scale * self.ffn(self.ffn_norm(h))

    def forward_packed(self, x, rot, segments, cache):
        h = x + self.attn_res_scale * self.attn.forward_packed(
            self.attn_norm(x), rot, segments, cache
        )
        return h + self.ffn_res_scale * self.ffn(self.ffn_norm(h))


class MLPProjector(nn.Module):
    """v2/v2.1: per slot Linear → GELU(erf) → Linear, applied to all P slots (padding included)."""

    def __init__(self, d_vision: int, d_model: int):
        super().__init__()
        self.proj = nn.Sequential(
            nn.Linear(d_vision, d_model), nn.GELU(), nn.Linear(d_model, d_model)
        )

    def forward(self, features, grids):
        return self.proj(features), grids, None


class DSCProjector(nn.Module):
    """v2.5-nova: 2×2 space-to-depth of each image's patch grid, then LN → MLP → RMSNorm (docs/model.md)."""

    def __init__(self, d_vision: int, d_model: int):
        super().__init__()
        self.norm = nn.LayerNorm(4 * d_vision, eps=1e-5)
        self.mlp = nn.Sequential(
            nn.Linear(4 * d_vision, d_model, bias=False),
            nn.GELU(),
            nn.Linear(d_model, d_model, bias=False),
        )
        self.out_norm = RMSNorm(d_model)

    def forward(self, features, grids):
        b, _, c = features.shape
        rows = []
        for i in range(b):
            h, w = (int(n) for n in grids[i])
            grid = features[i, : h * w].view(1, h, w, c).permute(0, 3, 1, 2)  # (1, c, h, w)
            grid = F.pad(grid, (0, w % 2, 0, h % 2), mode="replicate")  # even sizes
            ho, wo = grid.shape[2] // 2, grid.shape[3] // 2
            # (c, ho, 2, wo, 2) → (ho, wo, c, dy, dx): channel index c·4 + dy·2 + dx
            grid = grid.view(c, ho, 2, wo, 2).permute(1, 3, 0, 2, 4).reshape(ho * wo, 4 * c)
            rows.append(grid)
        new_grids = torch.stack([(grids[:, 0] + 1) // 2, (grids[:, 1] + 1) // 2], dim=-1)
        lengths = new_grids[:, 0] * new_grids[:, 1]
        # zero-filled to the longest image
        tokens = features.new_zeros(b, int(lengths.max()), 4 * c)
        for i, r in enumerate(rows):
            tokens[i, : r.shape[0]] = r
        valid = torch.arange(tokens.shape[1], device=features.device)[None, :] < lengths[:, None]
        return self.out_norm(self.mlp(self.norm(tokens))), new_grids, valid


class Decoder(nn.Module):
    def __init__(self, config: HayaiConfig):
        super().__init__()
        projector = MLPProjector if config.variant == "v2.1" else DSCProjector
        self.projector = projector(config.d_vision, config.d_model)
        self.token_embeddings = nn.Embedding(config.vocab_size, config.d_model)
        self.layers = nn.ModuleList(
            DecoderLayer(config.d_model, config.d_ffn) for _ in range(config.n_layers)
        )
        self.final_norm = RMSNorm(config.d_model)
        # its own tensor, never tied to the embeddings (docs/model.md)
        self.output_head = nn.Linear(config.d_model, config.vocab_size, bias=False)


class HayaiModel(nn.Module):
    """The whole network. One forward path (`forward_tokens`) serves prefill, decode and teacher forcing."""

    freqs: torch.Tensor  # a buffer, registered in __init__

    def __init__(self, config: HayaiConfig):
        super().__init__()
        from transformers import Siglip2VisionModel

        self.config = config
        self.vision_encoder = Siglip2VisionModel(config.vision_config())
        self.decoder = Decoder(config)
        self.caches: nn.ModuleList | None = None
        self.register_buffer("freqs", rope_frequencies(), persistent=False)
        # Packed rows (set by `load_recognizer` on the CPU): the tower and the prefill run over each
        # crop's own rows, packed one after another, instead of a batch padded to its largest crop;
        # a crop's rows are then computed the same way in any batch (docs/model.md, "Packed rows";
        # the machinery is model/packed_rows.py).
        self.packed = False

    @property
    def dtype(self) -> torch.dtype:
        """Activation dtype (the embeddings are never quantised, so they tell it)."""
        return self.decoder.token_embeddings.weight.dtype

    # --- vision ---------------------------------------------------------------------------

    def encode_images(self, pixel_values, pixel_attention_mask, spatial_shapes, budgets=None):
        """Patches → vision tokens (b, M, d), their positions (b, M, 2) and key validity (b, M) bool.
        budgets (b,): each image's own patch budget where they differ (`preprocess(budgets=...)`)."""
        if self.packed:
            tokens, grids, valid = self.encode_packed(pixel_values, spatial_shapes, budgets)
            return tokens, vision_positions(grids, tokens.shape[1]), valid
        if self.config.variant == "nova":
            # The DSC projector reads only each image's first h·w slots, so the tower can skip the slots
            # that are padding for every image in the batch: exact, and up to N/h·w times less work.
            used = int(spatial_shapes.prod(-1).max())
            pixel_values, pixel_attention_mask = (
                pixel_values[:, :used],
                pixel_attention_mask[:, :used],
            )
        features = self.vision_encoder(
            pixel_values=pixel_values.to(
                self.vision_encoder.embeddings.patch_embedding.weight.dtype
            ),
            pixel_attention_mask=pixel_attention_mask,
            spatial_shapes=spatial_shapes,
        ).last_hidden_state  # (b, P, d_vision)
        features = features.to(self.dtype)
        tokens, grids, valid = self.decoder.projector(features, spatial_shapes)
        if valid is None:
            # v2.1: the padded SigLIP2 outputs stay visible, as in training (masking them changes results).
            valid = torch.ones(tokens.shape[:2], dtype=torch.bool, device=tokens.device)
            if budgets is not None:
                # ... up to the image's own budget: the batch's slots past it are not the image's
                slots = torch.arange(tokens.shape[1], device=tokens.device)
                valid = slots[None, :] < budgets.to(tokens.device)[:, None]
        # nova: zero-filled rows of shorter images are hidden, so a crop reads the same in any batch.
        return tokens, vision_positions(grids, tokens.shape[1]), valid

    def encode_packed(self, pixel_values, spatial_shapes, budgets=None):
        """`encode_images` with the tower (and v2.1's projector) run over each image's own slots,
        packed (model/packed_rows.py): v2.1 its budget's slots (the decoder sees its padded ones
        too), nova its h·w patches (all its projector reads) → the padded layout's vision tokens
        (b, M, d), their grids (b, 2) and key validity (b, M)."""
        b, slots, _ = pixel_values.shape
        if self.config.variant == "nova":
            rows = spatial_shapes.prod(-1).tolist()
        elif budgets is None:
            rows = [slots] * b
        else:
            rows = [min(slots, int(n)) for n in budgets.tolist()]
        features = tower_rows(self.vision_encoder, pixel_values, spatial_shapes, rows)
        features = features.to(self.dtype)
        if self.config.variant == "nova":
            return self.decoder.projector(unpack_rows(features, rows, max(rows)), spatial_shapes)
        projected = cast("MLPProjector", self.decoder.projector).proj(features)
        tokens = unpack_rows(projected, rows, slots)
        valid = (
            torch.arange(slots, device=tokens.device)[None, :]
            < torch.tensor(rows, device=tokens.device)[:, None]
        )
        return tokens, spatial_shapes, valid

    # --- decoder --------------------------------------------------------------------------

    def setup_caches(self, batch: int, capacity: int, dtype=None) -> None:
        """Static caches for this call; the previous ones are reused when the shape is the same (every
        slot a call reads is either written by it or masked), which keeps CUDA graphs valid."""
        dtype = dtype or self.decoder.token_embeddings.weight.dtype
        device = self.decoder.token_embeddings.weight.device
        if self.caches is not None:
            k = self.caches[0].k
            if (
                k.shape == (batch, N_KV_HEADS, capacity, HEAD_DIM)
                and k.dtype == dtype
                and k.device == device
            ):
                return
        self.caches = nn.ModuleList(
            KVCache(batch, capacity, dtype, device) for _ in self.decoder.layers
        )

    def kv_caches(self) -> list[KVCache]:
        """The per-layer caches of the last `setup_caches` (a decode state exists only after it)."""
        assert self.caches is not None, "setup_caches() comes first"
        return cast("list[KVCache]", list(self.caches))  # nn.ModuleList types its items as Module

    def attention_mask(self, input_pos, n_vision: int, key_valid: torch.Tensor) -> torch.Tensor:
        """Block-causal boolean mask (b, 1, L, C), True = attend (docs/model.md, "Attention mask").

        Vision rows see every vision column and no text; text rows see every vision column and the
        text up to their own slot; slots past the query (unwritten cache) are hidden; so are invalid
        vision keys (nova's batch padding). key_valid: (b, C).
        """
        capacity = key_valid.shape[1]
        q = input_pos[:, None]  # (L, 1)
        k = torch.arange(capacity, device=input_pos.device)[None, :]  # (1, C)
        allowed = (k < n_vision) | ((q >= n_vision) & (k <= q))  # (L, C)
        return (allowed[None] & key_valid[:, None, :])[:, None]  # (b, 1, L, C)

    def forward_tokens(
        self, x, positions, input_pos, mask, caches=None, keys: int | None = None
    ) -> torch.Tensor:
        """x (b, L, d) embeddings at cache slots input_pos (L,) → final-normed hidden states (b, L, d).
        caches: other caches than the model's own (model/continuous.py's, slots per row); keys: the
        attention reads only the caches' first `keys` slots (see `Attention.forward`)."""
        rot = rope_tables(positions, self.freqs)
        caches = caches or self.caches
        assert caches is not None, "setup_caches() comes first"
        for layer, cache in zip(self.decoder.layers, caches):
            x = layer(x, rot, mask, input_pos, cache, keys)
        return self.decoder.final_norm(x)

    def prefill_packed(self, tokens, positions, valid, text, text_positions) -> torch.Tensor:
        """The prefill of `forward_tokens` with each crop's rows packed (`packed`): vision tokens
        (b, M, d) with their positions (b, M, 2) and validity (b, M) — the valid slots of a row come
        first —, text embeddings (b, n, d) at positions (b, n, 2) → the text's hidden states (b, n, d).
        Each crop's keys and values are written to its row of the caches as `forward_tokens` would
        (vision at slots 0.., text from slot M); slots past its vision stay unwritten (hidden)."""
        x, places, segments = pack_prefill(tokens, positions, valid, text, text_positions)
        rot = rope_tables(places, self.freqs)
        for layer, cache in zip(cast("list[DecoderLayer]", self.decoder.layers), self.kv_caches()):
            x = layer.forward_packed(x, rot, segments, cache)
        return unpack_text(self.decoder.final_norm(x)[0], segments)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder.output_head(hidden).float()

    def embed(self, token_ids: torch.Tensor) -> torch.Tensor:
        return self.decoder.token_embeddings(token_ids)
