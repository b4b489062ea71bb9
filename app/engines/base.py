"""The one interface every engine backend meets, and the traits it declares.

Code outside `app/engines/` asks a backend's traits (`app.engines.traits(name)`, or a recognizer's
`.traits`) instead of comparing backend names, so adding a backend is one module here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Traits:
    # Reads go to another process over HTTP: its errors are already sentences in GUI words with a
    # hint, they are fixed in Settings → Engine, and loading it never imports torch.
    remote: bool
    # The Settings keys its `load` options come from (`options(settings)`): a change to one of them
    # means a reload; Settings enables a remote backend's own rows only while it is chosen.
    settings_keys: frozenset[str]


class Recognizer(Protocol):
    """What the OCR worker, the page reader and the CLI call; both backends' objects meet it."""

    traits: Traits
    device: str
    variant: str
    precision: str
    # It reads many batches of crops in one call, `read_batches(batches, max_new_tokens, budgets=,
    # limits=)`, each crop at its own patch budget (`config`): the local model. Without it the page
    # reader sends a batch's crops to `read` at once (a server reads them as one batch).
    reads_batches: bool

    def read(self, images: list, max_new_tokens: int = ...) -> list: ...

    def warmup(self) -> None: ...
