"""`--max-batch auto` / `--batch-size auto`: the batch size with the best throughput on this device,
chosen by measurement (docs/performance.md, "Batch size per device").

On a GPU throughput grows up to large batches; on a 2-core CPU each crop of a batch still costs most
of its own compute and batches above 8 lose throughput. So the size is measured, not assumed: one
read of each candidate size in turn (a few tokens per crop; the speed of a batch is its vision tower
and prefill plus its decode steps, all of which a short read exercises), until throughput has fallen
for `patience` sizes in a row. The choice logic takes any timing function, so it is tested without
timing anything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable

CANDIDATES = (1, 2, 4, 8, 16, 32, 64)
CALIBRATION_TOKENS = 8  # new tokens per crop in a calibration read


def choose_batch_size(
    seconds_for: Callable[[int], float], candidates=CANDIDATES, patience: int = 1
) -> tuple[int, dict[int, float]]:
    """(the size with the most crops per second, {size: crops per second} of the sizes measured).

    seconds_for(n): how long a batch of n crops takes. Sizes are tried in increasing order and the
    search stops after `patience` sizes in a row below the best so far: larger ones are not tried.
    A tie goes to the smaller size (lower latency for the same throughput)."""
    rates: dict[int, float] = {}
    best, worse = None, 0
    for size in sorted(candidates):
        rates[size] = size / max(seconds_for(size), 1e-9)
        if best is None or rates[size] > rates[best]:
            best, worse = size, 0
        else:
            worse += 1
            if worse >= patience:
                break
    if best is None:
        raise ValueError("no candidate batch sizes")
    return best, rates


def batch_seconds(rec, image, max_new_tokens: int = CALIBRATION_TOKENS) -> Callable[[int], float]:
    """The timing function for `choose_batch_size` on a recognizer: one read of n copies of `image`,
    never stopping early (so every size decodes the same number of tokens)."""

    def seconds_for(n: int) -> float:
        started = time.perf_counter()
        rec.read([image] * n, max_new_tokens, suppress_ids=rec.tokenizer.stop_ids)
        return time.perf_counter() - started

    return seconds_for


def calibration_key(rec) -> str:
    """What the best batch size depends on: the device (its name), threads, variant, precision,
    recipes, whether the decode step is compiled (`--compile`: a compiled step costs less per row)
    and the network's shapes (`network_shapes`).

    Not the model's folder: a read costs what its computation costs, which the shapes decide, not
    where the weights lie or what values they hold. So the same network in another folder is not
    measured again, nor is the random checkpoint `hayai bench --random-weights` writes to a new
    scratch folder on every run (it has the released model's shapes, and so its batch size)."""
    import torch

    if rec.torch_device.type == "cuda":
        hardware = torch.cuda.get_device_name(rec.torch_device)
    else:
        hardware = _cpu_name()
    return " | ".join(
        [
            rec.torch_device.type,
            hardware,
            f"{torch.get_num_threads()} threads",
            rec.variant,
            rec.precision,
            rec.compute_dtype,
            "compiled" if rec.compiled else "eager",
            f"network {network_shapes(rec.config)}",
        ]
    )


def network_shapes(config) -> str:
    """A short fingerprint of a `HayaiConfig`: every size of the network (the decoder's, the vision
    tower's, the patch budget), hashed."""
    sizes = json.dumps(dataclasses.asdict(config), sort_keys=True)
    return hashlib.sha256(sizes.encode()).hexdigest()[:16]


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()
