"""The engine on this computer: the model loaded into this process.

The one mapping from the Settings and the `hayai ocr/bench/serve/page` options to `load_recognizer`'s
keywords (`recognizer_options`), the loads of the command line (`load_from_args`,
`bench_model_dir`), and the batch size measured for a loaded model (`auto_batch_size`: `hayai ocr
--batch-size auto`, `hayai serve --max-batch auto`). Which model folder is app/engines/choice.py's
answer.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from app.engines.base import Traits
from model.config import DEFAULT_VARIANT

log = logging.getLogger(__name__)

CALIBRATION_FILE = "batch-size.json"  # in the per-user cache folder: calibration key → size
INSTALL_HINT = "install hayai-desktop with torch (README, GPU or CPU)"

# `load_recognizer`'s keyword → (the setting, the `hayai ocr/bench` option's dest); which model
# (`model_dir`, `variant`) is resolve_model's answer, from `model/folder` and `model/variant`.
ENGINE_OPTIONS = {
    "device": ("model/device", "device"),
    "precision": ("model/precision", "precision"),
    "compile": ("model/compile", "compile"),
}

TRAITS = Traits(
    remote=False,
    settings_keys=frozenset(
        {"model/variant", "model/folder"} | {key for key, _ in ENGINE_OPTIONS.values()}
    ),
)


def is_compatible() -> bool:
    return True


def is_available() -> bool:
    return True


def recognizer_options(args=None, *, settings=None) -> dict:
    """`load_recognizer` keyword arguments for the command line (`args`) or the app (`settings`):
    the model by `resolve_model`, the other options from `args` when given, else from `settings`."""
    from app.engines.choice import resolve_model

    if args is not None:
        choice = resolve_model(args.model, args.variant, settings)
    else:
        choice = resolve_model(settings=settings)
    options = {"model_dir": choice.folder, "variant": choice.variant}
    for keyword, (key, dest) in ENGINE_OPTIONS.items():
        options[keyword] = getattr(args, dest) if args is not None else settings.get(key)
    return options


def options(settings) -> dict:
    """`load`'s keyword arguments from the Settings."""
    return recognizer_options(settings=settings)


def settings_problem(values: dict) -> str:
    return ""  # the model rows are checked when the model loads, with a hint of their own


def load(**options):
    from model import load_recognizer

    recognizer = load_recognizer(**options)
    recognizer.traits = TRAITS  # model/ knows nothing of the app's engines
    return recognizer


def load_from_args(args, **overrides):
    """The recognizer for a command's engine options (overrides win), or an error message (str)."""
    from model.errors import ModelNotFoundError, WeightsError

    try:
        return load(**{**recognizer_options(args), **overrides})
    except (ModelNotFoundError, WeightsError, RuntimeError, ValueError, OSError) as e:
        return str(e)


@contextmanager
def bench_model_dir(args) -> Iterator[str | None]:
    """The model folder a benchmark reads: the one `hayai ocr` would (None = the download), or with
    `--random-weights` a real-size random checkpoint written to a scratch folder for the run."""
    with tempfile.TemporaryDirectory(prefix="hayai-bench-") as scratch:
        if not args.random_weights:
            yield recognizer_options(args)["model_dir"]
            return
        from model.random_checkpoint import write_checkpoint

        variant = args.variant or DEFAULT_VARIANT
        yield str(write_checkpoint(scratch, size="full", variant=variant))


def auto_batch_size(rec, measure=None) -> int:
    """The batch size with the best throughput for this recognizer on this device: remembered per
    device, the network's shapes and precision in the per-user cache (`calibrate.calibration_key`:
    not per folder), else measured now (model/calibrate.py; tens of seconds on a CPU) and remembered.
    measure: the timing function (tests give a fake one)."""

    from app.platform.paths import user_dir
    from app.platform.private_files import private_file
    from model import calibrate

    key = calibrate.calibration_key(rec)
    path = user_dir("cache") / CALIBRATION_FILE
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    size = known.get(key)
    if isinstance(size, int) and not isinstance(size, bool) and size >= 1:
        return size
    print("hayai: measuring the best batch size on this device…", file=sys.stderr, flush=True)
    if measure is None:
        from PIL import Image

        import resources

        sample = resources.path(resources.SAMPLE_HORIZONTAL)
        measure = calibrate.batch_seconds(rec, Image.open(sample).convert("RGB"))
    size, rates = calibrate.choose_batch_size(measure)
    log.info(
        "batch size %d (crops/s by size: %s)",
        size,
        ", ".join(f"{n}: {r:.2f}" for n, r in rates.items()),
    )
    known[key] = size
    try:  # written aside and renamed: a reader never sees half a file
        tmp = private_file(path.with_name(f"{path.name}.tmp"))
        tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError as e:  # not remembered: measured again next time, the read goes on
        log.warning("cannot remember the batch size in %s: %s", path, e)
    return size
