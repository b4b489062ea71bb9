"""One click per bubble: the text region under a point of a frozen screenshot (numpy, no Qt).

`PageMap(bgra)` prepares a screen once (luminance, then the darkest and the lightest pixel of each
2×2 block, so a one-pixel outline survives the halving); `propose(x, y)` then finds, in a few
milliseconds, the region a click at (x, y) means:

1. a flood fill of the flat area around the point — everything within `TOLERANCE` of its luminance
   (a white speech bubble inside its black outline, or a game's flat or slightly graded dialogue
   box), 4-connected, over runs of pixels rather than pixels;
2. the ink it encloses (the pixels inside the fill's rows and columns that are not part of it:
   the text strokes, closed over by the fill);
3. the box around that ink plus a small margin, never outside the filled area.

A region is refused when the ink it encloses holds no letters (blocks.py finds none) and is no
punctuation alone (a "！", "？" or "…" by itself in the middle of a white balloon:
`blocks.punctuation`), when it is too small, too big (the page background, or more than an 800 px
square), full of holes (a fill that leaked through a photo or a screentone), without ink (an empty
box), or with ink everywhere (a solid pattern, unless punctuation alone: a column of close dots)
or up to every edge (a dot tone rather than text).

A point on a stroke tries the flat pixels around it. The text block finder (app/capture/blocks.py)
names the block of letters under the point too, and the two answers are put together: the region
when the block lies in it, the region holds one text (no second one `GROUP_GAP` letters off: two
balloons drawn into one white) and its ink is at most `FILL_OVER_BLOCK` times the block, or is
mostly that text with no drawing in it (at most `ONE_TEXT_OVER_BLOCK` times: the finder saw only
part of the balloon's letters), or when the block is `BLOCK_OVER_FILL` times the region (letters
joined with drawing around it); otherwise the block (free narration on the page, text beside art,
two balloons filled as one, a balloon with a drawing in it). Without a block at the point, the region
only when a third of its ink lies by text the finder sees in it, or its ink is punctuation alone.
Nothing sensible (a photo, noise,
the page background, an empty box) gives None and the caller says so: the user drags instead.

Letters set so close that they touch once pooled (blocks.packed_marks: tight columns with ruby
between them) are read on the image around them enlarged twice, where the pooling keeps every
full-resolution pixel apart: a click with no block at it near such marks proposes the block read
so (`_packed_blocks`).

A whole page (`whole_page`) reads what these clicks would select: the finder's blocks, each grown to
the balloon a click at its middle proposes, the balloons holding no block, clicked at their middle,
and outlined letters: long lines, or letters packed into one mark (blocks.outlined_blocks), and
over a block of their direction and letter size the line it left out; then the packed marks left,
each read enlarged, a block found so taking the place of the blocks of its kind whose middle it
holds.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from app.capture.blocks import (
    INK,
    LETTER_GAP,
    LINE_SIZE_RATIO,
    MAX_ASPECT,
    PAPER,
    REACH,
    SIZE_RATIO,
    Block,
    block_at,
    bounds,
    components,
    drawing_share,
    find_blocks,
    in_reading_order,
    letters_in,
    outlined_blocks,
    overlap,
    packed_marks,
    punctuation,
    row_runs,
    text_boxes,
    union,
)

# luminance steps (0-255) a pixel may differ from the clicked area's and still be "in"
TOLERANCE = 40
LEVEL_STEP = 8  # luminance steps: fill levels this close share one run table (the runs cost ~5 ms)
SCALE = 2  # the fill runs on 2×2 blocks (the pooling in PageMap is written for 2)
MIN_SIDE = 12  # half-res px: a region narrower or lower than 24 screen px is not a bubble
MAX_AREA_FRACTION = 0.4  # a fill over more of the screen than this is background, not a bubble
MAX_BALLOON = 400  # half-res px: ... or over the area of a square this wide (an 800 px balloon)
MIN_DENSITY = 0.5  # filled share of its bounding box; lower = a leak through tendrils (photo, tone)
MAX_INK_DENSITY = 0.6  # ink share of the ink's box; higher = a solid pattern, not text
MAX_INK_SPREAD = 0.85  # the ink's box over the region's: ink up to every edge = a tone, not text
MIN_INK = 6  # half-res px of enclosed ink: fewer means there is no text to read
EDGE_GAP = 4  # half-res px: ink closer than this to the fill's edge is the outline's, not text
# share of the block's box that must lie in the balloon's filled area for the balloon to stand for it
FILL_HOLDS_BLOCK = 0.9
FILL_OVER_BLOCK = (
    3  # ... and its ink box at most this many times the block's (drawing, two balloons)
)
ONE_TEXT_OVER_BLOCK = 6  # ... or this many when the balloon's ink is one text and no drawing
MAX_DRAWING = 0.1  # share of a balloon's ink in marks over twice a letter's size: more is drawing
# letters (the larger of two): text blocks this far apart in one filled region are two balloons'
# texts (two balloons drawn into one white: 2.25-2.5 on a page of another title); the columns of
# one balloon that the finder took apart stand closer (at most 1.8: 002b's ニャ～ beside おいで, the
# scans shown at 150%)
GROUP_GAP = 2.0
TEXT_SHARE = 0.3  # share of a region's ink by the text in it for the region to be a balloon
BLOCK_OVER_FILL = 2  # a block this many times the balloon's ink box took in drawing beyond it
BLOCK_MARGIN = 0.1  # of a block's font size: the margin around its letters in the proposed box
# punctuation alone in a balloon ("！", "…"): its ink spans at most this share of the balloon ...
LONE_SIDE = 0.7
LONE_MIDDLE = 0.25  # ... and its centre lies in the balloon's middle (not this share from a side)
SEED_RADII = (3, 6, 10, 15)  # half-res px around the click tried when the click is on a stroke
# a whole page: a block overlapping another by this share of the smaller is the same text; a balloon
# reaching this far into a block it does not hold is a panel's white around free text
OVERLAP = 0.3
# letters: marks beside a balloon's found lines make a line when this long ...
LINE_MIN = 0.5
ONE_MARK_LINE = 0.8  # ... or one mark this long (a し alone; a speck or a dakuten is shorter)
NEAR = 48  # half-res px around a seed: a level's first fill tries this window before the screen
# The finder's and the fill's sizes are pixels, written for letters of about 16-28 px. A page shown
# smaller (a volume fit to a laptop's screen) has letters of 10-15 px, whose strokes merge or break
# apart once pooled: a screen whose letters are under SMALL_LETTERS px (`screen_letter`) is searched
# enlarged until they are LETTER_PX, at most MAX_ENLARGE times and MAX_PIXELS in all, and not for
# less than MIN_ENLARGE (`ScaledPageMap`; measured in docs/reading.md, "Pages shown small"). A
# screen of larger letters is searched as it is: shrinking blurs thin strokes.
SMALL_LETTERS = 16
LETTER_PX = 21
MAX_ENLARGE = 2.0
MIN_ENLARGE = 1.2  # less is not worth a second map (a screen near MAX_PIXELS)
# ... but a click on a block the finder found at the screen's own size in letters LARGE_LETTERS times
# the screen's letter or more, at least LARGE_LINE of them (a game's dialogue on a screen of small
# menu text), is proposed on the screen as it is: enlarged, those letters pass the finder's sizes
# and its box breaks up. Fewer or smaller ones are often drawing, which enlarged proposes nothing.
LARGE_LETTERS = 2.5
LARGE_LINE = 3
MAX_PIXELS = 16_000_000  # a 4K screen's pixels twice over: the finder's arrays stay a few 100 MB
# Letters set so close that they touch once pooled (`blocks.packed_marks`: columns 3-6 px apart
# with ruby between them) are read on the image around them enlarged twice, where the pooling
# keeps each full-resolution pixel apart: PACKED_WINDOW image px each way around the point read
# (doubled while the block found runs to the edge), and for a click the marks PACKED_NEAR px
# each way around it (a click on the column's last letter, which touches none)
PACKED_SCALE = 2
PACKED_WINDOW = 120
PACKED_NEAR = 120


Rect = tuple[int, int, int, int]


@dataclass(frozen=True)
class Proposal:
    box: Rect  # x, y, w, h in the screen image's pixels: the text plus a margin
    region: Rect  # the filled area's bounding box (image px)
    kind: str  # "bubble" (light area, dark text) or "box" (dark area, light text)


def luminance(bgra: np.ndarray) -> np.ndarray:
    """uint8 luminance of an (h, w, 4) B, G, R, A array (QImage's RGB32 layout on little-endian)."""
    r = bgra[..., 2].astype(np.uint16) * np.uint16(77)
    r += bgra[..., 1] * np.uint16(150)
    r += bgra[..., 0] * np.uint16(29)
    return (r >> 8).astype(np.uint8)


def screen_letter(found: list[Block]) -> float | None:
    """A screen's letter size (px): the median of its blocks' font sizes, a block counted once per
    letter (`letters_in`), or None without blocks."""
    if not found:
        return None
    counts = [max(1, round(letters_in(b))) for b in found]
    return float(np.median(np.repeat([b.font_size for b in found], counts)))


def enlargement(letter: float | None, shape: tuple[int, ...]) -> float:
    """How much a screen of this shape and letter size (`screen_letter`) is enlarged to search it:
    1 unless its letters are small (`SMALL_LETTERS`)."""
    if letter is None or letter >= SMALL_LETTERS:
        return 1.0
    room = math.sqrt(MAX_PIXELS / (shape[0] * shape[1]))
    scale = min(MAX_ENLARGE, LETTER_PX / letter, room)
    return scale if scale >= MIN_ENLARGE else 1.0


def resized(gray: np.ndarray, scale: float) -> np.ndarray:
    """A luminance image resized by `scale` with Lanczos (Pillow's): sharper strokes than bilinear,
    which found 54 of the 64 test blocks on the scans shown at 60%, against 59."""
    from PIL import Image

    size = (round(gray.shape[1] * scale), round(gray.shape[0] * scale))
    return np.asarray(Image.fromarray(gray).resize(size, Image.Resampling.LANCZOS))


def unscaled(rect: Rect, scale: float, width: int, height: int) -> Rect:
    """A rect (x, y, w, h) of an image enlarged `scale` times, in the image's own pixels: widened
    to whole pixels, inside width × height."""
    x0, y0 = math.floor(rect[0] / scale), math.floor(rect[1] / scale)
    x1 = min(width, math.ceil((rect[0] + rect[2]) / scale))
    y1 = min(height, math.ceil((rect[1] + rect[3]) / scale))
    return x0, y0, x1 - x0, y1 - y0


def unscaled_block(
    block: Block, scale: float, width: int, height: int, x0: int = 0, y0: int = 0
) -> Block:
    """A block found on an image enlarged `scale` times, in that image's own pixels (`unscaled`,
    inside width × height), moved by (x0, y0) where the image is a crop of a bigger one."""

    def back(rect: Rect) -> Rect:
        rx, ry, rw, rh = unscaled(rect, scale, width, height)
        return rx + x0, ry + y0, rw, rh

    lines = tuple(back(r) for r in block.lines)
    return replace(block, box=back(block.box), lines=lines, font_size=block.font_size / scale)


class PageMap:
    """One screen prepared for proposals; build it once per frozen screenshot."""

    def __init__(self, bgra: np.ndarray):
        """bgra: an (h, w, 4) B, G, R, A screen, or an (h, w) luminance image (a page read whole)."""
        if not (bgra.ndim == 2 or (bgra.ndim == 3 and bgra.shape[2] >= 3)):
            raise ValueError(f"expected an (h, w, 4) BGRA image, got shape {bgra.shape}")
        self.height, self.width = bgra.shape[:2]
        h, w = self.height // SCALE * SCALE, self.width // SCALE * SCALE
        self.gray = bgra if bgra.ndim == 2 else luminance(bgra)
        lum = self.gray[:h, :w]
        a, b, c, d = lum[0::2, 0::2], lum[0::2, 1::2], lum[1::2, 0::2], lum[1::2, 1::2]
        self.lo = np.minimum(np.minimum(a, b), np.minimum(c, d))
        self.hi = np.maximum(np.maximum(a, b), np.maximum(c, d))
        self._runs: dict[int, _Runs] = {}  # by fill level: the seeds of one click often share it

    def propose(self, x: int, y: int) -> Proposal | None:
        """The text region a click at image pixel (x, y) selects, or None when there is none."""
        hh, hw = self.lo.shape
        cx, cy = int(x) // SCALE, int(y) // SCALE
        if not (0 <= cx < hw and 0 <= cy < hh):
            return None
        block = block_at(self.gray, int(x), int(y))  # the text block under the click (blocks.py)
        return self._chosen(block or self._packed_at(int(x), int(y)), cx, cy)

    def _packed_at(self, x: int, y: int) -> Block | None:
        """The block of letters packed into marks (`packed_marks`, `PACKED_NEAR` px around a click
        at image px (x, y)) that the click means, read enlarged (`_packed_blocks`); or None."""
        x0, y0 = max(0, x - PACKED_NEAR) // 2 * 2, max(0, y - PACKED_NEAR) // 2 * 2
        x1, y1 = min(self.width, x + PACKED_NEAR), min(self.height, y + PACKED_NEAR)
        cut = (x0 > 0, y0 > 0, x1 < self.width, y1 < self.height)
        marks = packed_marks(self.gray[y0:y1, x0:x1], cut=cut)
        if not marks:
            return None
        marks = [(mx + x0, my + y0, w, h) for mx, my, w, h in marks]
        return next(iter(_packed_blocks(self.gray, marks, at=(x, y))), None)

    def _chosen(self, block: Block | None, cx: int, cy: int) -> Proposal | None:
        """What a click at half-res (cx, cy) on `block` (None: no letters there) proposes: the
        area filled around it, or the block itself (see the module's text)."""
        hh, hw = self.lo.shape
        filled, lone = self._filled_proposal(cx, cy, hw, hh)
        if block is None:  # no letters at the click: a balloon only when text fills most of it
            if filled is not None and (lone or self._text_in(filled)[0]):
                return filled
            return None
        margin = max(4, round(block.font_size * BLOCK_MARGIN))
        box = block.grown(margin, self.width, self.height)
        kind = "box" if block.light_text else "bubble"
        own = Proposal(box, block.box, kind)
        if filled is None:
            return own
        area, fill_area = box[2] * box[3], filled.box[2] * filled.box[3]
        # the balloon holds all of its text, where the finder may miss a column: its ink box, when
        # the block lies in the balloon, the balloon holds no second text (two balloons drawn
        # into one white) and its ink is not much more than the block, or is mostly text with no
        # drawing (more is drawing in the balloon)
        inside = overlap(filled.region, block.box) >= FILL_HOLDS_BLOCK * block.box[2] * block.box[3]
        if inside and fill_area <= ONE_TEXT_OVER_BLOCK * area:  # (FILL_OVER_BLOCK is less)
            mostly, texts = self._text_in(filled)
            if texts <= 1 and (
                fill_area <= FILL_OVER_BLOCK * area
                or (mostly and self._drawing(filled, block.font_size) <= MAX_DRAWING)
            ):
                return filled
        # a block far bigger than the balloon it was clicked in took in drawing around it
        if area > BLOCK_OVER_FILL * fill_area:
            return filled
        return own

    def whole_page(self, found: list[Block]) -> list[Block]:
        """A whole page's text blocks, from the block finder's (`find_blocks`): each as a click at
        its middle on it proposes it (`_grown`: the balloon around a block that took only some of
        its columns), then the balloons whose text the finder did not see (`_balloons`), then
        outlined letters beside them (`outlined_blocks`: long lines, as a caption whose letters
        touch rules, or letters set so close that they touch once pooled); outlined letters over
        one block add the lines it left out (`_adds_a_line`); last, letters packed so close that
        they touch once pooled, read enlarged (`_with_packed`)."""
        blocks = self._grown(found)
        lettered = len(blocks)  # blocks of lines of letters (a balloon's one line is its box)
        balloons = self._balloons(blocks)
        blocks += balloons
        taken = [b.box for b in blocks]
        for extra in outlined_blocks(self.gray):
            under = [k for k, box in enumerate(taken) if _taken(extra.box, [box])]
            if not under:
                blocks.append(extra)
            elif len(under) == 1 and under[0] < lettered and _adds_a_line(blocks[under[0]], extra):
                k = under[0]
                both = union(blocks[k], extra)
                blocks[k] = replace(both, box=bounds((blocks[k].box, both.box)))
                taken[k] = blocks[k].box
        return self._with_packed(blocks, balloons)

    def _with_packed(self, blocks: list[Block], balloons: list[Block]) -> list[Block]:
        """The page's blocks and those of the letters packed so close that they touch once pooled
        outside them (`packed_marks`), read enlarged (`_packed_blocks`) and taken as a click takes
        a block (`_grown`). Such a block, read sharper, takes the place of the blocks of lines of
        its kind whose middle it holds (columns of its text the finder saw apart); it is left out
        where it overlaps any other (a balloon's box, another text)."""
        taken = [b.box for b in blocks]
        for mark in packed_marks(self.gray, taken):
            if any(overlap(mark, box) for box in taken):
                continue  # read with an earlier mark
            for block in self._grown(_packed_blocks(self.gray, [mark])):
                under = {k for k, box in enumerate(taken) if overlap(block.box, box)}
                if all(
                    blocks[k] not in balloons
                    and _same_kind(blocks[k], block)
                    and _holds_centre(block.box, taken[k])
                    for k in under
                ):
                    blocks = [b for k, b in enumerate(blocks) if k not in under] + [block]
                    taken = [b.box for b in blocks]
        return blocks

    def _grown(self, found: list[Block]) -> list[Block]:
        """The blocks, each grown to the balloon that a click at its middle proposes when that holds
        the block and more letters (a column the finder left out, a "！" at a column's end). Other
        blocks of its direction and colour wholly in that balloon join it (the rest of its
        columns); a balloon reaching into another block by more than `OVERLAP` of it is no
        balloon but a panel's white around free text, and the block stays."""
        out: list[Block | None] = list(found)
        for i, block in enumerate(found):
            if out[i] is None:
                continue  # joined an earlier block's balloon
            x, y, w, h = block.box
            proposal = self._chosen(block, (x + w // 2) // SCALE, (y + h // 2) // SCALE)
            if proposal is None or not _filled(proposal):
                continue  # nothing, or the block itself
            if overlap(proposal.box, block.box) < FILL_HOLDS_BLOCK * w * h:
                continue
            inside: dict[int, Block] = {}
            for j, other in enumerate(out):
                if j == i or other is None:
                    continue
                shared, area = overlap(proposal.box, other.box), other.box[2] * other.box[3]
                if shared >= FILL_HOLDS_BLOCK * area and _same_kind(other, block):
                    inside[j] = other
                elif shared > OVERLAP * area:
                    break
            else:
                held = [block, *inside.values()]
                lines = self._lines_in(proposal.box, held)
                if sorted(lines) == sorted(block.lines) and not inside:
                    continue
                box = bounds([*lines, *(b.box for b in held)])
                size = float(np.median([b.font_size for b in held]))
                out[i] = Block(box, block.vertical, lines, size, block.light_text)
                for j in inside:
                    out[j] = None
        return [b for b in out if b is not None]

    def _lines_in(self, box: Rect, held: list[Block]) -> tuple[Rect, ...]:
        """The lines of the letters in a balloon's box: the held blocks' lines, each lengthened by
        the letter-sized marks in line with it up to `LETTER_GAP` letters beyond its ends, and a
        line for each run of letter-sized marks beside them all (a column the finder left out),
        in reading order. A mark is letter-sized when it is at most `SIZE_RATIO` letters long, no
        thin line over a letter (hatching: `MAX_ASPECT` times longer than wide) and lies wholly in
        the box (the balloon's outline runs out of it). A run is a line when it is `LINE_MIN`
        letters long and more than one mark, or one mark of `ONE_MARK_LINE` letters (no speck, no
        lone dakuten)."""
        first = held[0]
        vertical, letter = first.vertical, float(np.median([b.font_size for b in held]))
        x, y, w, h = box
        crop = self.gray[y : y + h, x : x + w]
        ink = crop > 255 - INK if first.light_text else crop < INK
        across, along = ((0, 2), (1, 3)) if vertical else ((1, 3), (0, 2))
        lines = [[lx, ly, lx + lw, ly + lh] for b in held for lx, ly, lw, lh in b.lines]
        marks = []
        found = components(ink)
        if found is not None:
            for a0, b0, a1, b1 in zip(*(v.tolist() for v in found[:4])):
                if a0 == 0 or b0 == 0 or a1 == w or b1 == h:
                    continue  # the outline, or drawing the box cuts
                long, short = max(a1 - a0, b1 - b0), min(a1 - a0, b1 - b0)
                if long > SIZE_RATIO * letter or (long > MAX_ASPECT * short and long > letter):
                    continue  # drawing, or a hatching line
                marks.append([x + a0, y + b0, x + a1, y + b1])

        def gap(r, m):  # along the lines: how far a mark lies beyond a line's ends
            return max(r[along[0]] - m[along[1]], m[along[0]] - r[along[1]], 0)

        def in_line(r, m):  # at least half the mark's extent across lies in the line
            shared = min(m[across[1]], r[across[1]]) - max(m[across[0]], r[across[0]])
            return 2 * shared >= m[across[1]] - m[across[0]]

        # lengthen the lines mark by mark, nearest first (a column's end reaches the next letter)
        loose = []
        for mark in sorted(marks, key=lambda m: min(gap(r, m) for r in lines)):
            beside = [r for r in lines if in_line(r, mark)]
            if not beside:
                loose.append(mark)
                continue
            line = min(beside, key=lambda r: gap(r, mark))
            if gap(line, mark) <= LETTER_GAP * letter:
                _take(line, mark, along)
        # runs of loose marks in line, no gap along over `LETTER_GAP` letters: a run takes a mark,
        # or another run, in line with it (either way across: a narrow first mark) and that near
        runs = [(list(m), 1) for m in loose]  # (box, marks)
        joined = True
        while joined:
            joined = False
            for a, b in itertools.combinations(range(len(runs)), 2):
                (ra, na), (rb, nb) = runs[a], runs[b]
                if (in_line(ra, rb) or in_line(rb, ra)) and gap(ra, rb) <= LETTER_GAP * letter:
                    _take(ra, rb, (0, 1, 2, 3))
                    runs[a] = (ra, na + nb)
                    del runs[b]
                    joined = True
                    break
        for run, count in runs:
            length = run[along[1]] - run[along[0]]
            if length >= (LINE_MIN if count > 1 else ONE_MARK_LINE) * letter:
                lines.append(run)
        return in_reading_order([_rect(r) for r in lines], vertical)

    def _balloons(self, found: list[Block]) -> list[Block]:
        """The balloons whose text the block finder did not see (a lone "！", one letter, outlined
        letters), as blocks of one line, for reading a whole page: each light flat area of a
        balloon's size that holds no found block is clicked at its middle, and what is proposed
        there joins unless it overlaps a block already found. Its font size is its box's narrow
        side, as for one line of letters (so its token limit allows a letter per that much)."""
        areas = components(self.lo >= PAPER)
        if areas is None:
            return []
        x0, y0, x1, y1, area = (v * SCALE if i < 4 else v for i, v in enumerate(areas[:5]))
        w, h = x1 - x0, y1 - y0
        side = (w >= MIN_SIDE * SCALE) & (h >= MIN_SIDE * SCALE)
        side &= (w <= MAX_BALLOON * SCALE) & (h <= MAX_BALLOON * SCALE)
        candidates = side & (area * SCALE * SCALE >= MIN_DENSITY * w * h)
        taken = [b.box for b in found]
        out: list[Block] = []
        for i in np.flatnonzero(candidates).tolist():
            box = (int(x0[i]), int(y0[i]), int(w[i]), int(h[i]))
            if any(_holds_centre(box, t) for t in taken):
                continue  # its text is a block found already
            proposal = self.propose(box[0] + box[2] // 2, box[1] + box[3] // 2)
            if proposal is None:
                continue
            if _taken(proposal.box, taken):
                continue
            taken.append(proposal.box)
            pw, ph = proposal.box[2:]
            lines = (proposal.box,)
            out.append(
                Block(proposal.box, ph >= pw, lines, float(min(pw, ph)), proposal.kind == "box")
            )
        return out

    def _drawing(self, filled: Proposal, letter: float) -> float:
        """The share of a region's ink in marks more than twice the size of a letter."""
        if filled.kind != "bubble":
            return 0.0
        x, y, w, h = filled.box
        return drawing_share(self.gray[y : y + h, x : x + w], letter)

    def _text_in(self, filled: Proposal) -> tuple[bool, int]:
        """(whether most of the ink a region encloses lies by the text blocks the finder sees in it,
        each grown by its letter size; how many texts those are, blocks less than `GROUP_GAP`
        letters apart being one). Mostly text: a balloon whose letters the click missed, not a
        panel of drawing with a balloon somewhere, nor a shirt with its folds; two texts: two
        balloons filled as one."""
        x, y, w, h = filled.box
        crop = self.gray[y : y + h, x : x + w]
        ink = crop < 128 if filled.kind == "bubble" else crop >= 128
        near = np.zeros_like(ink)
        cut = (x > 0, y > 0, x + w < self.width, y + h < self.height)
        found = text_boxes(crop, cut)
        for (tx, ty, tw, th), size in found:
            m = int(size)
            near[max(0, ty - m) : ty + th + m, max(0, tx - m) : tx + tw + m] = True
        mostly = int(np.count_nonzero(ink & near)) >= TEXT_SHARE * int(np.count_nonzero(ink))
        return mostly, _groups(found)

    def _filled_proposal(self, cx: int, cy: int, hw: int, hh: int) -> tuple[Proposal | None, bool]:
        """The region filled around half-res (cx, cy) that holds text, or None; and whether its
        text is punctuation alone (a "！" in its balloon, which the finder has no letters for)."""
        tried: list[tuple[np.ndarray, int, int]] = []  # (filled mask, x0, y0) already rejected
        for sx, sy in _seeds(cx, cy, hw, hh):
            lo, hi = int(self.lo[sy, sx]), int(self.hi[sy, sx])
            if hi - lo > TOLERANCE // 2:  # a stroke or an edge: not the inside of anything
                continue
            if any(_inside(m, x0, y0, sx, sy) for m, x0, y0 in tried):
                continue
            # the fill's level to a step of LEVEL_STEP: seeds (and clicks) on one area share its runs
            level = (lo + hi) // 2 // LEVEL_STEP * LEVEL_STEP + LEVEL_STEP // 2
            found = self._region(sx, sy, level)
            if found is None:
                continue
            filled, x0, y0, proposal, lone = found
            if proposal is not None and (lone or _holds_text(self.gray, proposal.box)):
                return proposal, lone
            tried.append((filled, x0, y0))
        return None, False

    def _region(self, sx: int, sy: int, level: int):
        """Fill from (sx, sy); (mask, x0, y0, Proposal or None, punctuation alone), or None when
        the fill is too big."""
        hh, hw = self.lo.shape
        max_area = int(min(MAX_AREA_FRACTION * hh * hw, MAX_BALLOON * MAX_BALLOON))
        picked = self._fill(sx, sy, level, max_area)
        if picked is None:
            return None
        rows, starts, ends = picked
        x0, x1 = int(starts.min()), int(ends.max())
        y0, y1 = int(rows.min()), int(rows.max()) + 1
        filled = np.zeros((y1 - y0, x1 - x0), dtype=bool)
        for r, s, e in zip((rows - y0).tolist(), (starts - x0).tolist(), (ends - x0).tolist()):
            filled[r, s:e] = True
        rw, rh = x1 - x0, y1 - y0
        area = int((ends - starts).sum())
        if rw < MIN_SIDE or rh < MIN_SIDE or area < MIN_DENSITY * rw * rh:
            return filled, x0, y0, None, False
        ink = _enclosed(filled)
        if int(ink.sum()) < MIN_INK:
            return filled, x0, y0, None, False
        ys = np.flatnonzero(ink.any(axis=1))
        xs = np.flatnonzero(ink.any(axis=0))
        tx0, tx1 = x0 + int(xs[0]), x0 + int(xs[-1]) + 1
        ty0, ty1 = y0 + int(ys[0]), y0 + int(ys[-1]) + 1
        ink_area = (tx1 - tx0) * (ty1 - ty0)
        # punctuation alone ("！", "…") is a few dots and a bar: dense in its own narrow box; it
        # stands in a white balloon (in grey, a stroke and a speck are fur or a fold)
        lone = level >= PAPER and _alone_in(ink, tx0 - x0, ty0 - y0, tx1 - x0, ty1 - y0)
        dense = int(ink.sum()) > MAX_INK_DENSITY * ink_area and not lone
        if dense or ink_area > MAX_INK_SPREAD * rw * rh:
            return filled, x0, y0, None, False
        margin = 2 + max(1, min(tx1 - tx0, ty1 - ty0) // 10)
        bx0, by0 = max(x0, tx0 - margin), max(y0, ty0 - margin)
        bx1, by1 = min(x1, tx1 + margin), min(y1, ty1 + margin)
        box = self._image_rect(bx0, by0, bx1, by1)
        region = self._image_rect(x0, y0, x1, y1)
        kind = "bubble" if level >= 128 else "box"
        return filled, x0, y0, Proposal(box, region, kind), lone

    def _fill(self, sx: int, sy: int, level: int, max_area: int):
        """(rows, starts, ends) of the runs filled from (sx, sy) at `level`, or None (off the level,
        or past `max_area`). Where the screen has no table of this level's runs yet, the fill runs
        first in a window of `NEAR` around the seed: seeds beside a stroke often land in a small
        area (a letter's counter, a gap in a tone) of a level no other seed has, and a table of a
        whole screen's runs costs 2-3 ms. An area that reaches the window's edge is filled again
        on the whole screen."""
        hh, hw = self.lo.shape
        if level not in self._runs:
            x0, y0 = max(0, sx - NEAR), max(0, sy - NEAR)
            x1, y1 = min(hw, sx + NEAR + 1), min(hh, sy + NEAR + 1)
            mask = self._level_mask(level, np.s_[y0:y1, x0:x1])
            if not mask[sy - y0, sx - x0]:
                return None
            picked = _Runs(mask).fill(sy - y0, sx - x0, max_area)
            if picked is not None:
                rows, starts, ends = picked
                edge = (
                    (x0 > 0 and int(starts.min()) == 0)
                    or (y0 > 0 and int(rows.min()) == 0)
                    or (x1 < hw and int(ends.max()) == x1 - x0)
                    or (y1 < hh and int(rows.max()) == y1 - y0 - 1)
                )
                if not edge:
                    return rows + y0, starts + x0, ends + x0
            if len(self._runs) >= 8:
                self._runs.clear()
            self._runs[level] = _Runs(self._level_mask(level, np.s_[:, :]))
        return self._runs[level].fill(sy, sx, max_area)

    def _level_mask(self, level: int, where) -> np.ndarray:
        """The half-res pixels within `TOLERANCE` of `level` (darkest and lightest of each 2×2)."""
        return (self.lo[where] >= level - TOLERANCE) & (self.hi[where] <= level + TOLERANCE)

    def _image_rect(self, x0: int, y0: int, x1: int, y1: int) -> Rect:
        left, top = x0 * SCALE, y0 * SCALE
        right, bottom = min(self.width, x1 * SCALE), min(self.height, y1 * SCALE)
        return left, top, right - left, bottom - top


def _packed_blocks(gray: np.ndarray, marks: list[Rect], at: tuple[int, int] | None = None):
    """The blocks of letters packed into the marks `marks` (`packed_marks`, image px boxes), read
    on the image around the first mark (or around a click at image px `at`) enlarged
    `PACKED_SCALE` times, `PACKED_WINDOW` px each way (doubled while a block runs to an edge that
    lies inside the image, up to `MAX_PIXELS` enlarged): the blocks found there (a click: the one
    `block_at` finds at it, within `REACH` letters of it) that hold half a mark or more, each with
    its lines' box."""
    h, w = gray.shape
    x, y = at or (marks[0][0] + marks[0][2] // 2, marks[0][1] + marks[0][3] // 2)
    reach = PACKED_WINDOW
    while True:
        x0, y0 = max(0, x - reach), max(0, y - reach)
        x1, y1 = min(w, x + reach), min(h, y + reach)
        out = [
            b
            for b in _enlarged_blocks(gray[y0:y1, x0:x1], x0, y0, None if at is None else (x, y))
            if any(2 * overlap(b.box, m) >= m[2] * m[3] for m in marks)
            # a click lies by the block's letters, not by its run-on only
            and (at is None or _within(x, y, b.grown(round(REACH * b.font_size), w, h)))
        ]
        # a block within a letter of a side that lies inside the image may go on past it
        cut = any(_near_inner_side(b.box, b.font_size, (x0, y0, x1, y1), w, h) for b in out)
        grown = min(w, x1 - x0 + 2 * reach) * min(h, y1 - y0 + 2 * reach) * PACKED_SCALE**2
        if not cut or grown > MAX_PIXELS:
            return out
        reach *= 2


def _enlarged_blocks(crop: np.ndarray, x0: int, y0: int, at: tuple[int, int] | None) -> list[Block]:
    """The blocks of a crop whose corner is image px (x0, y0), enlarged `PACKED_SCALE` times (all of
    them, or the one at image px `at`), in image px, each box its lines' (a run-on through drawing
    seen enlarged ran ぷよぷよ into a gecko's hand)."""
    s, (ch, cw) = PACKED_SCALE, crop.shape
    big = resized(crop, s)
    if at is None:
        found = find_blocks(big)
    else:
        found = [b for b in [block_at(big, (at[0] - x0) * s, (at[1] - y0) * s)] if b is not None]
    out = [unscaled_block(b, s, cw, ch, x0, y0) for b in found]
    return [replace(b, box=bounds(b.lines)) if b.lines else b for b in out]


def _near_inner_side(box: Rect, margin: float, crop, width: int, height: int) -> bool:
    """Whether a box lies within `margin` px of a side of `crop` (x0, y0, x1, y1) that lies inside
    the width × height image."""
    x, y, w, h = box
    x0, y0, x1, y1 = crop
    return (
        (x0 > 0 and x - x0 <= margin)
        or (y0 > 0 and y - y0 <= margin)
        or (x1 < width and x + w >= x1 - margin)
        or (y1 < height and y + h >= y1 - margin)
    )


def _holds_centre(outer: Rect, inner: Rect) -> bool:
    return _within(inner[0] + inner[2] / 2, inner[1] + inner[3] / 2, outer)


def _within(x: float, y: float, box: Rect) -> bool:
    """Whether the point (x, y) lies in the box (x, y, w, h)."""
    return box[0] <= x < box[0] + box[2] and box[1] <= y < box[1] + box[3]


def _taken(box: Rect, taken: list[Rect]) -> bool:
    """Whether a box overlaps one of `taken` by `OVERLAP` of the smaller of the two: the same text."""
    return any(overlap(box, t) > OVERLAP * min(box[2] * box[3], t[2] * t[3]) for t in taken)


def _same_kind(a: Block, b: Block) -> bool:
    """Whether two blocks run the same way in the same colour."""
    return (a.vertical, a.light_text) == (b.vertical, b.light_text)


def _adds_a_line(block: Block, extra: Block) -> bool:
    """Whether outlined letters found over a block are more of it: of its kind and letter size
    (`LINE_SIZE_RATIO`: no title over its credit line), with a line that overlaps none of its
    lines (a caption's last row whose letters touch once pooled, no line to the finder)."""
    small, big = sorted((block.font_size, extra.font_size))
    return (
        _same_kind(block, extra)
        and big <= LINE_SIZE_RATIO * small
        and any(not any(overlap(r, q) for q in block.lines) for r in extra.lines)
    )


def _filled(proposal: Proposal) -> bool:
    """Whether a proposal is a filled area (its region holds its box), not the block clicked (whose
    box is its letters, the region, and a margin)."""
    return overlap(proposal.region, proposal.box) == proposal.box[2] * proposal.box[3]


def _rect(corners) -> Rect:
    """x, y, w, h of a box given as x0, y0, x1, y1."""
    x0, y0, x1, y1 = corners
    return x0, y0, x1 - x0, y1 - y0


def _take(into: list[int], mark: list[int], along) -> None:
    """Widen the box x0, y0, x1, y1 `into` to hold `mark` on the sides `along` names (indices)."""
    for k in along:
        into[k] = min(into[k], mark[k]) if k < 2 else max(into[k], mark[k])


def _alone_in(ink: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> bool:
    """Whether a region's enclosed ink (its box x0..x1, y0..y1) is punctuation alone, small and in
    the middle of its balloon: a "！" in a balloon of its own (blocks.punctuation)."""
    h, w = ink.shape
    if x1 - x0 > LONE_SIDE * w or y1 - y0 > LONE_SIDE * h:
        return False
    cx, cy = (x0 + x1) / 2 / w, (y0 + y1) / 2 / h
    if not (LONE_MIDDLE <= cx <= 1 - LONE_MIDDLE and LONE_MIDDLE <= cy <= 1 - LONE_MIDDLE):
        return False
    return punctuation(ink[y0:y1, x0:x1])


def _holds_text(gray: np.ndarray, box: Rect) -> bool:
    """Whether the block finder sees letters in a filled region's ink box: a white shirt with its
    folds, or a window with its frame, is enclosed ink too, but not text."""
    x, y, w, h = box
    cut = (x > 0, y > 0, x + w < gray.shape[1], y + h < gray.shape[0])
    return bool(text_boxes(gray[y : y + h, x : x + w], cut))


def _groups(found: list[tuple[Rect, float]]) -> int:
    """How many groups the boxes make, boxes at most `GROUP_GAP` letters (the larger of two)
    apart being one."""
    boxes = [(x, y, x + w, y + h, size) for (x, y, w, h), size in found]
    labels = list(range(len(boxes)))
    for i, (a0, b0, a1, b1, sa) in enumerate(boxes):
        for j, (c0, d0, c1, d1, sb) in enumerate(boxes[:i]):
            if max(c0 - a1, a0 - c1, d0 - b1, b0 - d1) <= GROUP_GAP * max(sa, sb):
                old, new = labels[i], labels[j]
                labels = [new if label == old else label for label in labels]
    return len(set(labels))


def _seeds(cx: int, cy: int, w: int, h: int):
    yield cx, cy
    for r in SEED_RADII:
        for dx, dy in ((r, 0), (-r, 0), (0, r), (0, -r), (r, r), (-r, -r), (r, -r), (-r, r)):
            x, y = cx + dx, cy + dy
            if 0 <= x < w and 0 <= y < h:
                yield x, y


def _inside(filled: np.ndarray, x0: int, y0: int, x: int, y: int) -> bool:
    fy, fx = y - y0, x - x0
    return 0 <= fy < filled.shape[0] and 0 <= fx < filled.shape[1] and bool(filled[fy, fx])


def _enclosed(filled: np.ndarray) -> np.ndarray:
    """Pixels that are not filled but lie at least EDGE_GAP inside the fill's extent in their row
    and their column: the ink the fill encloses, without the outline's anti-aliasing or JPEG ringing
    just inside the outline."""
    h, w = filled.shape
    any_row, any_col = filled.any(axis=1), filled.any(axis=0)
    first_x = np.where(any_row, filled.argmax(axis=1), w)
    last_x = np.where(any_row, w - 1 - filled[:, ::-1].argmax(axis=1), -1)
    first_y = np.where(any_col, filled.argmax(axis=0), h)
    last_y = np.where(any_col, h - 1 - filled[::-1].argmax(axis=0), -1)
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    row_in = (xs >= first_x[:, None] + EDGE_GAP) & (xs <= last_x[:, None] - EDGE_GAP)
    col_in = (ys >= first_y[None, :] + EDGE_GAP) & (ys <= last_y[None, :] - EDGE_GAP)
    return row_in & col_in & ~filled


class _Runs:
    """The horizontal runs of True in a mask, for a 4-connected flood fill run by run."""

    def __init__(self, mask: np.ndarray):
        h = mask.shape[0]
        rows, starts, ends = row_runs(mask)
        self.rows, self.starts, self.ends = rows, starts, ends
        self.starts_list, self.ends_list = starts.tolist(), ends.tolist()
        self.row_ptr = np.searchsorted(rows, np.arange(h + 1)).tolist()
        self.h = h
        self.leaked: set[int] = set()  # runs of a component already found too big to be a bubble

    def fill(self, y: int, x: int, max_area: int):
        """(rows, starts, ends) of the runs connected to (x, y); None past `max_area` or off the mask."""
        starts, ends, ptr = self.starts_list, self.ends_list, self.row_ptr
        lo, hi = ptr[y], ptr[y + 1]
        k = bisect.bisect_right(ends, x, lo, hi)
        if k >= hi or starts[k] > x or k in self.leaked:
            return None
        seen = {k}
        stack = [(k, y)]
        area = 0
        while stack:
            k, r = stack.pop()
            s, e = starts[k], ends[k]
            area += e - s
            if area > max_area:  # the other seeds on this component need not fill it again
                self.leaked |= seen
                return None
            for nr in (r - 1, r + 1):
                if not 0 <= nr < self.h:
                    continue
                lo, hi = ptr[nr], ptr[nr + 1]
                j = bisect.bisect_right(ends, s, lo, hi)  # first run ending after s
                while j < hi and starts[j] < e:
                    if j not in seen:
                        seen.add(j)
                        stack.append((j, nr))
                    j += 1
        picked = np.fromiter(seen, dtype=np.int64, count=len(seen))
        return self.rows[picked], self.starts[picked], self.ends[picked]


class ScaledPageMap:
    """A screen (or a page read whole) searched at the size its letters need: as it is, or enlarged
    when its letters are small (`enlargement`). Clicks and answers are in the screen's own pixels.
    Building it runs the finder over the whole screen (70 ms at 1920×1080 on 2 cores, 340 ms at
    3840×2160): the selection builds it in the background and asks a plain `PageMap` until then."""

    def __init__(self, image: np.ndarray):
        """image: as `PageMap` takes it."""
        gray = image if image.ndim == 2 else luminance(image)
        self.height, self.width = gray.shape
        self.plain = PageMap(gray)
        self._found = find_blocks(gray)
        letter = screen_letter(self._found)
        self.scale = enlargement(letter, gray.shape)
        self.large = None if self.scale == 1.0 else PageMap(resized(gray, self.scale))
        self._large = [  # blocks of letters large as they are (used on an enlarged screen)
            b
            for b in self._found
            if b.font_size >= LARGE_LETTERS * (letter or 0.0) and letters_in(b) >= LARGE_LINE
        ]
        self._reach = [
            b.grown(round(REACH * b.font_size), self.width, self.height) for b in self._large
        ]

    def propose(self, x: int, y: int) -> Proposal | None:
        """What a click at the screen's pixel (x, y) selects (`PageMap.propose`), or None."""
        if self.large is None or any(_within(x, y, box) for box in self._reach):
            return self.plain.propose(x, y)
        s = self.scale
        proposal = self.large.propose(int(x * s), int(y * s))
        if proposal is None:
            return None
        return Proposal(self._back(proposal.box), self._back(proposal.region), proposal.kind)

    def whole_page(self) -> list[Block]:
        """The screen's text blocks (`PageMap.whole_page`), in its own pixels: those of the
        enlarged screen, and the blocks of large letters as the finder found them at its size."""
        if self.large is None:
            return self.plain.whole_page(self._found)
        enlarged = [
            unscaled_block(b, self.scale, self.width, self.height)
            for b in self.large.whole_page(find_blocks(self.large.gray))
        ]
        apart = [b for b in enlarged if not any(overlap(b.box, r) for r in self._reach)]
        return apart + self._large

    def _back(self, rect: Rect) -> Rect:
        return unscaled(rect, self.scale, self.width, self.height)
