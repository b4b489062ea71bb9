"""How well `hayai blocks` finds the text blocks of real manga pages, apart from the tests.

Runs the command users run (`hayai blocks IMAGE --json --at X,Y ...`) on each page of truth.json at
its size and shown smaller (60% by default), and prints per page and in total:

- recall: truth blocks that some found box matches (see `matches`);
- boxes on no text: found boxes that overlap no truth block (boxes on sound effects, signs and
  credits, the "sfx" kind, are counted neither way);
- clicks: a click at each truth block's middle that proposes that block (same rule);
- art clicks: clicks on drawing, far from any text, that propose anything at all;
- ms: the command's own time per page (its "ms"), and the wall time of the whole call.

The totals are printed apart: "TUNED" for the pages whose "tuned" is true (looked at while tuning
the finder), "HELD OUT" for the others; a tuned page is never counted as held out. The pages are not in git
(see README.md and get_pages.sh); --pages names their folder. Standard library, numpy and Pillow.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_PAGES = Path(os.environ.get("HAYAI_BLOCKS_EVAL_PAGES", "~/.cache/hayai/blocks_eval_pages"))
# `hayai blocks` as the installed command runs it, from this checkout.
HAYAI = [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))"]

COVER = 0.7  # a found box covers at least this share of the truth block ...
MAX_AREA = 2.0  # ... and is at most this many times its area

Box = tuple[int, int, int, int]  # x0, y0, x1, y1; x1/y1 exclusive


def area(b: Box) -> int:
    return max(0, b[2] - b[0]) * max(0, b[3] - b[1])


def intersection(a: Box, b: Box) -> int:
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def matches(found: Box | None, truth: Box) -> bool:
    """The issue's rule: the found box covers >= 70% of the block and is at most twice its area."""
    if found is None or area(truth) == 0:
        return False
    return intersection(found, truth) >= COVER * area(truth) and area(found) <= MAX_AREA * area(
        truth
    )


def scaled(b: Box, s: float) -> Box:
    """A box of the page at its size, on the page shown at scale s (outward to whole pixels)."""
    return (math.floor(b[0] * s), math.floor(b[1] * s), math.ceil(b[2] * s), math.ceil(b[3] * s))


def middle(b: Box) -> tuple[int, int]:
    return ((b[0] + b[2]) // 2, (b[1] + b[3]) // 2)


@dataclass
class Score:
    """Counts for one page at one scale, or their sum."""

    blocks: int = 0
    found: int = 0  # truth blocks matched by a found box
    boxes: int = 0  # found boxes counted: on text or on no text
    no_text: int = 0
    clicks: int = 0
    clicks_ok: int = 0
    art: int = 0
    art_proposing: int = 0
    ms: list[float] = field(default_factory=list)  # the command's "ms", one per page
    wall: list[float] = field(default_factory=list)  # seconds of the whole call, one per page

    def add(self, other: Score) -> None:
        for name in (
            "blocks",
            "found",
            "boxes",
            "no_text",
            "clicks",
            "clicks_ok",
            "art",
            "art_proposing",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.ms += other.ms
        self.wall += other.wall


def score_page(page: dict, s: float, answer: dict) -> Score:
    """Scores one answer of `hayai blocks --json` against the page's truth scaled by s.

    `answer["at"]` holds the clicks in the order `clicks(page, s)` gives them."""
    truth = [scaled(tuple(b["box"]), s) for b in page["blocks"] if b["kind"] != "sfx"]
    sfx = [scaled(tuple(b["box"]), s) for b in page["blocks"] if b["kind"] == "sfx"]
    found = [tuple(b["box"]) for b in answer["blocks"]]
    score = Score(blocks=len(truth), ms=[float(answer.get("ms", 0.0))])
    score.found = sum(any(matches(f, t) for f in found) for t in truth)
    for f in found:
        if any(intersection(f, t) > 0 for t in truth):
            score.boxes += 1
        elif not any(intersection(f, x) > 0 for x in sfx):
            score.boxes += 1
            score.no_text += 1
    at = answer.get("at", [])
    points, _ = clicks(page, s)
    if len(at) != len(points):
        raise ValueError(f"{page['id']}: asked {len(points)} clicks, the answer has {len(at)}")
    for t, click in zip(truth, at[: len(truth)]):
        box = click.get("box")
        score.clicks += 1
        score.clicks_ok += matches(tuple(box) if box else None, t)
    for click in at[len(truth) :]:
        score.art += 1
        score.art_proposing += click.get("box") is not None
    return score


def why(page: dict, s: float, answer: dict) -> list[str]:
    """Each missed block with the found box that covers most of it, and each box on no text."""
    truth = [(b, scaled(tuple(b["box"]), s)) for b in page["blocks"]]
    found = [tuple(b["box"]) for b in answer["blocks"]]
    out = []
    for b, t in truth:
        if b["kind"] == "sfx" or any(matches(f, t) for f in found):
            continue
        best = max(found, key=lambda f: intersection(f, t), default=None)
        if best is None or intersection(best, t) == 0:
            out.append(f"  missed {b['text'][:16]} {list(t)}: no box on it")
        else:
            cover, ratio = intersection(best, t) / area(t), area(best) / area(t)
            out.append(
                f"  missed {b['text'][:16]} {list(t)}: {list(best)} covers {cover:.0%}, {ratio:.1f}x its area"
            )
    for f in found:
        if not any(intersection(f, t) > 0 for _, t in truth):
            out.append(f"  on no text {list(f)}")
    return out


def clicks(page: dict, s: float) -> tuple[list[tuple[int, int]], int]:
    """The points to click on the page shown at scale s: each scored block's middle, then the art
    points; and how many are blocks."""
    truth = [scaled(tuple(b["box"]), s) for b in page["blocks"] if b["kind"] != "sfx"]
    art = [(int(x * s), int(y * s)) for x, y in page["art"]]
    return [middle(t) for t in truth] + art, len(truth)


def page_image(page: dict, pages_dir: Path, s: float, tmp: Path) -> Path:
    """The page's file, or a copy shown at scale s (PNG, so that nothing but the scaling changes)."""
    path = pages_dir / page["file"]
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: get the pages with tests/blocks_eval/get_pages.sh (README.md)"
        )
    if s == 1.0:
        return path
    out = tmp / f"{page['id']}@{round(s * 100)}.png"
    with Image.open(path) as im:
        size = (round(im.width * s), round(im.height * s))
        im.convert("RGB").resize(size, Image.Resampling.LANCZOS).save(out)
    return out


def run_blocks(
    command: list[str], image: Path, points: list[tuple[int, int]]
) -> tuple[dict, float]:
    """One `hayai blocks --json` call for one image and its clicks: its answer and wall seconds."""
    args = [*command, str(image), "--json"]
    for x, y in points:
        args += ["--at", f"{x},{y}"]
    start = time.perf_counter()
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"'{shlex.join(args[:6])} ...' failed (exit {done.returncode}): {done.stderr.strip()[-800:]}"
        )
    lines = [line for line in done.stdout.splitlines() if line.strip().startswith("{")]
    if len(lines) != 1:
        raise RuntimeError(
            f"expected one JSON line for {image}, got {len(lines)}: {done.stdout[-400:]}"
        )
    return json.loads(lines[0]), wall


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


