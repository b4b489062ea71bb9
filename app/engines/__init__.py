"""Where the app's reads run: one small interface, one module per backend.

    local.py    the model on this computer (`model.load_recognizer`)
    server.py   a Hayai server (`hayai serve`) over HTTP

`load(backend=..., **options)` returns a recognizer (`base.Recognizer`): `read([pil_image], max_new_tokens)`
→ results with `.text`, `.token_ids`, `.timings`; `warmup()`; `traits`, and `device`, `variant`,
`precision` as strings. Each backend module has `TRAITS`, `options(settings)` (its `load` keywords
from the Settings), `settings_problem(values)` and `load(**options)`.
The OCR worker (app/ocr_worker.py) calls both in its own thread, so neither ever runs on the GUI
thread. A backend's errors may carry a `hint` (what to do), which the app shows with the message.
"""

from __future__ import annotations

from app.backends import pick
from app.engines import local, server
from app.engines.base import Recognizer, Traits
from app.model_choice import resolve_model
from model.config import ImageCap

REGISTRY = {"local": local, "server": server}
__all__ = [
    "REGISTRY",
    "Recognizer",
    "Traits",
    "image_cap",
    "load",
    "options",
    "settings_problem",
    "traits",
]


def traits(backend: str) -> Traits:
    """What `backend` is (remote or not), so that nothing outside this package compares its name."""
    return REGISTRY[backend].TRAITS


def options(settings) -> dict:
    """`load`'s keyword arguments for the backend chosen in `settings` (Settings → Engine)."""
    backend = settings.get("engine/backend")
    return {"backend": backend, **REGISTRY[backend].options(settings)}


def image_cap(settings) -> ImageCap:
    """The image cap for outside images (the clipboard's, the watched folder's) read by the engine
    in `settings`: the local model's, known before it loads; a server holds its images to its own
    model's cap in the same words, so here only the largest released one."""
    if traits(settings.get("engine/backend")).remote:
        return ImageCap()
    return resolve_model(settings=settings).image_cap


def settings_problem(values: dict) -> str:
    """Why the engine settings in `values` (key → value, as Settings → Engine holds them) cannot be
    used, in words with what to do; "" when they can."""
    backend = values.get("engine/backend")
    return REGISTRY[backend].settings_problem(values) if backend in REGISTRY else ""


def load(backend: str = "local", **options):
    """The recognizer of `backend` for its options (Settings.engine_options() gives both)."""
    return pick(REGISTRY, backend, capability="engine").module.load(**options)
