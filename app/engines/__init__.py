"""Where the app's reads run: one small interface, one module per backend.

    local.py    the model on this computer (`model.load_recognizer`)
    server.py   a Hayai server (`hayai serve`) over HTTP

`load(backend=..., **options)` returns a recognizer (`base.Recognizer`): `read([pil_image], max_new_tokens)`
→ results with `.text`, `.token_ids`, `.timings`; `warmup()`; `traits`; `reads_batches` (whether
it has `read_batches`, the local model's); and `device`, `variant`, `precision` as strings. Each backend module has `TRAITS`, `options(settings)` (its `load` keywords
from the Settings), `settings_problem(values)` and `load(**options)`.
The OCR worker (app/engines/worker.py) calls both in its own thread, so neither ever runs on the GUI
thread. A backend's errors may carry a `hint` (what to do), which the app shows with the message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.engines import local, server
from app.engines.base import Recognizer, Traits
from app.engines.choice import resolve_model
from app.platform.backends import pick
from model.config import ImageCap

if TYPE_CHECKING:
    from app.settings import Settings

REGISTRY = {"local": local, "server": server}
__all__ = [
    "REGISTRY",
    "Recognizer",
    "Traits",
    "image_cap_reader",
    "load",
    "option_keys",
    "options",
    "settings_problem",
    "traits",
]


def traits(backend: str) -> Traits:
    """What `backend` is (remote or not), so that nothing outside this package compares its name."""
    return REGISTRY[backend].TRAITS


def options(settings: Settings) -> dict:
    """`load`'s keyword arguments for the backend chosen in `settings` (Settings → Engine)."""
    backend = settings.get("engine/backend")
    return {"backend": backend, **REGISTRY[backend].options(settings)}


def option_keys(settings: Settings) -> frozenset[str]:
    """The settings `options(settings)` depends on now: a change to one of them means a reload."""
    return traits(settings.get("engine/backend")).settings_keys | {"engine/backend"}


def image_cap_reader(settings: Settings) -> Callable[[], ImageCap]:
    """The image cap for outside images (the clipboard's, the watched folder's) read by the engine
    in `settings`, in two steps: which model is settled now, from the settings alone; the function
    returned reads its cap, the local model's, known before it loads (its config.json and weights
    header: disk, so the image decoder's thread calls it, never the GUI thread). A server holds its
    images to its own model's cap in the same words, so for one only the largest released cap."""
    if traits(settings.get("engine/backend")).remote:
        return ImageCap
    choice = resolve_model(settings=settings)
    return lambda: choice.image_cap


def settings_problem(values: dict) -> str:
    """Why the engine settings in `values` (key → value, as Settings → Engine holds them) cannot be
    used, in words with what to do; "" when they can."""
    backend = values.get("engine/backend")
    return REGISTRY[backend].settings_problem(values) if backend in REGISTRY else ""


def load(backend: str = "local", **options: object) -> Recognizer:
    """The recognizer of `backend` for its options (`options(settings)` gives both)."""
    return pick(REGISTRY, backend, capability="engine").module.load(**options)
