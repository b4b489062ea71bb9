"""Decoding against a static KV cache (docs/model.md, "Attention mask" and "Decoding").

`DecodeState` runs the prefill (vision tokens + text prefix written into the cache at slots 0..M+n-1)
and then one token per `step()`, always with the same shapes: the cache is sized once per call,
written by position, and its unwritten slots are hidden by the mask. That keeps the decode step
free of copies and allocations, and capturable as a CUDA graph (see `model/cuda_graph.py`).
"""

from __future__ import annotations

import logging

import torch

from model.hayai import HayaiModel

log = logging.getLogger(__name__)


def round_up(n: int, multiple: int = 8) -> int:
    return -(-n // multiple) * multiple


class DecodeState:
    def __init__(
        self, model: HayaiModel, vision, text_ids: torch.Tensor, extra_slots: int, step=None
    ):
        """vision = (tokens (b, M, d), positions (b, M, 2), valid (b, M)); text_ids (b, n), BOS first.
        step: `decode_step` or its `Compiled` twin."""
        self.step_function = step or decode_step
        tokens, positions, valid = vision
        b, m = valid.shape
        n = text_ids.shape[1]
        self.model, self.n_vision = model, m
        capacity = round_up(m + n + extra_slots)
        dtype = model.decoder.token_embeddings.weight.dtype
        model.setup_caches(b, capacity, dtype)
        self.key_valid = torch.cat([valid, valid.new_ones(b, capacity - m)], dim=1)  # (b, C)
        self.slots = torch.arange(capacity, device=valid.device)
        text_positions = torch.arange(n, device=valid.device)[None, :, None].expand(b, n, 2)
        if model.packed:  # each crop's own rows, packed (CPU): the same cache, without the padding
            self.text_hidden = model.prefill_packed(
                tokens, positions, valid, model.embed(text_ids), text_positions
            )
        else:
            x = torch.cat([tokens.to(dtype), model.embed(text_ids)], dim=1)  # (b, M + n, d)
            input_pos = torch.arange(m + n, device=valid.device)
            mask = model.attention_mask(input_pos, m, self.key_valid)
            hidden = model.forward_tokens(
                x, torch.cat([positions, text_positions], dim=1), input_pos, mask
            )
            self.text_hidden = hidden[:, m:]  # (b, n, d)
        self.n_text = n

    def step(self, token: torch.Tensor) -> torch.Tensor:
        """Feed one token per row at the next text index → logits (b, V) of that position."""
        at = self.n_vision + self.n_text
        slot = torch.tensor([at], device=token.device)
        if self.step_function is decode_step and token.device.type == "cpu":
            # eager on the CPU: attend to the slots written so far, not the whole cache. Reading the
            # cache is memory-bound (12 KB per slot and row), and a read's cache has room for
            # max_new_tokens it rarely uses. (Shapes stay fixed for graphs and torch.compile.)
            logits = decode_step(
                self.model, self.slots, self.n_vision, token, slot, self.key_valid, keys=at + 1
            )
        else:
            logits = self.step_at(token, slot, self.key_valid)
        self.n_text += 1
        return logits

    def step_at(
        self, token: torch.Tensor, slot: torch.Tensor, key_valid: torch.Tensor
    ) -> torch.Tensor:
        """token (b,) written at cache slot `slot` (1,) → logits (b, V); see `decode_step`."""
        return self.step_function(self.model, self.slots, self.n_vision, token, slot, key_valid)

    def reorder(self, rows: torch.Tensor) -> None:
        """Beam search: every cache row takes the contents of its parent row."""
        for cache in self.model.kv_caches():  # may change the number of rows (b → b·beams)
            cache.k, cache.v = cache.k.index_select(0, rows), cache.v.index_select(0, rows)
        self.key_valid = self.key_valid.index_select(0, rows)


def decode_step(
    model: HayaiModel,
    slots: torch.Tensor,
    n_vision: int,
    token: torch.Tensor,
    slot: torch.Tensor,
    key_valid: torch.Tensor,
    keys: int | None = None,
) -> torch.Tensor:
    """The decode step as a pure function of device tensors: capturable as a CUDA graph
    (model/cuda_graph.py), and what `Compiled` compiles. Its text position is slot - n_vision.
    keys: attend to the cache's first `keys` slots only (slot + 1: those written; eager only)."""
    b = token.shape[0]
    positions = (slot - n_vision).view(1, 1, 1).expand(b, 1, 2)
    if keys is not None:
        slots, key_valid = slots[:keys], key_valid[:, :keys]
    # A text query sees every vision slot and the text up to itself: slots ≤ its own (the block mask).
    mask = ((slots <= slot) & key_valid)[:, None, None, :]  # (b, 1, 1, C)
    hidden = model.forward_tokens(model.embed(token[:, None]), positions, slot, mask, keys=keys)
    return model.logits(hidden[:, 0])


def rows_step(
    model: HayaiModel,
    caches,
    slots: torch.Tensor,
    n_vision: torch.Tensor,
    token: torch.Tensor,
    slot: torch.Tensor,
    key_valid: torch.Tensor,
) -> torch.Tensor:
    """`decode_step` for rows at different places (continuous batching, model/continuous.py): row i
    has n_vision[i] vision slots and writes token[i] at slot[i] of `caches` (RowCache) → logits (b, V).
    Row by row the same computation as `decode_step`."""
    b = token.shape[0]
    positions = (slot - n_vision).view(b, 1, 1).expand(b, 1, 2)
    mask = ((slots[None, :] <= slot[:, None]) & key_valid)[:, None, None, :]  # (b, 1, 1, C)
    hidden = model.forward_tokens(model.embed(token[:, None]), positions, slot, mask, caches)
    return model.logits(hidden[:, 0])


class Compiled:
    """`fn` (the decode step) through torch.compile: static shapes (one compile per shape), no graph breaks.
    The prefill is not compiled: on an H200 that saved 0.2 ms of 6.4 for one crop and cost 28 s of warm-up.

    The compile happens on the first call, i.e. in the recognizer's warm-up. Where it cannot work (no C
    compiler, no Triton for a GPU), `fn` runs as it is, with a warning, and decoding goes on; `active`
    then turns False. The AVX2 path's fbgemm linears enter the graph as opaque ops (model/fast.py).
    """

    def __init__(self, fn):
        self.fn = fn
        self._compiled = torch.compile(fn, fullgraph=True, dynamic=False)
        self.active = True

    def __call__(self, *args):
        if self.active:
            try:
                return self._compiled(*args)
            except Exception as e:  # compile errors surface here, before anything ran
                log.warning(
                    "torch.compile of %s failed, running it uncompiled: %s",
                    self.fn.__name__,
                    str(e).split("\n")[0],
                )
                self.active = False
        return self.fn(*args)


def apply_repetition_penalty(
    logits: torch.Tensor, seen: torch.Tensor, penalty: float
) -> torch.Tensor:
    """CTRL-style: for ids already in the row's history, negative logits ×p, others ÷p."""
    if penalty == 1.0:
        return logits
    return torch.where(seen, torch.where(logits < 0, logits * penalty, logits / penalty), logits)


def _processed(logits, seen, penalty, suppress_ids):
    logits = apply_repetition_penalty(logits, seen, penalty)
    if suppress_ids:
        logits = logits.index_fill(
            -1, torch.tensor(suppress_ids, device=logits.device), float("-inf")
        )
    return logits


def _suppress_bias(vocab: int, suppress_ids, device) -> torch.Tensor | None:
    """-inf on suppressed ids (None: none), built once rather than per step."""
    if not suppress_ids:
        return None
    return torch.zeros(vocab, device=device).index_fill(
        0, torch.tensor(suppress_ids, device=device), float("-inf")
    )


def greedy(
    state: DecodeState,
    first_logits,
    max_new_tokens: int,
    bos: int,
    stop_ids: tuple[int, int],
    repetition_penalty: float = 1.0,
    suppress_ids=(),
    step_function=None,
    lag_stop: bool | None = None,
    limits: torch.Tensor | None = None,
) -> torch.Tensor:
    """Upstream greedy loop → (b, steps) ids. stop_ids = (eos, pad); finished rows are fed pad.

    limits (b,): each row's own token limit (at most max_new_tokens): a row is finished after that
    many tokens, with what it would read alone with max_new_tokens = its limit.

    step_function (token → logits) replaces `state.step`, e.g. with a CUDA-graph replay of it.
    lag_stop: test "all rows finished" one step late, so that the host never waits for the GPU with
    nothing queued (default: on CUDA). The result is the same; one more step may be computed.
    """
    eos, pad = stop_ids
    step_function = step_function or state.step
    b, vocab = first_logits.shape
    device = first_logits.device
    rows = torch.arange(b, device=device)
    seen = None  # the history set, kept only when the penalty needs it
    if repetition_penalty != 1.0:
        seen = torch.zeros(b, vocab, dtype=torch.bool, device=device)
        seen[:, bos] = True
    bias = _suppress_bias(vocab, suppress_ids, device)
    finished = torch.zeros(b, dtype=torch.bool, device=device)
    if limits is None:
        limits = torch.full((b,), max_new_tokens, device=device)
    out, logits = [], first_logits
    if lag_stop is None:
        lag_stop = device.type == "cuda"
    lagged: tuple[()] | tuple[torch.cuda.Event | None, torch.Tensor] | None
    lagged = () if lag_stop else None  # then: (event or None, flag) of the previous step
    token = None  # set by the first step, fed to every later one
    for s in range(max_new_tokens):
        if s > 0:
            logits = step_function(token)
        if seen is not None:
            logits = apply_repetition_penalty(logits, seen, repetition_penalty)
        if bias is not None:
            logits = logits + bias
        token = torch.where(finished, pad, logits.argmax(-1))
        out.append(token)
        if seen is not None:
            seen[rows, token] = True
        finished |= (token == eos) | (token == pad) | (limits <= s + 1)
        if lagged is None:
            if bool(finished.all()):
                break
            continue
        # On CUDA, reading this step's flag would wait for the GPU, which then idles while the next step
        # is launched; the previous step's flag is read instead, with this step already queued behind it.
        if lagged:
            event, all_finished = lagged
            if event is not None:
                event.synchronize()
            if bool(all_finished):
                out.pop()  # one step past the end: every row had finished, so these are all pad
                break
        event = torch.cuda.Event() if device.type == "cuda" else None
        lagged = (event, finished.all().to("cpu", non_blocking=True))
        if event is not None:
            event.record()
    return torch.stack(out, dim=1)


def beam_search(
    state: DecodeState,
    first_logits,
    max_new_tokens: int,
    num_beams: int,
    bos: int,
    stop_ids: tuple[int, int],
    repetition_penalty: float = 1.0,
    length_penalty: float = 1.0,
    early_stopping: bool = True,
    suppress_ids=(),
) -> list[list[int]]:
    """Upstream beam search (docs/model.md, "Decoding") with one difference: each beam's history is copied from its parent
    as it was at the start of the step. Upstream copies in place row by row, so a beam whose parent
    row was already overwritten in the same step inherits the wrong history (and repetition penalty).
    The state's cache must hold b rows; it is expanded to b·B rows here."""
    eos, pad = stop_ids
    B = num_beams
    b, vocab = first_logits.shape
    device = first_logits.device
    seen0 = torch.zeros(b, vocab, dtype=torch.bool, device=device)
    seen0[:, bos] = True
    logp = torch.log_softmax(_processed(first_logits, seen0, repetition_penalty, suppress_ids), -1)
    scores, tokens = logp.topk(B, dim=-1)  # (b, B)
    histories = [[[int(tokens[i, j])] for j in range(B)] for i in range(b)]
    finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(b)]
    for i in range(b):
        for j in range(B):
            if int(tokens[i, j]) == eos:
                finished[i].append((float(scores[i, j]), [eos]))  # raw log-prob / 1**length_penalty
                scores[i, j] = -1e9
    state.reorder(torch.arange(b, device=device).repeat_interleave(B))
    for s in range(1, max_new_tokens):
        if early_stopping and all(len(f) >= B for f in finished):
            break
        logits = state.step(tokens.reshape(-1))  # (b·B, V)
        seen = torch.zeros(b * B, vocab, dtype=torch.bool, device=device)
        seen[:, bos] = True
        for r in range(b * B):
            seen[r, histories[r // B][r % B]] = True
        logp = torch.log_softmax(_processed(logits, seen, repetition_penalty, suppress_ids), -1)
        cand = (scores.reshape(-1, 1) + logp).view(b, B * vocab)
        top_scores, top_idx = cand.topk(2 * B, dim=-1)
        new_scores = torch.full((b, B), -1e9, device=device)
        new_tokens = torch.full((b, B), pad, dtype=torch.long, device=device)
        parents = torch.zeros(b, B, dtype=torch.long, device=device)
        new_histories = []
        for i in range(b):
            filled, rows = 0, []
            for score, idx in zip(top_scores[i].tolist(), top_idx[i].tolist()):
                beam, tok = divmod(idx, vocab)
                if tok == eos:
                    finished[i].append(
                        (score / (s + 1) ** length_penalty, histories[i][beam] + [eos])
                    )
                    continue
                new_scores[i, filled], new_tokens[i, filled], parents[i, filled] = score, tok, beam
                rows.append(histories[i][beam] + [tok])  # a copy of the parent's history
                filled += 1
                if filled == B:
                    break
            rows += [histories[i][0] + [pad] for _ in range(B - filled)]
            new_histories.append(rows)
        histories, scores, tokens = new_histories, new_scores, new_tokens
        state.reorder((parents + torch.arange(b, device=device)[:, None] * B).reshape(-1))
    results = []
    for i in range(b):
        if finished[i]:
            best = max(finished[i], key=lambda f: f[0])[1]
        else:
            best = histories[i][int(scores[i].argmax())]
        results.append([t for t in best if t not in stop_ids])
    return results
