"""Continuous batching: crops join a running greedy decode at the next step and leave it the step
they finish (docs/server.md, "Batching").

Every row keeps its own place in one running KV cache (`RowCache`): its vision tokens and text from
slot 0, its own text index, its own key validity. A crop that joins is prefilled on its own (with
the others that join at the same step) exactly as `Recognizer.read` prefills it, and its cache rows
are copied into free rows of the running cache; each `step()` then feeds every row its last token
at its own slot. A finished row's place is taken by the last row (one row copied), so the rows in
use are always the first `n` and the step runs on exactly those. A row's tokens are the same as
`Recognizer.read` gives for the crop alone: the same prefill, and per row the same decode step
(the kernels are batch-invariant and the cache size does not enter the result, docs/model.md,
"Batch invariance").

Greedy decoding only (beam search reorders whole batches: the server reads those batch by batch).
Used from one thread.
"""

from __future__ import annotations

import time

import torch

from model import generate
from model.config import HEAD_DIM, N_KV_HEADS
from model.recognizer import Recognizer, Result


class RowCache:
    """One layer's KV cache for rows at different slots: `update` writes each row's one new key and
    value at that row's own slot, and returns the rows in use."""

    def __init__(self, rows: int, capacity: int, dtype: torch.dtype, device: torch.device):
        shape = (rows, N_KV_HEADS, capacity, HEAD_DIM)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)
        self.row_ids = torch.arange(rows, device=device)

    def update(self, input_pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        """input_pos (n,): each row's slot; k, v (n, G, 1, D) → the n rows' keys and values."""
        n = k.shape[0]
        rows = self.row_ids[:n]
        self.k[rows, :, input_pos] = k[:, :, 0]
        self.v[rows, :, input_pos] = v[:, :, 0]
        return self.k[:n], self.v[:n]


class Row:
    """One crop in the running decode: its tokens so far, and the text not yet handed out."""

    def __init__(self, key, max_new_tokens: int, vision_tokens: int, tokenizer):
        self.key = key  # the caller's handle (the server's request)
        self.max_new_tokens = max_new_tokens
        self.vision_tokens = vision_tokens
        self.token_ids: list[int] = []  # without eos/pad
        self.finish_reason: str | None = None  # "stop" (eos) or "length" once done
        self.ms = 0.0  # this row's share of the model time
        self._tokenizer = tokenizer
        self._sent = ""

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    def _take(self, token: int) -> None:
        if token in self._tokenizer.stop_ids:
            self.finish_reason = "stop"
            return
        self.token_ids.append(token)
        if len(self.token_ids) >= self.max_new_tokens:
            self.finish_reason = "length"

    @property
    def text(self) -> str:
        return self._tokenizer.decode(self.token_ids)

    def new_text(self) -> str:
        """The text decoded since the last call (what a stream sends now); once the row is done, the
        rest of it. Held back until it is certain: a character still missing bytes (U+FFFD) and text
        after the last space (the tokenizer's clean-up may still remove that space, " ." → ".")."""
        text = self.text
        if not self.done:
            text = text.rstrip("\ufffd")
            space = text.rfind(" ")
            if space >= len(self._sent):
                text = text[:space]
        if not text.startswith(self._sent):
            return ""  # never taken back: whatever differs comes with the final text
        new, self._sent = text[len(self._sent) :], text
        return new

    def result(self) -> Result:
        timings = {"total": self.ms, "decode": self.ms}
        return Result(self.text, list(self.token_ids), timings, 1, self.vision_tokens)


class ContinuousDecoder:
    """Greedy decoding of rows that come and go: `join` crops, `step` all rows once, read each row's
    `new_text()`; a row that is done has left (its place is free at once)."""

    def __init__(self, rec: Recognizer):
        self.rec = rec
        self.rows: list[Row] = []
        self.caches: list[RowCache] = []
        self._capacity = 0  # cache slots per row
        # per row: vision slots, text tokens so far (bos included), last token, key validity (C,)
        empty = torch.zeros(0, dtype=torch.long, device=rec.torch_device)
        self._n_vision, self._n_text, self._token = empty, empty, empty
        self._key_valid = torch.zeros(0, 0, dtype=torch.bool, device=rec.torch_device)
        self._slots = empty
        self.steps = 0  # decode steps run
        self.row_steps = 0  # rows summed over those steps

    @property
    def active(self) -> int:
        return len(self.rows)

    @torch.inference_mode()
    def join(self, images, max_new_tokens: list[int], keys: list | None = None) -> list[Row]:
        """Prefill `images` together and add them to the running decode → their rows, each with its
        first token (a row whose first token ends it is done and never joins)."""
        rec, tok = self.rec, self.rec.tokenizer
        started = time.perf_counter()
        images = list(images)
        vision = rec._encode(images)
        n = len(images)
        if tok.bos_id is None:
            raise ValueError("the tokenizer has no <bos> to start a reading with")
        bos = torch.full((n, 1), tok.bos_id, device=rec.torch_device)
        state = generate.DecodeState(rec.model, vision, bos, extra_slots=max(max_new_tokens))
        first = rec.model.logits(state.text_hidden[:, -1]).argmax(-1)
        seen = vision[2].sum(-1).tolist()
        keys = keys if keys is not None else [None] * n
        rows = [Row(key, limit, int(m), tok) for key, limit, m in zip(keys, max_new_tokens, seen)]
        for row, token in zip(rows, first.tolist()):
            row._take(token)
        joining = [i for i, row in enumerate(rows) if not row.done]
        if joining:
            self._append(state, [rows[i] for i in joining], first[joining], joining)
        ms = self._elapsed_ms(started) / n
        for row in rows:
            row.ms += ms
        return rows

    @torch.inference_mode()
    def step(self) -> list[Row]:
        """One token for every row → those rows; the ones done have left."""
        started = time.perf_counter()
        n = len(self.rows)
        slot = self._n_vision[:n] + self._n_text[:n]
        logits = generate.rows_step(
            self.rec.model,
            self.caches,
            self._slots,
            self._n_vision[:n],
            self._token[:n],
            slot,
            self._key_valid[:n],
        )
        token = logits.argmax(-1)
        self._token[:n] = token
        self._n_text[:n] += 1
        stepped = list(self.rows)
        for row, t in zip(stepped, token.tolist()):
            row._take(t)
        ms = self._elapsed_ms(started) / n
        for row in stepped:
            row.ms += ms
        self.steps, self.row_steps = self.steps + 1, self.row_steps + n
        for row in [r for r in stepped if r.done]:
            self.leave(row)
        return stepped

    @torch.inference_mode()  # the caches are inference tensors: copied into outside it, they raise
    def leave(self, row: Row) -> None:
        """Take `row` out of the decode (done, or its client has gone); the last row moves into its place."""
        i, last = self.rows.index(row), len(self.rows) - 1
        if i != last:
            for cache in self.caches:
                cache.k[i], cache.v[i] = cache.k[last], cache.v[last]
            for t in (self._n_vision, self._n_text, self._token, self._key_valid):
                t[i] = t[last]
            self.rows[i] = self.rows[last]
        self.rows.pop()

    def _append(self, state, rows: list[Row], first: torch.Tensor, picked: list[int]) -> None:
        """Copies the prefilled cache rows `picked` of `state` into the next free rows."""
        start, k = len(self.rows), len(rows)
        capacity = state.key_valid.shape[1]
        self._reserve(start + k, capacity)
        index = torch.tensor(picked, device=first.device)
        end = start + k
        for cache, prefilled in zip(self.caches, self.rec.model.caches):
            cache.k[start:end, :, :capacity] = prefilled.k.index_select(0, index)
            cache.v[start:end, :, :capacity] = prefilled.v.index_select(0, index)
        self._key_valid[start:end] = True
        self._key_valid[start:end, :capacity] = state.key_valid.index_select(0, index)
        self._n_vision[start:end] = state.n_vision
        self._n_text[start:end] = state.n_text
        self._token[start:end] = first
        self.rows.extend(rows)

    def _reserve(self, rows: int, capacity: int) -> None:
        """Room for `rows` rows of `capacity` slots (grown by doubling; the rows in use are kept)."""
        have = int(self._token.shape[0])
        if rows <= have and capacity <= self._capacity:
            return
        new_rows = max(rows, 2 * have if rows > have else have)
        new_capacity = max(capacity, self._capacity)
        model, n, device = self.rec.model, len(self.rows), self.rec.torch_device
        caches = [
            RowCache(new_rows, new_capacity, model.dtype, device)
            for _ in range(model.config.n_layers)
        ]
        key_valid = torch.ones(new_rows, new_capacity, dtype=torch.bool, device=device)
        counters = [torch.zeros(new_rows, dtype=torch.long, device=device) for _ in range(3)]
        if self.caches:
            for new, old in zip(caches, self.caches):
                new.k[:n, :, : self._capacity] = old.k[:n]
                new.v[:n, :, : self._capacity] = old.v[:n]
            key_valid[:n, : self._capacity] = self._key_valid[:n]
            for new_t, old_t in zip(counters, (self._n_vision, self._n_text, self._token)):
                new_t[:n] = old_t[:n]
        self.caches, self._key_valid, self._capacity = caches, key_valid, new_capacity
        self._n_vision, self._n_text, self._token = counters
        self._slots = torch.arange(new_capacity, device=device)

    def _elapsed_ms(self, started: float) -> float:
        return (self.rec._sync() - started) * 1e3
