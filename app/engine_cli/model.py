"""`hayai model download|info|path`: fetch a release, describe what is installed and what would
run, print the folder in use."""

from __future__ import annotations

import sys
from pathlib import Path

from app.engine_cli import _fail
from model.config import DATA_FILES, DEFAULT_VARIANT, VARIANTS
from model.download import size_text


def model(args) -> int:
    """`hayai model download|info|path [--variant]`: model/download.py does the work, this prints."""
    from model import download as dl

    if args.action == "info":
        return model_info(args)
    if getattr(args, "model", None):
        return _fail(
            f"--model is for `hayai model info`; `hayai model {args.action}` uses --variant"
        )
    from app.engines.choice import resolve_model, user_settings

    settings = user_settings()
    if args.action == "download":  # no --variant: the Settings variant
        return _download(args.variant or (settings.get("model/variant") if settings else None))
    choice = resolve_model(variant=args.variant, settings=settings)  # no --variant: the one in use
    if choice.folder and not Path(choice.folder).is_dir():
        print(f"{choice.why}, {Path(choice.folder)}, does not exist", file=sys.stderr)
        return 1
    folder = Path(choice.folder) if choice.folder else dl.installed_dir(choice.variant)
    if folder is None:
        print(dl.missing_message(choice.variant), file=sys.stderr)
        return 1
    print(folder)
    return 0


def _download(variant: str | None) -> int:
    from app.cli_progress import ProgressBars
    from model import download as dl

    variant = variant or DEFAULT_VARIANT
    from model.errors import DownloadError

    rel = dl.release(variant)
    print(
        f"Downloading Hayai OCR {variant} from {rel.repo_id} ({rel.revision or 'newest revision'}) "
        f"into {dl.cache_root()}",
        file=sys.stderr,
    )
    bars = ProgressBars(per_item=True, unit_bytes=True)  # a bar per file being downloaded
    try:
        folder = dl.download(variant, progress=bars, log=bars.write)
    except DownloadError as e:
        bars.close()
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        bars.close()
        print(
            "interrupted; the partial file is kept, run the same command to resume", file=sys.stderr
        )
        return 130
    bars.close()
    manifest = dl.read_manifest(folder) or {}
    state = (
        "SHA-256 verified"
        if manifest.get("verified")
        else f"UNVERIFIED, revision {folder.name} recorded"
    )
    print(f"Installed in {folder} ({state})", file=sys.stderr)
    print(folder)
    return 0


def describe_model(variant: str) -> str:
    """The `hayai model info` paragraph for one variant."""
    from model import download as dl

    rel = dl.release(variant)
    folder = dl.installed_dir(variant)
    if folder is None:
        return f"{variant}: not installed (hayai model download --variant {variant})"
    manifest = dl.read_manifest(folder) or {}
    if manifest.get("verified"):
        verified = f"yes: SHA-256 matched the pinned values ({manifest.get('downloaded_at', '?')})"
    elif manifest:
        verified = (
            f"no: UNVERIFIED, hashes recorded at download ({manifest.get('downloaded_at', '?')})"
        )
    else:
        verified = "not checked: files placed by another tool; `hayai model download` verifies them"
    sizes = ", ".join(
        f"{name} {size_text((folder / name).stat().st_size)}"
        for name in DATA_FILES
        if (folder / name).is_file()
    )
    pin = " (pinned)" if rel.revision else " (newest when downloaded)"
    lines = [
        f"{variant}: installed",
        f"  folder:   {folder}",
        f"  repo:     {rel.repo_id}",
        f"  revision: {folder.name}{pin}",
        f"  verified: {verified}",
        f"  files:    {sizes}",
    ]
    others = {c: n for c, n in dl.cached_revisions(variant).items() if c != folder.name}
    if others:
        listed = ", ".join(f"{c[:10]} ({size_text(n)})" for c, n in sorted(others.items()))
        lines.append(f"  also in the cache: {listed}; `hf cache rm` frees them")
    return "\n".join(lines)


FAST_PATHS = {  # what "fast" runs on an accelerator (model/fast.py); the CPU's is per stage
    "cuda": "fp16 weights and activations, decode step replayed as a CUDA graph",
    "mps": "fp16 weights and activations",
}


def would_run(device: str = "auto", precision: str = "auto") -> str:
    """The device and precision `load_recognizer` picks for these options, and why (two lines)."""
    from model.device_choice import resolve_device, resolve_precision
    from model.fast import cpu_recipes, describe

    dev = resolve_device(device)
    resolved = resolve_precision(precision, dev)
    if device == "auto":
        why = {
            "cuda": "auto picks CUDA first",
            "mps": "auto: no CUDA, Metal is here",
        }.get(dev.type, "auto: no CUDA or MPS device here")
        device_line = f"{dev.type} ({why})"
    else:
        device_line = dev.type
    if resolved == "fast" and dev.type in FAST_PATHS:
        how = FAST_PATHS[dev.type]
    elif resolved == "fast":
        recipes = cpu_recipes()  # from this CPU's flags, as load_recognizer picks them
        how = describe(recipes) if recipes else "float32 (no faster faithful path on this CPU)"
    else:
        how = "float32 everywhere, the released model's own logits"
    picked = f"{resolved} ({precision})" if precision == "auto" else resolved
    return f"would run:\n  device:    {device_line}\n  precision: {picked}: {how}"


def describe_folder(path: Path) -> str:
    """The `hayai model info` paragraph for a model folder; ValueError (in words) when it is not one."""
    from model.errors import ModelNotFoundError, WeightsError
    from model.weights import Checkpoint

    try:
        checkpoint = Checkpoint(path)
    except (ModelNotFoundError, WeightsError, OSError, ValueError) as e:
        raise ValueError(str(e)) from None
    sizes = ", ".join(
        f"{f.name} {size_text(f.stat().st_size)}"
        for f in sorted(path.iterdir())
        if f.is_file() and f.suffix in (".json", ".safetensors")
    )
    return "\n".join(
        [
            f"model folder: {path.resolve()}",
            f"  variant:  {checkpoint.config.variant} (from the weights)",
            f"  files:    {sizes}",
        ]
    )


def model_info(args) -> int:
    """`hayai model info [--model DIR] [--variant] [--device] [--precision]`: the model Hayai reads
    with (app/engines/choice.py), what is downloaded, and what would run."""
    from app.engines.choice import resolve_model

    choice = resolve_model(getattr(args, "model", None), getattr(args, "variant", None))
    if choice.folder is not None:
        try:
            print(describe_folder(Path(choice.folder)))
        except ValueError as e:
            return _fail(f"{choice.why}: {e}", 1)
        if choice.origin == "settings":
            print(f"  in use:   {choice.why} (the app, hayai ocr and hayai serve read with it)")
    else:
        print(f"in use: {choice.variant}, {choice.why}")
    if choice.origin != "--model":
        from model import download as dl

        print(f"Hugging Face cache: {dl.cache_root()}  (HF_HOME or HF_HUB_CACHE move it)")
        for name in VARIANTS:
            print(describe_model(name))
    try:
        print(would_run(getattr(args, "device", "auto"), getattr(args, "precision", "auto")))
    except (RuntimeError, ValueError) as e:  # --device cuda without CUDA, and the like
        return _fail(str(e))
    return 0
