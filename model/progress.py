"""The one progress callback of every long job: a model download, a dictionary import or index
build, a page read.

`progress(what, done, total)`: `what` names the part under way (a file, a bank, a stage), `done` of
`total` says how far the whole job is (bytes, blocks, or a fraction of 1.0 where nothing is counted;
total 0 = unknown). It is called from the thread doing the work, so a window relays it through a
queued signal; the command line draws it with tqdm (app/cli_progress.py). Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, float, float], None]


def fraction(done: float, total: float) -> float:
    """How far, from 0.0 to 1.0 (0.0 while the total is unknown)."""
    return min(1.0, max(0.0, done / total)) if total else 0.0
