"""A drawn 1920×1080 screen with known text regions, for `hayai bench --blocks` and the tests.

Left half: a manga page — screentone panels, an elliptic bubble with vertical text, a rounded-box
bubble with horizontal text, a bubble whose click lands on a stroke. Right half: a game scene with a
dialogue box in a slightly graded colour and light text, above a photo-like noise area. Glyphs are
Japanese letters drawn with Noto Sans CJK where it is installed (the text detector looks for
letters), else random strokes in character cells; every region records where its ink is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

Rect = tuple[int, int, int, int]


@dataclass(frozen=True)
class Region:
    name: str
    click: tuple[int, int]  # where a user would click (image px): on the text
    ink: Rect | None  # bounding box of the text drawn there; None = nothing to read (photo)
    outline: Rect | None  # the bubble's or box's outer bounds


NOTO = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
LETTERS = (
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはまみむめもやよらりるれろわを日本語読書時間"
)


@lru_cache(maxsize=8)
def _font(size: int):
    return ImageFont.truetype(str(NOTO), size) if NOTO.is_file() else None


def _glyph(draw: ImageDraw.ImageDraw, x: int, y: int, size: int, fill, rng: random.Random) -> None:
    font = _font(size)
    if font is not None:
        draw.text((x, y), rng.choice(LETTERS), font=font, fill=fill)
        return
    width = max(2, size // 9)
    for _ in range(rng.randint(3, 5)):
        if rng.random() < 0.5:  # horizontal stroke
            yy = y + rng.randint(1, size - 2)
            x0, x1 = sorted(rng.sample(range(1, size - 1), 2))
            draw.line((x + x0, yy, x + x1, yy), fill=fill, width=width)
        else:
            xx = x + rng.randint(1, size - 2)
            y0, y1 = sorted(rng.sample(range(1, size - 1), 2))
            draw.line((xx, y + y0, xx, y + y1), fill=fill, width=width)


def _text(draw, x, y, lines, per_line, size, vertical, fill, rng) -> Rect:
    """Draw `lines` × `per_line` glyphs from (x, y); vertical = columns right to left. The box
    (x, y, w, h) of the ink drawn."""
    cell = int(size * 1.15)
    ink = Image.new("1", draw.im.size, 0)  # the same glyphs alone, for their ink's box
    marks = ImageDraw.Draw(ink)
    state = rng.getstate()
    for target, colour in ((draw, fill), (marks, 1)):
        rng.setstate(state)  # the same glyphs on both
        for i in range(lines):
            for j in range(per_line):
                if vertical:
                    gx, gy = x + (lines - 1 - i) * cell, y + j * cell
                else:
                    gx, gy = x + j * cell, y + i * cell
                _glyph(target, gx, gy, size, colour, rng)
    x0, y0, x1, y1 = ink.getbbox() or (x, y, x, y)
    return x0, y0, x1 - x0, y1 - y0


def _middle(box: Rect) -> tuple[int, int]:
    x, y, w, h = box
    return x + w // 2, y + h // 2


def _screentone(image: Image.Image, box: Rect, step: int = 6) -> None:
    draw = ImageDraw.Draw(image)
    x0, y0, w, h = box
    for yy in range(y0, y0 + h, step):
        for xx in range(x0 + (yy // step % 2) * step // 2, x0 + w, step):
            draw.ellipse((xx, yy, xx + 2, yy + 2), fill=(70, 70, 70))


def draw_screen(seed: int = 0) -> tuple[np.ndarray, list[Region]]:
    """(BGRA uint8 array 1080×1920×4, the regions on it)."""
    rng = random.Random(seed)
    image = Image.new("RGB", (1920, 1080), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    regions: list[Region] = []

    # --- the manga page: two panels with screentone, black panel borders
    for panel in ((40, 40, 880, 480), (40, 560, 880, 480)):
        _screentone(image, panel)
        x, y, w, h = panel
        draw.rectangle((x, y, x + w, y + h), outline=(0, 0, 0), width=4)

    # an ellipse with vertical text (3 columns of 5)
    ex, ey, ew, eh = 120, 90, 260, 340
    draw.ellipse((ex, ey, ex + ew, ey + eh), fill=(255, 255, 255), outline=(0, 0, 0), width=3)
    ink = _text(draw, ex + 78, ey + 70, 3, 5, 32, True, (0, 0, 0), rng)
    regions.append(Region("ellipse-vertical", _middle(ink), ink, (ex, ey, ew, eh)))

    # a rounded box with horizontal text (2 lines of 9) and a tail
    bx, by, bw, bh = 460, 150, 400, 150
    draw.polygon(
        [(bx + 60, by + bh - 5), (bx + 40, by + bh + 60), (bx + 110, by + bh - 5)],
        fill=(255, 255, 255),
        outline=(0, 0, 0),
        width=3,
    )
    draw.rounded_rectangle(
        (bx, by, bx + bw, by + bh), radius=40, fill=(255, 255, 255), outline=(0, 0, 0), width=3
    )
    # the tail's mouth
    draw.rectangle((bx + 65, by + bh - 4, bx + 100, by + bh), fill=(255, 255, 255))
    ink = _text(draw, bx + 40, by + 40, 2, 9, 30, False, (0, 0, 0), rng)
    regions.append(Region("roundbox-horizontal", _middle(ink), ink, (bx, by, bw, bh)))

    # an ellipse in the lower panel, clicked right on a stroke of its text
    ex, ey, ew, eh = 300, 620, 360, 230
    draw.ellipse((ex, ey, ex + ew, ey + eh), fill=(250, 250, 250), outline=(0, 0, 0), width=4)
    ink = _text(draw, ex + 90, ey + 60, 3, 6, 28, False, (0, 0, 0), rng)
    ix, iy, iw, ih = ink
    dark = np.asarray(image)[iy : iy + ih, ix : ix + iw].min(axis=2) < 60
    sy, sx = np.argwhere(dark)[len(np.argwhere(dark)) // 2]
    regions.append(Region("on-a-stroke", (ix + int(sx), iy + int(sy)), ink, (ex, ey, ew, eh)))

    # --- the game: a scene (gradient sky), a graded dialogue box with light text
    sky = np.linspace(0, 1, 1080 - 40)[:, None, None]
    scene = (np.array([80, 120, 200]) * (1 - sky) + np.array([200, 160, 120]) * sky).astype(
        np.uint8
    )
    image.paste(Image.fromarray(np.repeat(scene, 920, axis=1)), (980, 20))
    gx, gy, gw, gh = 1020, 760, 840, 260
    grade = np.linspace(0, 1, gw)[None, :, None]
    box = (np.array([24, 30, 88]) * (1 - grade) + np.array([44, 52, 120]) * grade).astype(np.uint8)
    image.paste(Image.fromarray(np.repeat(box, gh, axis=0)), (gx, gy))
    draw.rectangle((gx, gy, gx + gw, gy + gh), outline=(230, 230, 240), width=3)
    ink = _text(draw, gx + 50, gy + 50, 3, 20, 34, False, (245, 245, 245), rng)
    regions.append(Region("game-box", _middle(ink), ink, (gx, gy, gw, gh)))

    # a photo: smooth noise, nothing to read
    noise = np.random.default_rng(seed).integers(0, 256, (240, 400, 3), dtype=np.uint8)
    image.paste(Image.fromarray(noise), (1200, 200))
    regions.append(Region("photo", (1400, 320), None, None))

    rgb = np.asarray(image)
    bgra = np.empty((1080, 1920, 4), dtype=np.uint8)
    bgra[..., 0], bgra[..., 1], bgra[..., 2], bgra[..., 3] = (
        rgb[..., 2],
        rgb[..., 1],
        rgb[..., 0],
        255,
    )
    return bgra, regions
