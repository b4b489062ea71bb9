"""The rules that join the detector's lines into blocks (app/blocks/grouping.py) and find lone
punctuation (app/blocks/marks.py), each on a page drawn here with the lines given as the detector
gives them (a few px around each column's letters), so that each rule is seen without the
detector's own variations."""

from __future__ import annotations

import numpy as np
from blocks_pages import NOTO_REGULAR, needs_noto
from PIL import Image, ImageDraw, ImageFont

from app.blocks.grouping import group, homes, paper_levels
from app.blocks.marks import lone_marks
from app.blocks.params import PARAMS

Box = tuple[int, int, int, int]


def _ink(image: Image.Image) -> Box:
    ys, xs = np.nonzero(np.asarray(image.convert("L")) < 195)  # the finder's ink: 60 off white
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def _column(page: Image.Image, x: int, y: int, text: str, size: int, **stroke) -> Box:
    """Draws a column of letters with its top left at (x, y); returns its letters' ink box."""
    font = ImageFont.truetype(NOTO_REGULAR, size)
    alone = Image.new("L", page.size, 255)
    for target in (page, alone):
        draw = ImageDraw.Draw(target)
        for i, ch in enumerate(text):
            draw.text((x, y + i * size), ch, font=font, fill=0, **stroke)
    return _ink(alone)


def _detected(ink: Box, pad: int = 3) -> Box:
    """A line as the detector boxes it: a few px around its letters."""
    return ink[0] - pad, ink[1] - pad, ink[2] + pad, ink[3] + pad


def _gray(page: Image.Image) -> np.ndarray:
    return np.asarray(page.convert("L"))


@needs_noto
def test_a_column_set_lower_beside_the_first_is_one_block():
    """An aside whose second column starts a letter and more below the first, close beside it:
    one piece (they stand closer than two balloons' texts ever do)."""
    page = Image.new("L", (400, 400), 255)
    first = _column(page, 200, 60, "きょうはもう", 24)
    second = _column(page, 200 - 27, 60 + 40, "やすんでてね", 24)  # starts, ends 1.7 lower
    (block,) = group([_detected(first), _detected(second)], _gray(page))
    assert block.vertical and len(block.lines) == 2


@needs_noto
def test_columns_outlined_in_white_on_tone_are_one_block():
    """Narration outlined in white on a screen tone: each column's white halo is a paper of its
    own, yet columns this close are one block."""
    page = Image.new("L", (400, 500), 255)
    tone = np.full((500, 400), 100, np.uint8)
    tone[::3, ::3] = 30  # a dot screen
    page.paste(Image.fromarray(tone), (0, 0))
    halo = {"stroke_width": 6, "stroke_fill": 255}
    right = _column(page, 220, 60, "ろうでかため", 36, **halo)
    left = _column(page, 220 - 38, 60, "てある", 36, **halo)
    lines = [_detected(right), _detected(left)]
    gray = _gray(page)
    levels = paper_levels(gray, lines)
    assert len(set(homes(gray, lines, levels, PARAMS)[0])) == 2  # each halo its own paper
    (block,) = group(lines, gray)
    assert block.vertical and len(block.lines) == 2


@needs_noto
def test_ruby_beside_a_title_joins_it():
    """Ruby, less than half the size of the title's letters, set close beside two of them."""
    page = Image.new("L", (400, 400), 255)
    title = _column(page, 150, 60, "亡霊葬儀", 48)
    ruby = _column(page, title[2] + 3, 66, "ぼうれい", 20)
    found = group([_detected(title), _detected(ruby)], _gray(page))
    assert len(found) == 1
    assert found[0].box[0] <= title[0] and found[0].box[2] >= ruby[2]


@needs_noto
def test_two_balloons_in_one_white_shown_small_stay_two_blocks():
    """Small letters (a page shown at 60%): two balloons' texts in one white area, 1.6 letters
    apart, their own columns a third of a letter apart: two blocks. Gaps are measured in the
    letters' own size, whatever the margins."""
    page = Image.new("L", (300, 200), 255)
    size = 11
    xs = [200, 186, 172, 144, 130]  # three columns, 17 px of white, two columns
    inks = [_column(page, x, 40, "あいうえおかき", size) for x in xs]
    found = group([_detected(ink, 4) for ink in inks], _gray(page))
    assert sorted(len(b.lines) for b in found) == [2, 3]


