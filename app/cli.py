"""The `hayai` command line: argument parsing for every sub-command.

Nothing heavy is imported here: the standard library, `model.config` and our own light modules of
the standard library only (the argument types, each sub-command's `add_parser`), so `hayai --help`
is instant; each sub-command imports what it needs (torch, Qt, the dictionary) when it runs.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from app import __version__
from app.anki.cli import add_parser as add_anki_parser
from app.cli_types import batch_size, point, positive_int, positive_ints
from app.dictionary.dict_cli import add_parser as add_dict_parser
from app.engines.choice import SETTINGS_MODEL
from model.config import DEVICES, PRECISIONS, REQUIRED_FILES_TEXT, VARIANTS

ENGINE_EPILOG = f"""\
precision: exact = float32 everywhere (the released model's own logits);
fast = the fastest path that stays faithful on this device; auto = fast where faithful, else exact.
model folder: any folder with {REQUIRED_FILES_TEXT}
{textwrap.fill(f"(default: {SETTINGS_MODEL}).", 100)}"""


class CommandParser(argparse.ArgumentParser):
    """A sub-command's parser: an unknown option is that command's error, with its usage
    (argparse hands extras up to `hayai`'s parser, which would print the top-level usage)."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine options")
    g.add_argument(
        "--model",
        metavar="DIR",
        help=f"folder with the release files (default: {SETTINGS_MODEL})",
    )
    g.add_argument(
        "--variant",
        choices=VARIANTS,
        default=None,
        help="use the download of this variant instead of the model in Settings; with --model the "
        "weights decide",
    )
    g.add_argument("--device", choices=DEVICES, default="auto")
    g.add_argument("--precision", choices=PRECISIONS, default="auto")
    g.add_argument("--max-new-tokens", type=positive_int, default=128, metavar="N")
    g.add_argument(
        "--beams", type=positive_int, default=1, metavar="N", help="beam search width (1 = greedy)"
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
    from app.reading.cli import add_parser as add_watch_parser
    from app.reading.cli import websocket_address

    parser.add_argument(
        "--websocket",
        metavar="[HOST:]PORT",
        type=websocket_address,
        help="send every read text to WebSocket clients on HOST:PORT (default host 127.0.0.1) this run",
    )
    parser.add_argument(
        "--websocket-format",
        choices=["text", "json"],
        help="each WebSocket message as plain text (default) or a JSON object with sentence, "
        "process_path, source and time (exSTATic); overrides the setting",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log diagnostics (system info, timings); -vv: debug logging too",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="same as -vv: debug logging, the screen geometry drawn on the selection, and with "
        "--debug-dir the full screen saved beside each crop",
    )
    parser.add_argument(
        "--debug-dir",
        metavar="DIR",
        help="save every capture as NNNN.png + NNNN.json (box, screen, text, ocr_ms, latency_ms); "
        "with -vv also NNNN-screen.png, the whole screen it was cut from",
    )
    parser.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help="write the desktop entry and icon to the user's applications folder and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)

    p = sub.add_parser(
        "capture", help="tell the running app to select a region (starts the app if needed)"
    )
    p.add_argument(
        "--repeat", action="store_true", help="re-scan the last region instead of selecting"
    )

    add_watch_parser(sub)

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
        "--batch-size",
        type=batch_size,
        default=8,
        metavar="N",
        help="crops per batch (sorted by size); auto: the fastest size on this device, measured "
        "once and remembered",
    )

    from app.page.cli import add_parser as add_page_parser

    add_page_parser(sub, _add_engine_options, ENGINE_EPILOG)

    p = sub.add_parser(
        "blocks", help="find the text blocks of images without reading them (no OCR model)"
    )
    p.add_argument("images", nargs="+", metavar="IMAGE", help="image files, or folders of them")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per image: image, width, height, blocks (box, vertical, lines), ms",
    )
    p.add_argument(
        "--at",
        type=point,
        action="append",
        default=[],
        metavar="X,Y",
        help="also the block a click at X,Y (image px) proposes in the selection (repeatable)",
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
    p.add_argument("--runs", type=positive_int, default=5, metavar="N")
    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="copies of the crop per batch (default 1); with --page, crops per batch (default: "
        "hayai page's)",
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
    other.add_argument(
        "--serve",
        action="store_true",
        help="`hayai serve` under load: crops/s, time to first token and p50/p95 latency at "
        "concurrency 1, 8 and 64",
    )
    p.add_argument(
        "--max-batch",
        type=batch_size,
        default="auto",
        metavar="N",
        help="with --serve: the server's --max-batch (default auto)",
    )
    p.add_argument(
        "--max-rows",
        type=positive_int,
        default=64,
        metavar="N",
        help="with --serve: the server's --max-rows (default 64)",
    )
    p.add_argument(
        "--concurrency",
        type=positive_ints,
        default=(1, 8, 64),
        metavar="N,N,...",
        help="with --serve: the numbers of clients to load the server with (default 1,8,64)",
    )
    p.add_argument(
        "--compare-fixed",
        type=positive_ints,
        default=(),
        metavar="N,N,...",
        help="with --serve: also load a server reading fixed batches of each of these sizes "
        "(--batching fixed) at the highest concurrency, and name the best",
    )
    other.add_argument(
        "--blocks",
        action="store_true",
        help="finding text blocks (no model): ms per page (detector, grouping) on the test scans, "
        "their 1654×1170 spread and a drawn 1920×1080 screen, ms per click, peak memory",
    )
    other.add_argument(
        "--page",
        action="store_true",
        help="a whole page at once: find its text blocks and read them all (hayai page)",
    )
    from app.page.read import PATCHES, PATCHES_HELP

    p.add_argument("--patches", choices=PATCHES, default="fit", help="with --page: " + PATCHES_HELP)
    other.add_argument(
        "--watch",
        action="store_true",
        help="what a watched region costs: idle CPU and change-to-text time (needs a real screen)",
    )
    other.add_argument(
        "--hover",
        action="store_true",
        help="Hover to read on a screen of drawn Japanese: key down to the entry for a new block "
        "(detector + read + lookup) and pointer to the entry for another word of a read one",
    )
    p.add_argument(
        "--load",
        type=int,
        choices=range(17),
        default=2,
        metavar="N",
        help="with --watch: change-to-text time again while N busy processes keep the CPU busy, "
        "as a game does (default 2; 0 skips it)",
    )

    p = sub.add_parser(
        "serve",
        help="the model behind an OpenAI-compatible HTTP API (batched)",
        epilog=ENGINE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_engine_options(p)
    from app.serve.cli import add_options as add_serve_options

    add_serve_options(p)

    p = sub.add_parser(
        "model",
        help="download the weights, show what is installed and where, and what would run",
    )
    p.add_argument("action", choices=["download", "info", "path"])
    p.add_argument(
        "--variant",
        choices=VARIANTS,
        default=None,
        help=f"the download of this variant (default: the model Hayai reads with: {SETTINGS_MODEL})",
    )
    g = p.add_argument_group("info options")
    g.add_argument("--model", metavar="DIR", help="describe this model folder instead")
    g.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="say what this device choice would run",
    )
    g.add_argument("--precision", choices=PRECISIONS, default="auto")

    p = sub.add_parser(
        "lookup", help="dictionary entries for the longest match at the start of TEXT"
    )
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--lang", choices=["auto", "ja", "zh", "ko"], default="auto")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the entries as a JSON list (the schema: app/dictionary/models.py)",
    )
    add_dict_parser(sub)
    add_anki_parser(sub)
    return parser


def _config_dir_problem() -> str:
    """A HAYAI_CONFIG_DIR that cannot be a folder, as one sentence ("" when fine or unset)."""
    import os

    value = os.environ.get("HAYAI_CONFIG_DIR")
    if value and os.path.lexists(os.path.expanduser(value)):
        if not os.path.isdir(os.path.expanduser(value)):
            return f"HAYAI_CONFIG_DIR={value} is not a folder; point it at a folder (made when missing)"
    return ""


# What runs each sub-command: "module:function", imported only when that command runs. `hayai bench`
# runs the engine's benchmark unless one of its other targets (an option) is given.
COMMANDS = {
    "ocr": "app.engine_cli.ocr:ocr",
    "bench": "app.engine_cli.bench:bench",
    "model": "app.engine_cli.model:model",
    "page": "app.page.cli:main",
    "blocks": "app.blocks.cli:main",
    "lookup": "app.dictionary.cli:main",
    "anki": "app.anki.cli:main",
    "dict": "app.dictionary.dict_cli:main",
    "serve": "app.serve.cli:main",
}
BENCH_TARGETS = {
    "dictionary": "app.dictionary.bench:main",
    "app": "app.bench:main",
    "serve": "app.serve.bench:main",
    "blocks": "app.blocks.bench:main",
    "page": "app.page.bench:main",
    "watch": "app.reading.watch_bench:main",
    "hover": "app.hover.bench:main",
}
# the tray app, `hayai capture`, `hayai watch`, --install-desktop-entry
LAUNCHER = "app.launcher:main"


def command_function(args):
    """The function that runs the parsed command line `args`."""
    import importlib

    target = COMMANDS.get(args.command, LAUNCHER)
    if args.command == "bench":
        target = next((t for name, t in BENCH_TARGETS.items() if getattr(args, name)), target)
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    problem = _config_dir_problem()
    if problem:
        print(f"hayai: {problem}", file=sys.stderr)
        return 2
    run = command_function(args)
    from app.platform.private_files import StateDirError

    try:
        return int(run(args) or 0)
    except (
        StateDirError
    ) as exc:  # a state folder that cannot be made (a file above it, no permission)
        print(f"hayai: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
