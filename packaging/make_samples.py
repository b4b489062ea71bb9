"""Render the sample crops shipped in resources/samples/ (real Japanese text, Noto Sans CJK JP).

    python packaging/make_samples.py            # writes resources/samples/*.png

`hayai bench` reads sample_ja_horizontal.png by default and the README shows both, so the
crops look like what users box on screen: a subtitle-like line and a manga speech bubble.
Re-running gives the same pixels for the same font and Pillow version.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, features

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "resources" / "samples"

# Debian's fonts-noto-cjk; index 0 of the collection is the JP face (fc-list -f '%{index}').
FONT_CANDIDATES = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
]

HORIZONTAL_TEXT = "今日はいい天気ですね。"
VERTICAL_COLUMNS = ["ちょっと待って！", "どこへ行くの？"]  # read right to left


def find_font(explicit: str | None) -> str:
    for candidate in [explicit] if explicit else FONT_CANDIDATES:
        if candidate and Path(candidate).is_file():
            return candidate
    sys.exit("Noto Sans CJK JP not found: install fonts-noto-cjk or pass --font PATH")


def horizontal(font_path: str) -> Image.Image:
    """One dark line on a light background, ~40 px tall: a game or subtitle line."""
    font = ImageFont.truetype(font_path, 28, index=0)
    left, top, right, bottom = font.getbbox(HORIZONTAL_TEXT)
    pad_x, height = 10, 40
    img = Image.new("RGB", (right - left + 2 * pad_x, height), (250, 250, 247))
    draw = ImageDraw.Draw(img)
    y = (height - (bottom - top)) // 2 - top
    draw.text((pad_x - left, y), HORIZONTAL_TEXT, font=font, fill=(24, 24, 28))
    return img


def vertical(font_path: str) -> Image.Image:
    """A manga speech bubble: white ellipse, black outline, two top-to-bottom columns."""
    font = ImageFont.truetype(font_path, 26, index=0)
    # Raqm lays glyphs top to bottom with the `vert` feature (rotated 、。！ー, raised small kana).
    use_raqm = features.check("raqm")
    size = (200, 280)
    img = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(img)
    # A halftone-grey panel background behind the bubble, as in a scanned page.
    for y in range(0, size[1], 6):
        for x in range((y // 6) % 2 * 3, size[0], 6):
            draw.point((x, y), fill=(170, 170, 170))
    draw.ellipse((8, 10, size[0] - 8, size[1] - 10), fill="white", outline="black", width=3)
    column_step, x = 40, size[0] // 2 + 20 - 13
    for column in VERTICAL_COLUMNS:
        if use_raqm:
            draw.text((x, 48), column, font=font, fill="black", direction="ttb", features=["vert"])
        else:  # basic layout: one glyph per cell
            for i, ch in enumerate(column):
                draw.text((x, 48 + i * 28), ch, font=font, fill="black")
        x -= column_step
    return img


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--font", help="path to NotoSansCJK-Regular.ttc (default: the Debian location)"
    )
    parser.add_argument("--out", type=Path, default=SAMPLES, help="output folder")
    args = parser.parse_args(argv)
    font_path = find_font(args.font)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, image in [
        ("sample_ja_horizontal.png", horizontal(font_path)),
        ("sample_ja_vertical.png", vertical(font_path)),
    ]:
        # RGB, as a screen grab is: every consumer gets the mode it would get from a capture.
        image.save(args.out / name, optimize=True)
        print(f"{args.out / name}  {image.width}x{image.height}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
