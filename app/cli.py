"""The `hayai` command line: argument parsing for every sub-command.

Only the standard library is imported here, so `hayai --help` is instant; each sub-command
imports what it needs (torch, Qt, the dictionary) when it runs.
"""

from __future__ import annotations

import argparse
import sys

from app import __version__

ENGINE_EPILOG = """\
precision: exact = float32 everywhere (the released model's own logits);
fast = the fastest path that stays faithful on this device; auto = fast where faithful, else exact.
model folder: any folder with config.json, model.safetensors and tokenizer.json
(default: the variant downloaded by `hayai model download`, in the Hugging Face cache)."""


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine options")
    g.add_argument(
        "--model",
        metavar="DIR",
        help="folder with the release files (default: the downloaded variant)",
    )
    g.add_argument(
        "--variant",
        choices=["v2.1", "nova"],
        default=None,
        help="which download to use (default v2.1); with --model the weights decide",
    )
    g.add_argument("--device", choices=["auto", "cpu", "cuda", "mps"], default="auto")
    g.add_argument("--precision", choices=["auto", "exact", "fast"], default="auto")
    g.add_argument("--max-new-tokens", type=int, default=128, metavar="N")
    g.add_argument(
        "--beams", type=int, default=1, metavar="N", help="beam search width (1 = greedy)"
    )
    g.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile the decode step: a slower start (compiled during warm-up), faster decoding; "
        "see README",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hayai",
        description="Hayai Desktop: press a hotkey, box text on the screen, read it. "
        "Without a sub-command the tray app starts (a second start opens a capture in the running app).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Wayland: the screen is read with grim or the desktop portal; where the desktop offers\n"
        "no global shortcuts, bind `hayai capture` (and `hayai capture --repeat`) as shortcuts.\n"
        "State lives under HAYAI_CONFIG_DIR when set (settings, history, dictionary index, socket).",
    )
    parser.add_argument("--version", action="version", version=f"hayai {__version__}")
    parser.add_argument("--model", metavar="DIR", help="model folder (overrides the setting)")
    parser.add_argument(
        "--hotkey", metavar="COMBO", help="capture hotkey in pynput syntax, e.g. <ctrl>+<alt>+o"
    )
    parser.add_argument(
        "--capture-backend",
        choices=["auto", "mss", "grim", "portal", "qt"],
        help="how to read the screen (overrides the setting; default auto: by session)",
    )
    parser.add_argument("--no-tray", action="store_true", help="run without a tray icon")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log diagnostics (system info, timings)"
    )
    parser.add_argument(
        "--debug-dir",
        metavar="DIR",
        help="save every capture as NNNN.png + NNNN.json (box, screen, text, ocr_ms, latency_ms)",
    )
    parser.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help="write the desktop entry and icon to the user's applications folder and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "capture", help="tell the running app to select a region (starts the app if needed)"
    )
    p.add_argument(
        "--repeat", action="store_true", help="re-scan the last region instead of selecting"
    )

    p = sub.add_parser(
        "ocr",
        help="OCR image files headlessly",
        epilog=ENGINE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "images",
        nargs="+",
        metavar="IMAGE",
        help="image files or folders; - reads one image from stdin",
    )
    _add_engine_options(p)
    p.add_argument(
        "--json", action="store_true", help="one JSON object per line: image, text, token_ids, ms"
    )
    p.add_argument(
        "--batch-size", type=int, default=8, metavar="N", help="crops per batch (sorted by size)"
    )

    p = sub.add_parser(
        "bench",
        help="per-stage timing of the engine (or of the dictionary, or the app)",
        epilog=ENGINE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_engine_options(p)
    p.add_argument(
        "--image", metavar="IMG", help="crop to read (default: a sample crop shipped in resources/)"
    )
    p.add_argument("--runs", type=int, default=5, metavar="N")
    p.add_argument(
        "--batch-size", type=int, default=1, metavar="N", help="copies of the crop per batch"
    )
    p.add_argument(
        "--random-weights",
        action="store_true",
        help="real-size model with random weights in memory (no download); never stops early",
    )
    p.add_argument(
        "--fidelity",
        action="store_true",
        help="compare the fast path's teacher-forced logits with exact fp32 (cosine, top-1 agreement)",
    )
    p.add_argument("--json", action="store_true")
    other = p.add_mutually_exclusive_group()
    other.add_argument(
        "--dictionary",
        action="store_true",
        help="benchmark dictionary lookups instead of the model",
    )
    other.add_argument(
        "--app",
        action="store_true",
        help="what the tray app adds: GUI stall while the model loads, per-read time beside the model",
    )

    p = sub.add_parser("model", help="download the weights, show what is installed and where")
    p.add_argument("action", choices=["download", "info", "path"])
    p.add_argument("--variant", choices=["v2.1", "nova"], default="v2.1")

    p = sub.add_parser(
        "lookup", help="dictionary entries for the longest match at the start of TEXT"
    )
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--lang", choices=["auto", "ja", "zh", "ko"], default="auto")
    p.add_argument(
        "--json", action="store_true", help="print the entries as a JSON list (design.md schema)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = args.command
    if command in ("ocr", "bench", "model"):
        if command == "bench" and args.dictionary:
            from app.dictionary.bench import main as run
        elif command == "bench" and args.app:
            from app.bench import main as run
        else:
            from app import engine_cli

            run = getattr(engine_cli, command)
    elif command == "lookup":
        from app.dictionary.cli import main as run
    else:  # the tray app, `hayai capture`, --install-desktop-entry
        from app.launcher import main as run
    try:
        return int(run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
