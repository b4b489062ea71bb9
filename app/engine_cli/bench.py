"""`hayai bench` (the engine's benchmark; its other targets are app/cli.py's BENCH_TARGETS): one
read timed, or with --fidelity the fast path against exact fp32 on the same weights."""

from __future__ import annotations

import json
from pathlib import Path

import resources
from app.engine_cli import _fail


def _sample(vertical: bool = False) -> Path:
    return resources.path(resources.SAMPLE_VERTICAL if vertical else resources.SAMPLE_HORIZONTAL)


def bench(args) -> int:
    from app.engines.local import load_from_args
    from model import bench as engine_bench
    from model.images import ImageError, open_image

    if args.random_weights and args.model:
        return _fail("--random-weights builds the model in memory: leave out --model")
    rec = load_from_args(args, random_weights=args.random_weights)
    if isinstance(rec, str):
        return _fail(rec)
    try:
        image = open_image(args.image or str(_sample()), rec.config.image_cap)
    except ImageError as e:
        return _fail(f"cannot read {args.image}: {e}")
    if args.fidelity:  # the same weights loaded twice: exact fp32 and the fast path
        other = load_from_args(
            args,
            random_weights=args.random_weights,
            precision="exact" if rec.precision == "fast" else "fast",
        )
        if isinstance(other, str):
            return _fail(other)
        exact, fast = (other, rec) if rec.precision == "fast" else (rec, other)
        vertical = open_image(str(_sample(vertical=True)), rec.config.image_cap)
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
        batch_size=args.batch_size or 1,
        num_beams=args.beams,
        never_stop=args.random_weights,
    )
    print(json.dumps(report) if args.json else engine_bench.format_report(report))
    return 0
