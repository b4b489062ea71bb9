"""Pages for the text block tests: the five real scans with their truth (tests/data/pages), the
issue's match rule, and pages rendered here with the Noto CJK font that `.ci/run` installs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"
SCORED = ("speech", "narration", "caption")  # `note`s are not scored (tests/data/README.md)
NOTO = "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"
NOTO_REGULAR = NOTO.replace("Bold", "Regular")
needs_noto = pytest.mark.skipif(
    not Path(NOTO).is_file(), reason="needs fonts-noto-cjk (installed by .ci/run)"
)


def truth() -> dict:
    """Each scan's truth: blocks as [x, y, w, h], art clicks."""
    return json.loads((PAGES / "blocks.json").read_text(encoding="utf-8"))["pages"]


def matches(box, block) -> bool:
    """The issue's rule: a box (x0, y0, x1, y1) matches a truth block (x, y, w, h) when it covers
    at least 70% of it and is at most twice its area."""
    x, y, w, h = block
    inside_w = min(box[2], x + w) - max(box[0], x)
    inside_h = min(box[3], y + h) - max(box[1], y)
    covered = max(0, inside_w) * max(0, inside_h) / (w * h)
    return covered >= 0.7 and (box[2] - box[0]) * (box[3] - box[1]) <= 2 * w * h


def middle(block) -> tuple[int, int]:
    x, y, w, h = block
    return x + w // 2, y + h // 2


def balloon_page(balloons, size=(900, 700), letter=26):
    """A white page of elliptic balloons, each holding columns of text set right to left.
    `balloons`: ((x0, y0, x1, y1), columns, top) each; returns the page and, per balloon, the box
    around its letters' ink (x0, y0, x1, y1, x1 and y1 exclusive)."""
    import numpy as np

    font = ImageFont.truetype(NOTO_REGULAR, letter)
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    inks = []
    for (x0, y0, x1, y1), columns, top in balloons:
        draw.ellipse((x0, y0, x1, y1), fill=255, outline=0, width=3)
        text = Image.new("L", size, 255)  # this balloon's letters alone, for their ink's box
        pitch = round(letter * 1.3)
        right = (x0 + x1) // 2 + (len(columns) - 1) * pitch // 2
        for i, column in enumerate(columns):
            for j, ch in enumerate(column):
                at = (right - i * pitch - letter // 2, top + j * letter)
                for target in (draw, ImageDraw.Draw(text)):
                    target.text(at, ch, font=font, fill=0)
        ys, xs = np.nonzero(np.asarray(text) < 128)
        inks.append((int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1))
    return image, inks


def marks_page():
    """A page of two panels and balloons holding punctuation alone: "！", "？", "…", "！！"
    (set in a column) and "！"; returns the page and each balloon's box."""
    font = ImageFont.truetype(NOTO, 36)
    image = Image.new("L", (900, 1200), 255)
    draw = ImageDraw.Draw(image)
    for panel in ((20, 20, 880, 580), (20, 600, 880, 1180)):
        draw.rectangle(panel, outline=0, width=4)
    spots = (
        ("！", (90, 80, 190, 230)),
        ("？", (620, 140, 740, 300)),
        ("…", (330, 380, 430, 540)),
        ("！！", (560, 700, 700, 900)),
        ("！", (150, 880, 240, 1010)),
    )
    for mark, (x0, y0, x1, y1) in spots:
        draw.ellipse((x0, y0, x1, y1), fill=255, outline=0, width=3)
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        for i, ch in enumerate(mark):
            draw.text((cx - 18, cy - 18 - 18 * (len(mark) - 1) + 36 * i), ch, font=font, fill=0)
    return image, [box for _, box in spots]