def line(name: str, sc: Score) -> str:
    ms = sorted(sc.ms)
    timing = (
        f"{ms[len(ms) // 2]:.0f} ms"
        if len(ms) == 1
        else f"median {ms[len(ms) // 2]:.0f} ms, max {ms[-1]:.0f} ms"
    )
    return (
        f"{name:<28} recall {pct(sc.found, sc.blocks):<14} no text {pct(sc.no_text, sc.boxes):<12} "
        f"clicks {pct(sc.clicks_ok, sc.clicks):<14} art clicks proposing {pct(sc.art_proposing, sc.art):<11} "
        f"{timing} (call {sum(sc.wall):.1f} s)"
    )


def evaluate(
    truth: dict,
    pages_dir: Path,
    command: list[str],
    scales: list[float],
    only: set[str],
    show_why: bool = False,
) -> dict:
    """Runs every page at every scale, printing as it goes; returns the scores by scale and page."""
    results: dict = {}
    pages = [p for p in truth["pages"] if not only or p["id"] in only]
    with tempfile.TemporaryDirectory(prefix="blocks-eval-") as tmp:
        for s in scales:
            print(f"== pages shown at {round(s * 100)}% ==")
            held, tuned = Score(), Score()
            results[s] = {}
            for page in pages:
                image = page_image(page, pages_dir, s, Path(tmp))
                points, _ = clicks(page, s)
                answer, wall = run_blocks(command, image, points)
                sc = score_page(page, s, answer)
                sc.wall = [wall]
                results[s][page["id"]] = sc
                (tuned if page.get("tuned") else held).add(sc)
                print(line(page["id"] + (" (tuned)" if page.get("tuned") else ""), sc), flush=True)
                if show_why:
                    print("\n".join(why(page, s, answer)))
            # apart: a page looked at while tuning is never reported as held out
            if tuned.blocks:
                print(line("TUNED", tuned))
            if held.blocks:
                print(line("HELD OUT", held))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--pages",
        type=Path,
        default=DEFAULT_PAGES,
        help="folder of the page images (default %(default)s)",
    )
    parser.add_argument("--truth", type=Path, default=HERE / "truth.json")
    parser.add_argument(
        "--command",
        help="the blocks command to run, e.g. 'hayai blocks' (default: this checkout's)",
    )
    parser.add_argument(
        "--scales", default="1,0.6", help="comma-separated scales (default %(default)s)"
    )
    parser.add_argument("--only", nargs="*", default=[], help="page ids to run (default all)")
    parser.add_argument(
        "--why",
        action="store_true",
        help="list each missed block and each box on no text (a page tuned on what it shows is marked tuned)",
    )
    args = parser.parse_args(argv)
    truth = json.loads(args.truth.read_text(encoding="utf-8"))
    command = shlex.split(args.command) if args.command else [*HAYAI, "blocks"]
    scales = [float(v) for v in args.scales.split(",")]
    try:
        evaluate(truth, args.pages.expanduser(), command, scales, set(args.only), args.why)
    except (FileNotFoundError, RuntimeError, ValueError) as exc:
        print(f"evaluate: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
