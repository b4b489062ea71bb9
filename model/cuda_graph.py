"""The one-token decode step replayed as a CUDA graph (the fast path on CUDA).

An eager step is a few hundred small kernel launches; a graph replays them with one launch. The
static KV cache makes that possible: every step has the same shapes, the cache tensors stay where
they are, and the only inputs that change (the token and the cache slot) live in device tensors
that the graph reads. One graph per (batch, vision tokens, cache capacity); capture is done on a
side stream after a warm-up, and any failure falls back to the eager step for that shape.
The graph captures the state's own step function: with `compile=True` that is the torch.compile'd
step (model/generate.py), whose few dozen fused kernels replay faster than the few hundred eager ones.
"""

from __future__ import annotations

import logging

import torch

from model.generate import DecodeState

log = logging.getLogger(__name__)


class _Graph:
    def __init__(self, state: DecodeState):
        b = state.key_valid.shape[0]
        device = state.key_valid.device
        self.caches = [(c.k, c.v) for c in state.model.kv_caches()]
        self.key_valid = state.key_valid.clone()
        self.slots = state.slots  # read by the graph: kept alive with it
        self.token = torch.zeros(b, dtype=torch.long, device=device)
        self.slot = torch.zeros(1, dtype=torch.long, device=device)
        # warm-up and capture write slot 0
        snapshot = [(k.clone(), v.clone()) for k, v in self.caches]
        try:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(2):  # also compiles the step, when it is a compiled one
                    state.step_at(self.token, self.slot, self.key_valid)
            torch.cuda.current_stream().wait_stream(stream)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
                self.logits = state.step_at(self.token, self.slot, self.key_valid)
        finally:  # also when capture fails: the caller then decodes eagerly from this very cache
            for (k, v), (k0, v0) in zip(self.caches, snapshot):
                k.copy_(k0)
                v.copy_(v0)

    def bind(self, state: DecodeState) -> bool:
        """Use this graph for `state` if its caches are the very tensors the graph was captured on."""
        same = all(c.k is k and c.v is v for c, (k, v) in zip(state.model.kv_caches(), self.caches))
        if same:
            self.key_valid.copy_(state.key_valid)
        return same


class DecodeGraphs:
    def __init__(self, model):
        self.model = model
        self.graphs: dict[tuple, _Graph] = {}
        self.failed: set[tuple] = set()

    def step_function(self, state: DecodeState):
        """A replacement for `state.step` that replays a graph, or None to decode eagerly."""
        key = (tuple(state.key_valid.shape), state.n_vision, str(state.key_valid.device))
        if key in self.failed:
            return None
        graph = self.graphs.get(key)
        if graph is None or not graph.bind(state):
            try:
                graph = self.graphs[key] = _Graph(state)
            except (
                Exception
            ) as e:  # capture can fail (driver, memory, an op that syncs): stay eager
                log.warning("CUDA graph capture failed for %s, decoding eagerly: %s", key, e)
                self.failed.add(key)
                return None

        def step(token: torch.Tensor) -> torch.Tensor:
            graph.token.copy_(token)
            graph.slot.fill_(state.n_vision + state.n_text)
            graph.graph.replay()
            state.n_text += 1
            return graph.logits.clone()

        return step
