"""`hayai ocr`, `hayai bench` and `hayai model`: the engine from the command line (no Qt here).

Bad input never prints a traceback: a file that cannot be read becomes an error line, a model
that cannot be loaded a one-line message, and the exit code says which.
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff"}


def _fail(message: str, code: int = 2) -> int:
    print(f"hayai: {message}", file=sys.stderr)
    return code


def engine_options(args) -> dict:
    """The engine options on the command line → `load_recognizer` keyword arguments."""
    return dict(
        model_dir=args.model,
        variant=args.variant,
        device=args.device,
        precision=args.precision,
        compile=args.compile,
    )


def _load(args, **overrides):
    """The recognizer for the engine options (overrides win), or an error message (str)."""
    from model.recognizer import load_recognizer
    from model.weights import ModelNotFoundError, WeightsError

    try:
        return load_recognizer(**{**engine_options(args), **overrides})
    except (ModelNotFoundError, WeightsError, RuntimeError, ValueError, OSError) as e:
        return str(e)


def expand_inputs(names: list[str]) -> list[str]:
    """Folders become their image files (sorted by name); files and `-` stay as given."""
    out = []
    for name in names:
        p = Path(name)
        if name != "-" and p.is_dir():
            out += [str(f) for f in sorted(p.iterdir()) if f.suffix.lower() in IMAGE_SUFFIXES]
        else:
            out.append(name)
    return out


def open_image(name: str):
    from PIL import Image

    from model.preprocess import to_rgb

    data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    with Image.open(io.BytesIO(data)) as im:
        return to_rgb(im)


def ocr(args) -> int:
    names = expand_inputs(args.images)
    if not names:
        return _fail(
            "no images given (folders are searched for " + ", ".join(sorted(IMAGE_SUFFIXES)) + ")"
        )
    rec = _load(args)
    if isinstance(rec, str):
        return _fail(rec)
    records: list[dict | None] = [None] * len(names)
    images = {}
    for i, name in enumerate(names):
        try:
            images[i] = open_image(name)
        except Exception as e:  # any unreadable file: missing, not an image, truncated, ...
            records[i] = {"image": name, "error": f"{type(e).__name__}: {e}"}
    # Similar sizes together: equal patch grids for nova, similar text lengths for both.
    order = sorted(images, key=lambda i: images[i].width * images[i].height)
    batch_size = max(1, args.batch_size)
    chunks = [order[b : b + batch_size] for b in range(0, len(order), batch_size)]
    printed, start = 0, time.perf_counter()
    outcomes = rec.read_batches(
        ([images[i] for i in chunk] for chunk in chunks),
        max_new_tokens=args.max_new_tokens,
        num_beams=args.beams,
    )
    for chunk, outcome in zip(chunks, outcomes):
        for n, i in enumerate(chunk):
            if isinstance(
                outcome, Exception
            ):  # out of memory and the like: this batch fails, the others run
                records[i] = {"image": names[i], "error": f"{type(outcome).__name__}: {outcome}"}
            else:
                r = outcome[n]
                records[i] = {
                    "image": names[i],
                    "text": r.text,
                    "token_ids": r.token_ids,
                    "ms": round(r.ms, 2),
                }
        while (
            printed < len(records) and records[printed] is not None
        ):  # input order, as soon as possible
            _print_record(records[printed], args.json)
            printed += 1
    elapsed = time.perf_counter() - start
    if len(images) > 1:
        print(
            f"read {len(images)} crops in {elapsed:.2f} s ({len(images) / elapsed:.1f} crops/s)",
            file=sys.stderr,
        )
    return 1 if any("error" in r for r in records) else 0


def _print_record(record: dict, as_json: bool) -> None:
    from model.tokenizer import one_line

    if as_json:
        print(json.dumps(record, ensure_ascii=False), flush=True)
    elif "error" in record:
        print(f"{record['image']}: error: {record['error']}", file=sys.stderr, flush=True)
    else:
        print(one_line(record["text"]), flush=True)


def bench(args) -> int:
    from model import bench as engine_bench

    if args.random_weights and args.model:
        return _fail("--random-weights builds the model in memory: leave out --model")
    rec = _load(args, random_weights=args.random_weights)
    if isinstance(rec, str):
        return _fail(rec)
    try:
        image = open_image(args.image) if args.image else open_image(str(_sample()))
    except Exception as e:
        return _fail(f"cannot read {args.image}: {e}")
    if args.fidelity:  # the same weights loaded twice: exact fp32 and the fast path
        other = _load(
            args,
            random_weights=args.random_weights,
            precision="exact" if rec.precision == "fast" else "fast",
        )
        if isinstance(other, str):
            return _fail(other)
        exact, fast = (other, rec) if rec.precision == "fast" else (rec, other)
        vertical = open_image(str(_sample(vertical=True)))
        report = engine_bench.fidelity(exact, fast, [image, vertical], args.max_new_tokens)
        print(
            json.dumps(report)
            if args.json
            else "\n".join(f"  {k:16} {v}" for k, v in report.items())
        )
        return 0
    report = engine_bench.run(
        rec,
        image,
        runs=args.runs,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch_size,
        num_beams=args.beams,
        never_stop=args.random_weights,
    )
    print(json.dumps(report) if args.json else engine_bench.format_report(report))
    return 0


def _sample(vertical: bool = False) -> Path:
    import resources

    return resources.path(resources.SAMPLE_VERTICAL if vertical else resources.SAMPLE_HORIZONTAL)


def model(args) -> int:
    if args.action == "info":
        return model_info(args)
    if getattr(args, "model", None):
        return _fail(
            f"--model is for `hayai model info`; `hayai model {args.action}` uses --variant"
        )
    from model.download import cli

    return cli(args.action, args.variant)


FAST_PATHS = {  # what "fast" runs on each kind of device (model/fast.py)
    "cuda": "fp16 weights and activations, decode step replayed as a CUDA graph",
    "mps": "fp16 weights and activations",
    "bf16": "bf16 weights (this CPU has AVX512-BF16 or AMX)",
    "int8": "int8 feed-forward weights, fp16 weights elsewhere (fbgemm, AVX2)",
}


def would_run(device: str = "auto", precision: str = "auto") -> str:
    """The device and precision `load_recognizer` picks for these options, and why (two lines)."""
    from model.fast import cpu_fast_kind
    from model.recognizer import resolve_device, resolve_precision

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
    if resolved == "fast":
        kind = dev.type if dev.type in ("cuda", "mps") else cpu_fast_kind()
        how = FAST_PATHS.get(kind, "float32 (no faster faithful path on this CPU)")
    else:
        how = "float32 everywhere, the released model's own logits"
    picked = f"{resolved} ({precision})" if precision == "auto" else resolved
    return f"would run:\n  device:    {device_line}\n  precision: {picked}: {how}"


def model_info(args) -> int:
    """`hayai model info [--model DIR] [--device] [--precision]`: what is installed, and what would run."""
    folder = getattr(args, "model", None)
    if folder:
        from model.weights import Checkpoint, ModelNotFoundError, WeightsError

        path = Path(folder).expanduser()
        try:
            checkpoint = Checkpoint(path)
        except (ModelNotFoundError, WeightsError, OSError, ValueError) as e:
            return _fail(str(e), 1)
        sizes = ", ".join(
            f"{f.name} {f.stat().st_size / 1e6:.1f} MB"
            for f in sorted(path.iterdir())
            if f.is_file() and f.suffix in (".json", ".safetensors")
        )
        print(f"model folder: {path.resolve()}")
        print(f"  variant:  {checkpoint.config.variant} (from the weights)")
        print(f"  files:    {sizes}")
    else:
        from model.download import cli

        code = cli("info", args.variant)
        if code:
            return code
    try:
        print(would_run(getattr(args, "device", "auto"), getattr(args, "precision", "auto")))
    except (RuntimeError, ValueError) as e:  # --device cuda without CUDA, and the like
        return _fail(str(e))
    return 0