@needs_noto
def test_small_letters_get_a_small_margin():
    """A column of 10 px letters: its box stays within a few px of its letters, under twice
    their area (4 px each side made it nearly three times)."""
    page = Image.new("L", (200, 200), 255)
    a = _column(page, 100, 50, "えっ？", 10)
    b = _column(page, 60, 50, "ほんとう", 10)
    c = _column(page, 30, 50, "そうです", 10)
    found = group([_detected(ink, 5) for ink in (a, b, c)], _gray(page))
    (block,) = [f for f in found if f.box[0] > 90]
    assert all(abs(u - v) <= 3 for u, v in zip(block.box, a)), (block.box, a)
    x0, y0, x1, y1 = block.box
    assert (x1 - x0) * (y1 - y0) <= 2 * (a[2] - a[0]) * (a[3] - a[1])  # the rule


@needs_noto
def test_a_star_on_the_open_page_is_no_block_and_a_letter_in_a_balloon_is():
    """A drawn star beside a character, on the page's open white, is taken by the detector for a
    letter: alone and letter-shaped there, it is no block; a letter alone in a balloon is."""
    page = Image.new("L", (700, 500), 255)
    draw = ImageDraw.Draw(page)
    draw.ellipse((420, 80, 560, 260), outline=0, width=3)
    letter = _column(page, 472, 150, "私", 36)
    star = [(120 + 30 * np.cos(a), 300 + 30 * np.sin(a)) for a in np.linspace(0, 4 * np.pi, 6)]
    draw.line([(round(x), round(y)) for x, y in star], fill=0, width=3)
    star_box = (88, 268, 153, 333)
    columns = [_column(page, x, 60, "せりふです", 30) for x in (300, 260)]
    found = group([_detected(letter), star_box, *map(_detected, columns)], _gray(page))
    boxes = [b.box for b in found]
    assert not any(b[0] < 160 and b[1] > 250 for b in boxes), boxes  # no star
    assert any(b[0] <= letter[0] and b[2] >= letter[2] for b in boxes), boxes  # the letter


@needs_noto
def test_dots_alone_in_a_balloon_are_as_wide_as_a_letter():
    """A balloon of "⋮" alone among balloons of 24 px letters: the dots sit in the middle of
    letter cells, so the block is about a letter wide (the truth's boxes are drawn so)."""
    page = Image.new("L", (600, 400), 255)
    draw = ImageDraw.Draw(page)
    draw.ellipse((440, 60, 540, 260), outline=0, width=3)
    dots = [(488, 120 + 14 * i, 494, 126 + 14 * i) for i in range(3)]
    for d in dots:
        draw.ellipse(d, fill=0)
    dots_ink = (488, 120, 495, 155)
    columns = [_column(page, x, 60, "ことばです", 24) for x in (300, 270, 120)]
    found = group([_detected(dots_ink), *map(_detected, columns)], _gray(page))
    (block,) = [b for b in found if b.box[0] > 400]
    assert 24 <= block.box[2] - block.box[0] <= 34, block
    assert block.box[0] < 488 and block.box[2] > 495


def test_a_grey_sparkle_on_a_light_wall_is_no_punctuation():
    """A light closed area holding an upright stroke with a dot under it, drawn in grey (a
    sparkle, a highlight): punctuation is printed in the letters' ink, so it is no "！"; the same
    marks in black are."""
    for ink, found in ((150, False), (0, True)):
        image = Image.new("L", (500, 500), 255)
        draw = ImageDraw.Draw(image)
        draw.rectangle((10, 10, 490, 490), outline=0, width=4)
        draw.ellipse((100, 80, 200, 220), fill=235, outline=0, width=3)
        draw.rectangle((145, 110, 155, 160), fill=ink)
        draw.ellipse((144, 172, 156, 184), fill=ink)
        assert bool(lone_marks(np.asarray(image), [])) == found, ink
