"""Which device and which precision a load gets: `auto` resolved on this machine.

`load_recognizer` (model/recognizer.py) asks here, and so does `hayai model info`'s "would run"
(app/engine_cli/model.py), so both say the same.
"""

from __future__ import annotations

import torch

from model import fast
from model.config import DEVICES


def resolve_device(device: str = "auto") -> torch.device:
    """`auto` → CUDA, else Metal, else the CPU; a device asked for by name that is not here is an
    error in words."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            "--device cuda: no CUDA device is available (is the CUDA build of torch installed?)"
        )
    if device == "mps" and not (
        getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()
    ):
        raise RuntimeError("--device mps: Metal is not available on this machine")
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)}")
    return torch.device(device)


def resolve_precision(precision: str, device: torch.device) -> str:
    """`auto` → `fast` where the fast path is faithful on this device (see model/fast.py), else `exact`."""
    if precision != "auto":
        return precision
    if device.type in ("cuda", "mps"):
        return "fast"
    return "fast" if fast.cpu_recipes() is not None else "exact"
