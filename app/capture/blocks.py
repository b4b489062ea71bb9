"""Text blocks on a page or a screen (pure numpy, no Qt): every block of text, for one click (the
block under the pointer) and for reading a whole page at once.

A text block is letters in lines: marks of a letter's size, on clean paper, standing one after the
other in straight columns (or rows), the lines side by side. The finder works on the image at half
resolution, pooled so that a one-pixel stroke survives (the darkest of each 2×2 for dark ink, the
lightest for light ink):

1. ink: pixels darker than `INK` (dark text on light paper; a second pass reads light text on dark
   boxes, a game's dialogue box, from the inverted image);
2. marks: the 8-connected pieces of ink, found run by run, with their boxes;
3. letters: the marks of a letter's size (`LETTER_MIN`..`LETTER_MAX`), compact (`MAX_ASPECT`), neither
   a mesh of thin lines nor a blot (`MIN_FILL`..`MAX_FILL`, `MIN_STROKE`), on paper (`MAX_GRAY`).
   Balloon outlines, panel borders and long drawn lines are bigger or thinner and drop out here;
   screentone dots are smaller. The bigger marks are walls. A letter that touches a drawn line
   (speed lines, hatching) is part of a bigger mark: the full-resolution ink opened with a plus of
   five pixels loses lines up to two pixels thin and keeps the letters' thicker strokes, and the
   pieces of a bigger mark that are letters then are letters "parted" from the drawing;
4. lines: each letter is linked to the next one along a column (or a row): the nearest letter
   after it, centred on its axis (`ALIGN`; in a column also by each letter's extent with the
   pieces beside it that are no letters, は's stroke), of a like size (`SIZE_RATIO`; letters
   that touch along the line, 大猟 or 数年前, count as letters of their width: `STACKED`), at most
   `LETTER_GAP` letters on (or further, with a ー between them, a solid bar and no letter by
   itself: the gaps beside it together that far: `BAR_*`), with no wall fencing the gap off from
   side to side, when it is also that letter's nearest one before. A line of parted letters only
   is drawing by itself; a short line must look like letters by itself (`TEXT_FILL`, `TEXT_STROKE`);
5. blocks: lines of a like size (`LINE_SIZE_RATIO`) side by side (at most `LINE_GAP` letters apart,
   overlapping along by `SIDE_OVERLAP`) or one after the other in one column (a column the links
   broke), with no wall fencing them off (lines that overlap both ways need none), are one block;
   a line of parted letters that stands so beside a text line joins its block (a column over
   speed lines beside a clean one), while no more than half the block's letters are parted;
6. a block is text when its letters are many enough (`MIN_LETTERS`, or one big letter alone), most
   stand in lines (`MIN_IN_LINES`), fewer than half were parted from a drawing, letter-like
   (`TEXT_STROKE`, `TEXT_FILL`), alike in size (`SIZE_SPREAD`, touching letters by their width),
   on paper (`MIN_PAPER`), not crossed by drawn lines (`MAX_LINE_INK`), and, when short
   (`SHORT`; a mark of letters that touch counting as the letters it is long), alone in paper;
7. direction: steps 4–6 run for columns and for rows; each letter belongs where its closest
   neighbour is (the letters of a line stand closer than its lines: vertical text makes looser
   "rows" across its columns), and the block with the most letters at home in its lines takes them;
8. completion: the small marks the strict letter test left out that belong to a line join it:
   beside it (a ruby, a dakuten, a small ッ; `COMPLETE_ACROSS`) or beyond its ends within its width
   (a ー, a ！, the dots of …, a 」, and a letter after a ・ whose gap broke the line;
   `COMPLETE_ALONG`); blocks that then overlap are one;
9. run-on: each line runs on beyond its ends, letter by letter, through drawing its letters touch
   (さまに over hair strands, 今 on speed lines): while the next letter's cell of the line's band
   holds half a letter's ink more than the cells beside the band (`RUN_ON_*`); the block's box
   takes it in;
10. layout: a block's lines are the lines of letters step 4 linked, those in one column made one
   (a column the links broke), widened by the letters that stand in or against them (the stroke
   of は) and run on as far as the block's box did; its marks join the nearest; its font size is
   its letters' size: its lines' median width, or its letters' median size where that is more.

`punctuation(ink)` tells a balloon's lone "！", "？" or "…" (no letters to line up) from a pupil or
a stroke of drawing; the click (bubble.py) proposes such a balloon. `packed_marks(gray)` names the
marks that are letters set so close they touch once pooled (columns 3-6 px apart with ruby between
them: one mark over all three, an odd letter to the finder): of a letter's size, on paper, their own
ink at full resolution three or more pieces of a letter's shape and of one size, the mark at least
`PACKED_SIZE` times theirs; bubble.py reads the image around them enlarged twice.

`find_blocks(gray)` does the whole image; `block_at(gray, x, y)` reads only a window around a click
(a bigger one while the block runs on past its edge), so a click costs the same on any screen size.
When a line of the clicked block ends against ink the run-on could not tell from drawing, the click
also looks around the block at full resolution for letters with paper around them (`HALO`: marks
whose ring two pixels out is mostly paper: letters that touch a drawn line only once pooled to half
resolution, a は on a fur line, or letters outlined in white over hair or tone), black on white, and
runs the block's lines on through the lines those make (`OUTLINED_REACH`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

# luminance (0-255) below which a pooled pixel is ink; paper is ~230+, screentone ~120-200
INK = 110
PAPER = 200  # the lightest of a 2×2 at or above this is paper (half-res: white between strokes)
# half-res px: marks smaller than this on both sides are dots (tone, dakuten, noise). A coarse dot
# tone pools into clusters of dots 8 px across that line up like letters; the letters of text are
# 10 px and more (the smallest blocks on the test pages: 14 px), and ruby and small kana below that
# join their line by completion
LETTER_MIN = 5
LETTER_MAX = 56  # half-res px: bigger marks are outlines, borders, drawings (letters ≤ ~110 px)
MAX_ASPECT = 4  # a mark longer than this many times its width is a line (speed lines, hatching) or a ー (completed later)
MIN_STROKE = 1.5  # ink px per px of a mark's size below this is one thin line (hatching, a hair)
TEXT_STROKE = 1.7  # a block's letters carry at least this much ink per px of size (median) ...
TEXT_FILL = 0.33  # ... and fill this share of their boxes: drawn strokes are sparser than letters
# below this a mark is a mesh of thin lines (hatching, grass), or a ノ (completed later)
MIN_FILL = 0.2
MAX_FILL = 0.72  # ink share of a mark's box above this is a blot (an eye, hair), not a stroke
MAX_GRAY = 0.25  # share of a letter's surroundings that may be gray (tone, hatching): on paper
ALIGN = 0.3  # letters: the centres of two letters of a line lie this close across it (small kana sit off)
SIZE_RATIO = 2.0  # two letters of a line differ in size by at most this
LINE_SIZE_RATIO = 1.5  # the lines of one block differ in letter size (median) by at most this
# letters: the most space between two letters of a line (a dropped ー, a ・ between words)
LETTER_GAP = 1.2
# a letter at least this many times longer along a line than wide (up to `MAX_ASPECT`, where
# marks stop being letters) is two or more letters that touch (大猟; 数年前, small bold letters
# three at a time), each as wide as the mark: a letter's size in a line is its width
STACKED = (1.7, MAX_ASPECT)
OVERLAP = 0.3  # letters: two letters of a line may overlap this much along it (a ッ tucked under)
# a ー between two letters of a line (solid: `BAR_FILL` of its box inked; `BAR_ASPECT` times
# longer along the line than across, `BAR_LENGTH` letters long) bridges their gap: the gaps beside
# it together at most `LETTER_GAP` (ふーん's ふ and ん stand 1.4 letters apart across it)
BAR_FILL = 0.6
BAR_ASPECT = 2.5
BAR_LENGTH = (0.4, 1.2)
# letters: lines further apart than this belong to different blocks (the columns of one balloon
# stand 0.1-1.1 letters apart; an outline between two balloons is a wall whatever the gap)
LINE_GAP = 1.2
# lines side by side overlap along by at least this share of the shorter one (the columns of a
# balloon start at its top or stand about its middle; a column that starts where its neighbour
# ends is the next balloon's)
SIDE_OVERLAP = 0.5
# layout: a block's lines of letters whose centres across lie within this many letters of each
# other are one line (a column the links broke; a column's letters lie within `ALIGN` of each
# other, its neighbour's at least a letter and a gap away) ...
LINE_SPLIT = 0.5
LINE_WIDE = 1.5  # ... counting no letter wider than this across (two of neighbouring lines touch)
LINE_TOUCH = 0.2  # ... and widened by a letter alone this close beside one (the stroke of は)
MIN_LETTERS = 2  # a block of one letter must be big and alone in paper (`ALONE_MIN`)
SHORT = 3  # a block of fewer letters stands alone in paper: no other letter-sized mark close by
ALONE_MIN = 10  # half-res px: a single letter this big, in clean paper, is a block ("わ", "!")
MIN_IN_LINES = 0.5  # share of a block's letters that must stand in lines of two or more
SIZE_SPREAD = 0.7  # at least this share of a block's letters within 0.5×..2× of their median size
MIN_PAPER = 0.55  # share of a block's box (minus its letters) that must be paper
MAX_LINE_INK = 0.6  # share of a block's ink that may belong to non-letter marks (lines, outlines)
COMPLETE_ALONG = 0.9  # a block takes in small marks this many letters beyond its line ends ...
COMPLETE_ACROSS = 0.3  # ... and this far beside its lines (a ruby, a small ッ set off the column)
COMPLETE_STEPS = 3  # ... for at most this many letters: further is a drawing that touches the text
# a line runs on through drawing that its letters touch (さまに over hair strands, 今 on speed
# lines) while the next letter's cell of its band holds this share of a letter's ink more than the
# same cell beside the band (the drawing around it) ...
RUN_ON_INK = 0.5
RUN_ON_BLOT = 0.6  # ... and is not inked over this share (a mass of hair, a black area)
RUN_ON_STEPS = 4  # ... for at most this many letters
REACH = 0.3  # letters: a click this far beside a block's letters still means that block (more: fur, tone)
# outlined letters (dark, with paper around them at full resolution: a letter that touches a fur
# line only once pooled, or one outlined in white on tone or hair): the ring this many px out of a
# mark of ink is paper on this share of it at least (the JPEG greys a thin outline: 0.73-0.77 of
# みてみて's ring two px out on 000b's tone; around bits of tone, lines and hatching beside them at
# most 0.56) ...
HALO = 2
HALO_PAPER = 2 / 3
# ... and a packed line of them runs on through marks outlined on a dark ground (`_run_on_dark`):
# their ring one px beyond `HALO` is paper or the ground's ink on this share of it at least (000b's
# 〜〜 0.75, ♪ 1.0 below みてみて on black clothing; at `HALO` itself the halo's grey: ♪ 0.60)
DARK_HALO = 2 / 3
OUTLINED_REACH = 2  # ... looked for this many letters beyond the ends of a line that ends on ink
# ... and, on a whole page, a block of its own when its lines together hold this many letters (a
# caption whose thin letters touch the rules beside them); fewer are a face's eyes and glasses as
# often as text (on the test scans: 1-5 letters for 11 of 12 finds in the drawing, 8.5-12 for text)
OUTLINED_LINE = 6
# ... or when the finder took it for one letter (one mark at half resolution) that at full
# resolution is at least this many outlined pieces of one letter size, the mark `PACKED_SIZE` times
# their size or more: letters set so close that they touch once pooled (000b's みてみて on tone:
# five pieces of 12-23 px in one mark of 74; on the test scans' drawing, such a mark holds at most
# two pieces, or pieces as big as itself)
OUTLINED_PACKED = 3
PACKED_SIZE = 2.0
# share of dark pixels below which a window holds no dark box to read light text on
DARK_GROUND = 0.1
WINDOW = 240  # image px around a click that `block_at` reads (a 480×480 window holds a balloon)
# punctuation alone in a balloon ("！", "？", "…", "！？"): at most this many pieces ("……": six dots)
LONE_PIECES = 6
LONE_DOT = 0.4  # a piece at most this share of the ink's longer side is a dot (a "！"'s dot, "…")
LONE_STROKE = (
    0.3  # a stroke's ink is at most this share of its size squared: a bar or a hook, no blot
)
# a "！"'s or "？"'s dot lies on its stroke's axis (at most this share of the stroke's length off it)
# and beyond its end (at most one stroke's length on); a face's nose beside its mouth does not
LONE_AXIS = 0.35

Rect = tuple[int, int, int, int]


@dataclass(frozen=True)
class Block:
    box: Rect  # x, y, w, h in image px: the block's letters
    vertical: bool
    lines: tuple[Rect, ...]  # each column (vertical) or row (horizontal), in reading order
    font_size: float  # image px: its letters' size (its lines' median width, see `_layout`)
    light_text: bool  # light letters on a dark box (a game's dialogue box)

    def grown(self, margin: int, width: int, height: int) -> Rect:
        x, y, w, h = self.box
        x0, y0 = max(0, x - margin), max(0, y - margin)
        return x0, y0, min(width, x + w + margin) - x0, min(height, y + h + margin) - y0


def luminance(rgb: np.ndarray) -> np.ndarray:
    """uint8 luminance of an (h, w, 3+) R, G, B array, or a 2-D gray array as it is."""
    if rgb.ndim == 2:
        return rgb.astype(np.uint8, copy=False)
    r = rgb[..., 0].astype(np.uint16) * np.uint16(77)
    r += rgb[..., 1] * np.uint16(150)
    r += rgb[..., 2] * np.uint16(29)
    return (r >> 8).astype(np.uint8)


def find_blocks(gray: np.ndarray) -> list[Block]:
    """Every text block of a luminance image, in reading order (see `reading_order`)."""
    return reading_order([f.block(0, 0) for f in _found(gray)])


def block_at(gray: np.ndarray, x: int, y: int) -> Block | None:
    """The text block a click at image px (x, y) means, or None (art, tone, an empty area)."""
    h, w = gray.shape[:2]
    # the window starts on even pixels: its 2×2 pooling is the page's (the same marks and letters)
    x0, y0 = max(0, x - WINDOW) // 2 * 2, max(0, y - WINDOW) // 2 * 2
    x1, y1 = min(w, x + WINDOW), min(h, y + WINDOW)
    while True:
        cut = (x0 > 0, y0 > 0, x1 < w, y1 < h)  # the window's sides inside the image
        best = _nearest(_found(gray[y0:y1, x0:x1], cut), x - x0, y - y0)
        if best is None:
            return None
        # a block that runs into the window's edge (a letter from it) may go on past it (a long
        # narration column): read on that way
        bx0, by0, bx1, by1 = (2 * v for v in best.box)
        near, more = 4 * best.median + 4, 2 * WINDOW
        grown = (
            max(0, x0 - more) if bx0 <= near else x0,
            max(0, y0 - more) if by0 <= near else y0,
            min(w, x1 + more) if bx1 >= x1 - x0 - near else x1,
            min(h, y1 + more) if by1 >= y1 - y0 - near else y1,
        )
        if grown == (x0, y0, x1, y1):
            block = best.block(x0, y0)
            return _with_outlined(block, 2 * best.median, gray, x, y) if best.inked else block
        x0, y0, x1, y1 = grown


def _with_outlined(block: Block, letter: float, gray: np.ndarray, x: int, y: int) -> Block:
    """The block with its lines run on through outlined letters beyond their ends (a は on a fur
    line, apart from it at full resolution only; letters outlined in white over hair or tone):
    the lines of outlined letters found around it (at most `OUTLINED_REACH` letters, `letter`
    image px each, beyond it) that stand in its lines (their middle across inside one)."""
    v = block.vertical
    h, w = gray.shape[:2]
    bx, by, bw, bh = block.box
    mx, my = (letter / 2, OUTLINED_REACH * letter) if v else (OUTLINED_REACH * letter, letter / 2)
    x0, y0 = int(max(0, bx - mx)) // 2 * 2, int(max(0, by - my)) // 2 * 2
    x1, y1 = int(min(w, bx + bw + mx)), int(min(h, by + bh + my))
    cut = (x0 > 0, y0 > 0, x1 < w, y1 < h)
    found = _found(_outlined(luminance(gray[y0:y1, x0:x1])), cut)
    other = _nearest(found, min(max(x, x0), x1 - 1) - x0, min(max(y, y0), y1 - 1) - y0)
    if other is None or other.vertical != v:
        return block
    lo, hi = (by, by + bh) if v else (bx, bx + bw)
    for o in other.block(x0, y0, run_on=False).lines:  # its letters (its run-on: drawing)
        mid = o[1 - v] + o[3 - v] / 2  # across
        if any(line[1 - v] <= mid <= line[1 - v] + line[3 - v] for line in block.lines):
            lo, hi = min(lo, o[v]), max(hi, o[v] + o[v + 2])
    return replace(block, box=(bx, lo, bw, hi - lo) if v else (lo, by, hi - lo, bh))


def _outlined(gray: np.ndarray) -> np.ndarray:
    """A luminance image with only its outlined marks, black on white: the marks of its ink (at
    full resolution) of a letter's size whose ring `HALO` px out is mostly paper (`HALO_PAPER`;
    marks closer than that are one group)."""
    marks = _Marks(gray < INK)
    out = np.full(gray.shape, 255, dtype=np.uint8)
    if marks.empty:
        return out
    small = marks.paint((marks.size >= 2 * LETTER_MIN) & (marks.size <= 2 * LETTER_MAX), gray.shape)
    near = _dilated(small, HALO - 1)
    outer = _dilated(near, 1)
    groups = _Marks(outer)
    if groups.empty:
        return out
    ring = np.zeros((gray.shape[0], gray.shape[1] + 1), dtype=np.int32)
    ring[:, 1:] = (outer & ~near).cumsum(1)
    paper = np.zeros_like(ring)
    paper[:, 1:] = (outer & ~near & (gray >= PAPER)).cumsum(1)
    rows, s, e = groups.rows, groups.starts, groups.ends
    n = len(groups.size)
    total = np.bincount(groups.run_label, weights=ring[rows, e] - ring[rows, s], minlength=n)
    light = np.bincount(groups.run_label, weights=paper[rows, e] - paper[rows, s], minlength=n)
    out[groups.paint(light >= HALO_PAPER * np.maximum(total, 1), gray.shape) & small] = 0
    return out


def outlined_blocks(gray: np.ndarray) -> list[Block]:
    """The blocks of a whole page's outlined marks (`_outlined`) whose lines together hold at
    least `OUTLINED_LINE` letters, or that are letters packed into one mark (`_packed`, run on
    over a dark ground: `_run_on_dark`): text whose letters the finder cannot part from the lines
    they touch once pooled. Blocks of one direction that overlap are one (two finds of one line)."""
    outlined = _outlined(gray)
    out: list[tuple[Block, bool]] = []  # (block, whether packed letters are in it)
    for found in _found(outlined):
        block = found.block(0, 0)
        packed = _packed(block, outlined)
        if packed is not None:
            packed = _run_on_dark(packed, gray)
        block, is_packed = packed or block, packed is not None
        merged = True
        while merged:  # a union may now overlap another find
            merged = False
            for k, (other, other_packed) in enumerate(out):
                if other.vertical == block.vertical and overlap(other.box, block.box):
                    # a packed find's letter size is its pieces', where the other's may be a mark's
                    size = block.font_size if is_packed else other.font_size
                    block = replace(union(other, block), font_size=size)
                    is_packed, merged = is_packed or other_packed, True
                    del out[k]
                    break
        out.append((block, is_packed))
    return [b for b, is_packed in out if is_packed or letters_in(b) >= OUTLINED_LINE]


def _packed(block: Block, outlined: np.ndarray) -> Block | None:
    """The block of a find the finder took for one letter, a mark `PACKED_SIZE` times the size of
    its outlined pieces at full resolution or more (letters packed so close that they touch once
    pooled, `OUTLINED_PACKED`): one line the way it is long, its letters the pieces' median size;
    or None."""
    if len(block.lines) > 1 or letters_in(block) >= 1.5:  # not one letter, as the finder saw it
        return None
    x, y, w, h = block.box
    pieces = _Marks(outlined[y : y + h, x : x + w] < INK)
    if pieces.empty:
        return None
    # full resolution: twice the half-res size
    letter = _packed_letter(pieces, pieces.size >= 2 * LETTER_MIN, block.font_size)
    if letter is None:
        return None
    return replace(block, vertical=h >= w, font_size=letter)


def _run_on_dark(block: Block, gray: np.ndarray) -> Block:
    """A packed line of outlined letters (`_packed`) run on beyond its ends through the marks
    outlined on a dark ground there: letters outlined in white that go on over black (000b's
    〜〜♪ below みてみて), where the halo is one or two grey pixels, too thin to be paper all
    round. Such a mark is a full-resolution mark of ink whose ring one px beyond `HALO` is paper
    or other ink (the ground; `DARK_HALO` of it), at least `LETTER_MIN` px wide (no drawn line),
    at most `COMPLETE_STEPS` letters long, its middle across inside the line, starting within
    `COMPLETE_ALONG` letters of the line's end so far and within `COMPLETE_STEPS` letters of its
    first end."""
    v, letter = block.vertical, block.font_size
    h, w = gray.shape[:2]
    bx, by, bw, bh = block.box
    # the area looked at: where such a mark may lie (starting `COMPLETE_STEPS` letters on, as long
    # again), and `ring_px` more around it for its ring to be whole
    reach, ring_px = round(2 * COMPLETE_STEPS * letter), HALO + 1
    grow_x, grow_y = (ring_px, reach) if v else (reach, ring_px)
    x0, y0 = max(0, bx - grow_x - ring_px), max(0, by - grow_y - ring_px)
    x1, y1 = min(w, bx + bw + grow_x + ring_px), min(h, by + bh + grow_y + ring_px)
    g = luminance(gray[y0:y1, x0:x1])
    ink = g < INK
    marks = _Marks(ink)
    if marks.empty:
        return block
    along, across = (y0, x0) if v else (x0, y0)
    a0, a1, c0, c1 = (t + o for t, o in zip(marks.axes(v), (along, along, across, across)))
    lo, hi = (by, by + bh) if v else (bx, bx + bw)
    side0, side1 = (bx, bx + bw) if v else (by, by + bh)
    middle = (c0 + c1) / 2
    pick = ((a0 >= hi) | (a1 <= lo)) & (middle >= side0) & (middle <= side1)
    pick &= (marks.size >= 2 * LETTER_MIN) & (a1 - a0 <= COMPLETE_STEPS * letter)
    pick &= c1 - c0 >= LETTER_MIN
    # whole rings: no mark within `ring_px` of a side of the area that lies inside the image
    mx0, my0, mx1, my1 = marks.x0 + x0, marks.y0 + y0, marks.x1 + x0, marks.y1 + y0
    pick &= ((x0 == 0) | (mx0 >= x0 + ring_px)) & ((y0 == 0) | (my0 >= y0 + ring_px))
    pick &= ((x1 == w) | (mx1 <= x1 - ring_px)) & ((y1 == h) | (my1 <= y1 - ring_px))
    ends0 = lo, hi
    ground = (g >= PAPER) | ink
    own = marks.labelled(ink.shape)
    for k in sorted(
        np.flatnonzero(pick).tolist(), key=lambda k: max(a0[k] - ends0[1], ends0[0] - a1[k])
    ):
        after = a0[k] >= ends0[1]
        gap, beyond = (a0[k] - hi, a0[k] - ends0[1]) if after else (lo - a1[k], ends0[0] - a1[k])
        if gap > COMPLETE_ALONG * letter or beyond > COMPLETE_STEPS * letter:
            continue
        mine = own == k + 1
        ring = _dilated(mine, ring_px) & ~_dilated(mine, HALO)
        if np.count_nonzero(ring & ground) < DARK_HALO * np.count_nonzero(ring):
            continue
        lo, hi = (lo, max(hi, int(a1[k]))) if after else (min(lo, int(a0[k])), hi)
    if (lo, hi) == ends0:
        return block
    box = (bx, lo, bw, hi - lo) if v else (lo, by, hi - lo, bh)
    return replace(block, box=box, lines=(box,))


def _packed_letter(pieces: _Marks, keep, size: float) -> float | None:
    """The letter size of the pieces `keep` (a bool each) of one mark `size` px big, all at full
    resolution, when they are letters packed into it: at least `OUTLINED_PACKED` of them alike in
    size (within `SIZE_RATIO` of their median), the mark `PACKED_SIZE` times that or more; or None."""
    sizes = pieces.size[keep]
    if len(sizes) < OUTLINED_PACKED:
        return None
    letter = _median(sizes)
    alike = np.count_nonzero((sizes * SIZE_RATIO >= letter) & (sizes <= SIZE_RATIO * letter))
    if alike < OUTLINED_PACKED or size < PACKED_SIZE * letter:
        return None
    return letter


def packed_marks(gray: np.ndarray, taken=(), cut=(False, False, False, False)) -> list[Rect]:
    """The boxes (image px) of the marks outside the boxes `taken` that are letters set so close
    they touch once pooled (columns 3-6 px apart with ruby between them: one mark over all three):
    marks of a letter's size on paper whose own ink at full resolution is pieces of a letter's
    shape (`_shaped`) packed into them (`_packed_letter`). The finder took each for one odd letter;
    bubble.py reads the image around them enlarged. A mark a window's side inside the image cuts
    (`cut`: left, top, right, bottom) is of unknown size: none."""
    g = _even(gray)
    if g is None:
        return []
    lo, hi = _pooled(g)
    ink = lo < INK
    marks = _Marks(ink)
    if marks.empty:
        return []
    pick = (marks.size >= PACKED_SIZE * LETTER_MIN) & (marks.size <= LETTER_MAX)
    pick &= ~_cut(marks, ink.shape, cut)
    for x, y, bw, bh in taken:  # (half-res marks against image px boxes)
        pick &= ~(
            (2 * marks.x0 < x + bw)
            & (2 * marks.x1 > x)
            & (2 * marks.y0 < y + bh)
            & (2 * marks.y1 > y)
        )
    pick &= _on_paper(marks, ink, hi >= PAPER)
    if not pick.any():
        return []
    own = marks.labelled(ink.shape)
    out = []
    for k in np.flatnonzero(pick).tolist():
        x0, y0, x1, y1 = (int(v[k]) for v in (marks.x0, marks.y0, marks.x1, marks.y1))
        mine = (own[y0:y1, x0:x1] == k + 1).repeat(2, 0).repeat(2, 1)
        pieces = _Marks(mine & (g[2 * y0 : 2 * y1, 2 * x0 : 2 * x1] < INK))
        if pieces.empty:
            continue
        if _packed_letter(pieces, _shaped(pieces, 2), 2 * marks.size[k]) is not None:
            out.append((2 * x0, 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0)))
    return out


def letters_in(block: Block) -> float:
    """The finder's estimate of a block's letters: its lines' lengths over its font size (at least 1)."""
    length = sum(h if block.vertical else w for _, _, w, h in block.lines)
    return max(1.0, length / max(1.0, block.font_size))


def overlap(a: Rect, b: Rect) -> int:
    """The area two boxes (x, y, w, h) share."""
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, w) * max(0, h)


def bounds(rects) -> Rect:
    """The box (x, y, w, h) around boxes."""
    rects = list(rects)
    x0, y0 = min(r[0] for r in rects), min(r[1] for r in rects)
    x1, y1 = max(r[0] + r[2] for r in rects), max(r[1] + r[3] for r in rects)
    return x0, y0, x1 - x0, y1 - y0


def in_reading_order(lines, vertical: bool) -> tuple[Rect, ...]:
    """Lines (x, y, w, h) right to left for vertical text, top to bottom for horizontal."""
    return tuple(sorted(lines, key=(lambda r: -r[0]) if vertical else (lambda r: r[1])))


def union(a: Block, b: Block) -> Block:
    """One block of two finds of the same text: a line for each of their lines (lines that overlap
    made one), its box around them."""
    lines: list[Rect] = []
    for line in a.lines + b.lines:
        for k, kept in enumerate(lines):
            if overlap(kept, line):
                lines[k] = bounds((kept, line))
                break
        else:
            lines.append(line)
    return replace(a, box=bounds(lines), lines=in_reading_order(lines, a.vertical))


def _median(values) -> float:
    """The median of a few values, as np.median gives it, at a tenth of its cost (a click weighs
    over a hundred small blocks)."""
    ranked = np.sort(values)
    n = len(ranked)
    return float(ranked[(n - 1) // 2] + ranked[n // 2]) / 2


def _dilated(mask: np.ndarray, steps: int) -> np.ndarray:
    """A bool mask grown by `steps` px (3×3)."""
    for _ in range(steps):
        g = mask.copy()
        g[1:] |= mask[:-1]
        g[:-1] |= mask[1:]
        mask = g.copy()
        mask[:, 1:] |= g[:, :-1]
        mask[:, :-1] |= g[:, 1:]
    return mask


def _nearest(found: list[_Found], x: int, y: int) -> _Found | None:
    """The block a click at window px (x, y) means: the nearest within `REACH` of its letters; of
    two around the click, the smaller."""
    best, best_key = None, (0, 0)
    for f in found:
        rx0, ry0, rx1, ry1 = f.reach()  # most blocks are far: their run-on is not needed
        far = max(2 * rx0 - x, x - 2 * rx1, 2 * ry0 - y, y - 2 * ry1)
        if far > max(8, round(f.median * 2 * REACH)):
            continue
        bx, by = 2 * f.box[0], 2 * f.box[1]
        bw, bh = 2 * (f.box[2] - f.box[0]), 2 * (f.box[3] - f.box[1])
        reach = max(8, round(f.median * 2 * REACH))  # a click in the balloon next to the letters
        dx = max(bx - x, 0, x - (bx + bw))
        dy = max(by - y, 0, y - (by + bh))
        if dx <= reach and dy <= reach:
            key = (dx * dx + dy * dy, bw * bh)
            if best is None or key < best_key:
                best, best_key = f, key
    return best


def reading_order(blocks: list[Block]) -> list[Block]:
    """Right-to-left, top-to-bottom when most blocks are vertical (a Japanese page); left-to-right
    otherwise. Blocks whose tops lie within the first block's height form a row."""
    vertical = sum(b.vertical for b in blocks) * 2 >= len(blocks)
    rest = sorted(blocks, key=lambda b: b.box[1])
    ordered: list[Block] = []
    while rest:
        top = rest[0].box[1]
        limit = top + max(rest[0].box[3] // 2, 1)
        row = [b for b in rest if b.box[1] < limit]
        rest = [b for b in rest if b.box[1] >= limit]
        row.sort(key=lambda b: -(b.box[0] + b.box[2]) if vertical else b.box[0])
        ordered += row
    return ordered


def text_boxes(gray: np.ndarray, cut=(False, False, False, False)) -> list[tuple[Rect, float]]:
    """(box, letter size) in image px of every text block, without their layout (cheaper than
    `find_blocks`); `cut`: which sides (left, top, right, bottom) of a crop lie inside its image."""
    out = []
    for f in _found(gray, cut):
        x0, y0, x1, y1 = f.box
        out.append(((2 * x0, 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0)), 2 * f.median))
    return out


def punctuation(ink: np.ndarray) -> bool:
    """Whether an ink mask (a balloon's enclosed ink) is punctuation alone, a block that has no
    letters for the finder to line up: a "！" or "？" (an upright stroke with its dot on its axis,
    below its end), "！！" or "！？" (two of them), or "…" (dots in a straight row). A pupil (a
    blot), a mouth with its nose, a curl of hair (a stroke without a dot) are not."""
    found = components(ink)
    if found is None:
        return False
    x0, y0, x1, y1, area, run_label, runs = found
    n = len(area)
    if n > LONE_PIECES:
        return False
    size = np.maximum(x1 - x0, y1 - y0)
    longest = max(int(x1.max() - x0.min()), int(y1.max() - y0.min()))
    dots = size <= LONE_DOT * longest
    strokes = np.flatnonzero(~dots)
    centres = np.stack([(x0 + x1) / 2, (y0 + y1) / 2], axis=1)
    if not len(strokes):  # "…": three or more dots in a straight row
        return n >= 3 and _straight(centres)
    if len(strokes) > 2 or np.count_nonzero(dots) < len(strokes):
        return False
    if (area[strokes] > LONE_STROKE * size[strokes] ** 2).any():
        return False  # a blot: a pupil, a nostril
    rows, starts, ends = runs[:3]
    for k in strokes:  # each stroke stands upright with a dot of its own on its axis, below it
        axis, middle, half = _stroke_axis(rows, starts, ends, run_label == k)
        if abs(axis[1]) < abs(axis[0]):
            return False  # a "！" leans less than 45°: a lying stroke is a mouth, a brow
        axis = axis if axis[1] > 0 else -axis  # pointing down the page
        offset = centres[dots] - middle
        along = offset @ axis
        off = np.abs(offset @ np.array([-axis[1], axis[0]]))
        below = (along > half) & (along <= 3 * half) & (off <= LONE_AXIS * 2 * half)
        if not below.any():
            return False
    return True


def _straight(centres: np.ndarray) -> bool:
    """Whether points lie on one straight line, evenly enough (the dots of "…")."""
    d = centres - centres.mean(axis=0)
    _, sv, _ = np.linalg.svd(d, full_matrices=False)
    return bool(sv[1] <= LONE_AXIS * sv[0] / 2)


def _stroke_axis(rows, starts, ends, runs):
    """The unit direction of a stroke's pixels (their main axis), their centre, and half their
    length along it."""
    ys = np.repeat(rows[runs], (ends - starts)[runs]).astype(np.float64)
    lens = (ends - starts)[runs]
    xs = (np.repeat(starts[runs] - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())).astype(
        np.float64
    )
    pts = np.stack([xs, ys], axis=1)
    middle = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - middle, full_matrices=False)
    axis = vt[0]
    along = (pts - middle) @ axis
    return axis, middle, max(1.0, float(along.max() - along.min()) / 2)


def drawing_share(gray: np.ndarray, letter: float) -> float:
    """The share of a luminance crop's ink in marks more than twice `letter` (image px) in size:
    drawing, where a balloon's ink is all letters."""
    ink = _pooled(luminance(gray)[: gray.shape[0] // 2 * 2, : gray.shape[1] // 2 * 2])[0] < INK
    marks = _Marks(ink)
    if marks.empty:
        return 0.0
    big = marks.size > letter  # half-res px: twice the letter's size in image px
    return float(marks.area[big].sum() / marks.area.sum())


# --- the finder ------------------------------------------------------------------------------------


def _found(gray: np.ndarray, cut=(False, False, False, False)) -> list[_Found]:
    """The blocks of an image, or of a window of one whose sides `cut` (left, top, right, bottom)
    lie inside the image."""
    g = _even(gray)
    if g is None:
        return []
    lo, hi = _pooled(g)
    out = _pass(lo, hi, _pooled(_opened(g < INK))[1], cut, light_text=False)
    # light text on dark boxes: the same pass on the inverted image (its darkest becomes its
    # lightest), where there is dark ground enough to hold a box of it
    if np.count_nonzero(hi < 255 - PAPER) >= DARK_GROUND * hi.size:
        strokes = _pooled(_opened(g > 255 - INK))[1]
        out += _pass(255 - hi, 255 - lo, strokes, cut, light_text=True)
    return out


def _even(gray: np.ndarray) -> np.ndarray | None:
    """A luminance image cut to even sides for the 2×2 pooling, or None when too small to search."""
    gray = luminance(gray)
    h, w = gray.shape[0] // 2 * 2, gray.shape[1] // 2 * 2
    return gray[:h, :w] if h >= 8 and w >= 8 else None


def _pooled(g: np.ndarray):
    """The darkest and the lightest of each 2×2 (for a bool image: all and any)."""
    a, b, c, d = g[0::2, 0::2], g[0::2, 1::2], g[1::2, 0::2], g[1::2, 1::2]
    return np.minimum(np.minimum(a, b), np.minimum(c, d)), np.maximum(
        np.maximum(a, b), np.maximum(c, d)
    )


def _opened(ink: np.ndarray) -> np.ndarray:
    """The full-resolution ink covered by a plus of five ink pixels (an opening): drawn lines up to
    two pixels thin are gone, a letter's strokes (three and more) stay."""
    core = ink.copy()
    core[1:] &= ink[:-1]
    core[:-1] &= ink[1:]
    core[:, 1:] &= ink[:, :-1]
    core[:, :-1] &= ink[:, 1:]
    out = core.copy()
    out[1:] |= core[:-1]
    out[:-1] |= core[1:]
    out[:, 1:] |= core[:, :-1]
    out[:, :-1] |= core[:, 1:]
    return out


class _Marks:
    """The marks (8-connected pieces of ink) of a half-res image: boxes, ink, size, and their runs."""

    def __init__(self, ink: np.ndarray):
        found = components(ink)
        self.empty = found is None
        if found is None:
            return
        self.x0, self.y0, self.x1, self.y1, self.area, self.run_label, runs = found
        self.rows, self.starts, self.ends = runs[:3]
        self.size = np.maximum(self.x1 - self.x0, self.y1 - self.y0)
        self._bars: dict[bool, np.ndarray] = {}

    def add(self, other: _Marks, keep) -> None:
        """Take in the marks `keep` of another set, with their runs."""
        n = len(self.size)
        new = np.full(len(other.size), -1)
        new[keep] = n + np.arange(len(keep))
        for name in ("x0", "y0", "x1", "y1", "area", "size"):
            setattr(self, name, np.concatenate([getattr(self, name), getattr(other, name)[keep]]))
        self._bars.clear()
        runs = new[other.run_label] >= 0
        self.rows = np.concatenate([self.rows, other.rows[runs]])
        self.starts = np.concatenate([self.starts, other.starts[runs]])
        self.ends = np.concatenate([self.ends, other.ends[runs]])
        self.run_label = np.concatenate([self.run_label, new[other.run_label[runs]]])

    def paint(self, which, shape) -> np.ndarray:
        """The pixels of the marks where `which` (a bool per mark) holds."""
        hh, ww = shape
        runs = which[self.run_label]
        rows, size = self.rows[runs] * (ww + 1), hh * (ww + 1)
        edges = np.bincount(rows + self.starts[runs], minlength=size)
        edges -= np.bincount(rows + self.ends[runs], minlength=size)
        return edges.reshape(hh, ww + 1).cumsum(1)[:, :ww] > 0

    def labelled(self, shape) -> np.ndarray:
        """Each pixel's mark: its index + 1, 0 on no mark."""
        hh, ww = shape
        rows, size = self.rows * (ww + 1), hh * (ww + 1)
        label = self.run_label + 1.0
        edges = np.bincount(rows + self.starts, weights=label, minlength=size)
        edges -= np.bincount(rows + self.ends, weights=label, minlength=size)
        return edges.reshape(hh, ww + 1).cumsum(1)[:, :ww].round().astype(np.int64)

    def touching(self, vertical: bool) -> np.ndarray:
        """Which marks are letters that touch along a column (or a row): 大猟, 数年前, a mark
        `STACKED` letters long and one wide."""
        long, wide = self.extent(vertical)
        return (long >= STACKED[0] * wide) & (long <= STACKED[1] * wide) & (wide >= LETTER_MIN)

    def letter(self, vertical: bool) -> np.ndarray:
        """Each mark's letter size along a column (or a row): its size, or its width for letters
        that touch along it (`touching`)."""
        return np.where(self.touching(vertical), self.extent(vertical)[1], self.size)

    def extent(self, vertical: bool):
        """(along, across): each mark's length along a column (or a row), and its width across."""
        a0, a1, c0, c1 = self.axes(vertical)
        return a1 - a0, c1 - c0

    def bars(self, vertical: bool) -> np.ndarray:
        """The marks that are bars along a column (or a row), as a ー is: solid (`BAR_FILL` of
        their box inked), `BAR_ASPECT` times longer along the line than across; by where they
        start along it (kept per direction until `add` changes the marks)."""
        if vertical not in self._bars:
            long, wide = self.extent(vertical)
            bar = (long >= BAR_ASPECT * wide) & (self.area >= BAR_FILL * long * wide)
            bar &= self.size <= LETTER_MAX
            found = np.flatnonzero(bar)
            self._bars[vertical] = found[np.argsort(self.axes(vertical)[0][found], kind="stable")]
        return self._bars[vertical]

    def pieces(self, is_letter) -> tuple[np.ndarray, np.ndarray]:
        """(x0, x1) of each mark across a column, a letter's widened by its pieces: the marks
        one blank pixel from it across, alongside it (half the shorter's height), no letters, no
        bigger and no wider than it (は's left stroke, い's short one)."""
        n = len(self.size)
        # the runs of letter-sized marks by row and start (a parted letter's lie in its wall's)
        runs = np.flatnonzero(self.size[self.run_label] <= LETTER_MAX)
        runs = runs[np.lexsort((self.starts[runs], self.rows[runs]))]
        rows, starts, ends = self.rows[runs], self.starts[runs], self.ends[runs]
        label = self.run_label[runs].astype(np.int64)
        near = (rows[1:] == rows[:-1]) & (starts[1:] - ends[:-1] == 1)
        near &= label[1:] != label[:-1]
        pairs = np.unique(label[:-1][near] * n + label[1:][near])
        p, q = pairs // n, pairs % n
        shared = np.minimum(self.y1[p], self.y1[q]) - np.maximum(self.y0[p], self.y0[q])
        keep = shared >= 0.5 * np.minimum(self.y1[p] - self.y0[p], self.y1[q] - self.y0[q])
        p, q = np.concatenate([p[keep], q[keep]]), np.concatenate([q[keep], p[keep]])
        wide = self.x1 - self.x0
        piece = is_letter[p] & ~is_letter[q] & (self.size[q] <= self.size[p]) & (wide[q] <= wide[p])
        lo, hi = self.x0.copy(), self.x1.copy()
        np.minimum.at(lo, p[piece], self.x0[q[piece]])
        np.maximum.at(hi, p[piece], self.x1[q[piece]])
        return lo, hi

    def axes(self, vertical: bool):
        """(along0, along1, across0, across1): a column runs along y, a row along x."""
        if vertical:
            return self.y0, self.y1, self.x0, self.x1
        return self.x0, self.x1, self.y0, self.y1

    def box(self, members) -> Rect:
        return (
            int(self.x0[members].min()),
            int(self.y0[members].min()),
            int(self.x1[members].max()),
            int(self.y1[members].max()),
        )


def _pass(lo: np.ndarray, hi: np.ndarray, strokes: np.ndarray, sides, light_text: bool):
    ink = lo < INK
    paper = hi >= PAPER
    found = _marks_of(ink, paper, strokes, sides)
    if found is None:
        return []
    marks, is_letter, free, walls = found
    candidates, chains = _candidates(marks, is_letter, free, walls, ink, paper)
    done = _settle(candidates, marks, free)
    table = _integral(ink)
    return [
        _Found(v, members, seeds, marks, light_text, table, chains[v]) for v, members, seeds in done
    ]


def _marks_of(ink, paper, strokes, sides):
    """(marks, which are letters, how many are free marks (the rest are letters parted from a
    drawing), the walls), or None without letters. A mark cut by a window's side inside the image
    (`sides`: left, top, right, bottom) is of unknown size: no letter, a wall."""
    marks = _Marks(ink)
    if marks.empty:
        return None
    is_letter = _letters(marks, ink, paper)
    cut = _cut(marks, ink.shape, sides)
    is_letter &= ~cut
    free = len(marks.size)
    is_wall = (marks.size > LETTER_MAX) | cut
    # letters that touch a drawn line (speed lines, hatching, an outline) are parted from it where
    # the ink is opened (`strokes`): lines two pixels thin go, the letters' thicker strokes stay
    parts = _Marks(marks.paint(is_wall, ink.shape) & strokes)
    if not parts.empty:
        part_letters = np.flatnonzero(_letters(parts, ink, paper) & ~_cut(parts, ink.shape, sides))
        marks.add(parts, part_letters)
        is_letter = np.concatenate([is_letter, np.ones(len(part_letters), dtype=bool)])
    if not is_letter.any():
        return None
    is_wall = np.concatenate([is_wall, np.zeros(len(marks.size) - free, dtype=bool)])
    parted = np.arange(len(is_wall)) >= free
    walls = _Walls(marks.paint(is_wall, ink.shape) & ~marks.paint(parted, ink.shape))
    return marks, is_letter, free, walls


def _cut(marks: _Marks, shape, sides) -> np.ndarray:
    """Which marks touch a side of the window that lies inside the image (of unknown size)."""
    hh, ww = shape
    left, top, right, bottom = sides
    cut = (left & (marks.x0 == 0)) | (top & (marks.y0 == 0))
    return cut | (right & (marks.x1 == ww)) | (bottom & (marks.y1 == hh))


def _candidates(marks: _Marks, is_letter, free: int, walls: _Walls, ink, paper):
    """Every block of text the columns make and every one the rows make, the block with the most
    letters at home in its lines first: (vertical, members); and per direction each mark's line
    of two or more letters (an index, -1 for none)."""
    parted = np.arange(len(marks.size)) >= free
    closest, found, chains = {}, {}, {}
    for vertical in (True, False):
        lines, closest[vertical] = _lines(is_letter, marks, walls, vertical)
        found[vertical] = _groups(lines, marks, walls, parted, vertical)
        # each letter's line of two or more (its index), for the layout; -1: alone
        chains[vertical] = np.full(len(marks.size), -1)
        if lines:
            members, _, lens = _segments(lines)
            line_of = np.repeat(np.arange(len(lines)), lens)
            linked = lens[line_of] > 1
            chains[vertical][members[linked]] = line_of[linked]
    # a letter stands in one line: in a column when its neighbours there are closer than in a row
    # (vertical text makes "rows" across its columns too, their letters further apart)
    home = {True: closest[True] < closest[False], False: closest[False] < closest[True]}
    candidates = []
    for vertical in (True, False):
        kept, groups, drawn = found[vertical]
        for group in groups:
            members = np.concatenate([kept[k] for k in group])
            if len(members) < MIN_LETTERS and marks.size[members[0]] < ALONE_MIN:
                continue  # most groups: a mark alone, too small to be a letter alone
            if 2 * np.count_nonzero(parted[members]) >= len(members):
                continue  # text over drawing has some letters parted from it; drawing has most
            if not _is_text(members, [kept[k] for k in group], marks, ink, paper, vertical):
                continue
            votes = np.count_nonzero(home[vertical][members])
            against = np.count_nonzero(home[not vertical][members])
            more = np.unique(np.concatenate([members, *(drawn[k] for k in group if k in drawn)]))
            # no more letters parted from a drawing than free ones: a logo parted from its outline
            # beside a credit is not one block with it
            if np.count_nonzero(parted[more]) <= np.count_nonzero(~parted[more]):
                members = more
            candidates.append((against - votes, -len(members), not vertical, vertical, members))
    candidates.sort(key=lambda c: c[:3])
    return [(vertical, members) for *_, vertical, members in candidates], chains


def _groups(lines, marks: _Marks, walls, parted, vertical: bool):
    """The lines that look like text (`_lines_ok`), their groups into blocks (lists of indices
    into them), and the lines of letters all parted from a drawing that stand beside one of them
    by the same rules ({index of that line: their letters}): no text by themselves, but beside a
    text line a column over the drawing (ご主人さまも over speed lines beside おおよろこび)."""
    ok = _lines_ok(lines, marks, parted)
    kept = [line for line, k in zip(lines, ok) if k]
    drawn_lines = [line for line, k in zip(lines, ok) if len(line) >= SHORT and parted[line].all()]
    groups = _join(kept, marks, walls, vertical)
    drawn: dict[int, np.ndarray] = {}
    if kept and drawn_lines:
        n = len(kept)
        for group in _join(kept + drawn_lines, marks, walls, vertical):
            text = [k for k in group if k < n]
            beside = [drawn_lines[k - n] for k in group if k >= n]
            if text and beside:
                drawn[text[0]] = np.concatenate(beside)
    return kept, groups, drawn


def _settle(candidates, marks: _Marks, free: int):
    """Each letter in one block, the first candidate that has it taking it; each block completed
    with the marks the strict letter test left out (ノ, し, ー, dots, small kana) that lie in line
    with its letters; a big letter alone kept unless a block's completion took it ("」"); blocks
    that then overlap made one. [(vertical, members, seeds)]."""
    taken = np.zeros(len(marks.size), dtype=bool)
    texts, alone = [], []
    for vertical, members in candidates:
        if len(members) == 1:
            alone.append((vertical, members))
        elif not taken[members].any():
            taken[members] = True
            texts.append((vertical, members))
    loose = np.flatnonzero((marks.size <= LETTER_MAX) & ~taken)
    loose = loose[loose < free]
    done = [(v, _complete(members, v, loose, marks), members) for v, members in texts]
    for _, members, _ in done:
        taken[members] = True
    for vertical, members in alone:
        if not taken[members].any():
            taken[members] = True
            done.append((vertical, members, members))
    done = _merge_overlapping(done, marks)
    # a letter alone stands in a line of its own: letters that touch along it (おでかけ, a mark
    # `STACKED` long) run the way it is long
    for i, (_, members, seeds) in enumerate(done):
        if len(seeds) == 1:
            k = seeds[0]
            w, h = marks.x1[k] - marks.x0[k], marks.y1[k] - marks.y0[k]
            if max(w, h) >= STACKED[0] * min(w, h):
                done[i] = (bool(h > w), members, seeds)
    return done


def _letters(marks: _Marks, ink: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """Which marks are letters: of a letter's size and shape, on paper."""
    return _shaped(marks) & _on_paper(marks, ink, paper)


def _shaped(marks: _Marks, scale: int = 1) -> np.ndarray:
    """Which marks have a letter's size and shape: `scale` 1 at half resolution, 2 at full."""
    x0, y0, x1, y1, area, size = marks.x0, marks.y0, marks.x1, marks.y1, marks.area, marks.size
    mw, mh = x1 - x0, y1 - y0
    fill = area / (mw * mh)
    return (
        (size >= scale * LETTER_MIN)
        & (size <= scale * LETTER_MAX)
        & (size <= MAX_ASPECT * np.minimum(mw, mh))
        & (fill >= MIN_FILL)
        & (fill <= MAX_FILL)
        & (area >= scale * MIN_STROKE * size)  # ink per px of size doubles with the resolution
    )


def _on_paper(marks: _Marks, ink: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """Which marks sit on paper: around each (its box grown by a third) little is gray (tone,
    hatching)."""
    x0, y0, x1, y1, size = marks.x0, marks.y0, marks.x1, marks.y1, marks.size
    gray = ~ink & ~paper
    m = np.ceil(size / 3).astype(np.int64)
    hh, ww = ink.shape
    gray_px = _box_sums(_integral(gray), x0 - m, y0 - m, x1 + m, y1 + m, ww, hh)
    ring = (np.minimum(x1 + m, ww) - np.maximum(x0 - m, 0)) * (
        np.minimum(y1 + m, hh) - np.maximum(y0 - m, 0)
    )
    return gray_px <= MAX_GRAY * ring


class _Walls:
    """Outlines, borders and drawing (the marks too big to be letters), asked whether they fence
    off one box from another: a wall crosses the gap between them from side to side. A drawn line
    that only cuts a corner of the gap (a speed line behind the text) does not."""

    def __init__(self, mask: np.ndarray):
        hh, ww = mask.shape
        self.down = np.zeros((hh + 1, ww), dtype=np.int32)  # [y, x]: wall px above y in column x
        self.down[1:] = mask.cumsum(0, dtype=np.int32)
        self.right = np.zeros((ww + 1, hh), dtype=np.int32)  # [x, y]: wall px left of x in row y
        self.right[1:] = mask.T.cumsum(0, dtype=np.int32)

    def fence(self, t0, t1, p0, p1, along_y: bool) -> np.ndarray:
        """Whether walls cross each gap [t0, t1) at every position of [p0, p1): t runs along y
        (the gap is crossed at each x) when `along_y`, along x otherwise."""
        table = self.down if along_y else self.right
        t0 = np.clip(t0, 0, table.shape[0] - 1)
        t1 = np.clip(t1, 0, table.shape[0] - 1)
        p0 = np.clip(p0, 0, table.shape[1])
        p1 = np.clip(p1, 0, table.shape[1])
        i, k = _expand(p0, p1)
        hit = table[t1[i], k] > table[t0[i], k]
        missed = np.bincount(i, weights=~hit, minlength=len(t0))
        return (missed == 0) & (p1 > p0) & (t1 > t0)


def _lines(is_letter, marks: _Marks, walls, vertical: bool):
    """The lines (columns when `vertical`, rows otherwise) the letters stand in: [mark indices in
    reading order], and per mark the gap to its closest neighbour in its line (in letters)."""
    letters = np.flatnonzero(is_letter)
    a0, a1, c0, c1 = (v[letters] for v in marks.axes(vertical))
    s = marks.letter(vertical)[letters].astype(np.float64)
    n = len(letters)
    # candidate pairs (i, j): j starts near where i ends (a sweep over the letters by their start),
    # a letter gap of the bigger letter on, or a ー with letter gaps beside it of i's size
    order = np.argsort(a0, kind="stable")
    lo = np.searchsorted(a0[order], a1 - OVERLAP * s, side="left")
    reach = max(LETTER_GAP * SIZE_RATIO, LETTER_GAP + BAR_LENGTH[1]) * s
    hi = np.searchsorted(a0[order], a1 + reach, side="right")
    i, k = _expand(lo, hi)
    j = order[k]
    big, small = np.maximum(s[i], s[j]), np.minimum(s[i], s[j])
    gap = (a0[j] - a1[i]).astype(np.float64)
    # centred on one axis: their marks' centres, or in a column their pieces' (`_Marks.pieces`: は
    # and い, each two marks side by side, the stroke apart no letter by itself)
    off = np.abs((c0[i] + c1[i]) - (c0[j] + c1[j])) / 2
    if vertical:  # only the pairs their pieces may line up (the pairs are a letter's rows on)
        p0, p1 = (v[letters] for v in marks.pieces(is_letter))
        moved = np.maximum(c0 - p0, p1 - c1)  # at most how far a letter's pieces move its centre
        near = off <= ALIGN * big + moved.max()
        near = np.flatnonzero(near & ((moved > 0)[i] | (moved > 0)[j]))
        pi, pj = i[near], j[near]
        off[near] = np.minimum(off[near], np.abs((p0[pi] + p1[pi]) - (p0[pj] + p1[pj])) / 2)
    ok = (i != j) & (off <= ALIGN * big) & (big <= SIZE_RATIO * small) & (gap >= -OVERLAP * small)
    # a ー between two letters further apart stands as a letter of their line: the gaps beside it
    # together within a letter gap, each link through it half of that
    far = np.flatnonzero(ok & (gap > LETTER_GAP * big))
    axis = (c0[i] + c1[i] + c0[j] + c1[j]) / 4
    left = _bridged(a1[i[far]], a0[j[far]], axis[far], big[far], marks, vertical)
    ok[far] &= left <= LETTER_GAP * big[far]
    gap[far] = left / 2
    ok &= gap <= LETTER_GAP * big
    i, j, gap, off = i[ok], j[ok], gap[ok], off[ok]
    # each letter's nearest follower, and each letter's nearest one before: a link is both
    nxt, prev = _nearest_pairs(i, j, gap, off, n), _nearest_pairs(j, i, gap, off, n)
    linked = (nxt[i] == j) & (prev[j] == i)
    i, j, gap = i[linked], j[linked], gap[linked]
    # no wall between the two letters (a balloon's outline between two balloons, one above the other)
    cross0, cross1 = np.maximum(c0[i], c0[j]), np.minimum(c1[i], c1[j])
    walled = walls.fence(a1[i], a0[j], cross0, np.maximum(cross1, cross0 + 1), vertical)
    i, j, gap = i[~walled], j[~walled], gap[~walled]
    head = np.arange(n)
    head[j] = i
    while True:  # pointer jumping: every letter straight to the first of its line
        nh = head[head]
        if np.array_equal(nh, head):
            break
        head = nh
    # each letter's closest link (in letters), for the choice between columns and rows
    gaps = gap / np.maximum(s[i], s[j])
    closest = np.full(len(marks.size), np.inf)
    np.minimum.at(closest, letters[i], gaps)
    np.minimum.at(closest, letters[j], gaps)
    order = np.lexsort((a0, head))
    bounds = np.flatnonzero(np.diff(head[order])) + 1
    return [letters[line] for line in np.split(order, bounds)], closest


def _bridged(end, start, axis, big, marks: _Marks, vertical: bool) -> np.ndarray:
    """For pairs of letters of a line (the first ending at `end` along it, the next starting at
    `start`, centred on `axis` across, letters `big`), the gap left beside a ー between them (a
    bar, `_Marks.bars`, `BAR_LENGTH` letters long, on their axis): the two sides together; infinite
    where no bar stands so."""
    out = np.full(len(end), np.inf)
    bars = marks.bars(vertical)  # by where they start along
    if not len(end) or not len(bars):
        return out
    a0, a1, c0, c1 = (v[bars] for v in marks.axes(vertical))
    lo = np.searchsorted(a0, end, side="left")  # a bar starts after the first letter ...
    hi = np.searchsorted(a0, start, side="right")  # ... and before the next one
    pair, k = _expand(lo, hi)
    b, length = big[pair], a1[k] - a0[k]
    fits = (length >= BAR_LENGTH[0] * b) & (length <= BAR_LENGTH[1] * b) & (a1[k] <= start[pair])
    fits &= np.abs((c0[k] + c1[k]) / 2 - axis[pair]) <= ALIGN * b
    np.minimum.at(out, pair[fits], (start - end)[pair[fits]] - length[fits])
    return out


def _nearest_pairs(a, b, gap, off, n: int) -> np.ndarray:
    """For each of n items, its partner b in the pairs (a, b) with the smallest gap (then offset),
    or -1."""
    out = np.full(n, -1, dtype=np.int64)
    if not len(a):
        return out
    order = np.lexsort((off, gap, a))
    first = np.ones(len(order), dtype=bool)
    first[1:] = a[order][1:] != a[order][:-1]
    out[a[order][first]] = b[order][first]
    return out


def _join(lines, marks: _Marks, walls, vertical: bool) -> list[list[int]]:
    """The lines grouped into blocks: side by side (at most `LINE_GAP` apart, overlapping along),
    or one after the other in one column (at most `LETTER_GAP` apart), with no wall between."""
    a0, a1, c0, c1 = marks.axes(vertical)
    n = len(lines)
    if not n:
        return []
    members, starts, lens = _segments(lines)
    la0, la1 = np.minimum.reduceat(a0[members], starts), np.maximum.reduceat(a1[members], starts)
    lc0, lc1 = np.minimum.reduceat(c0[members], starts), np.maximum.reduceat(c1[members], starts)
    # each line's median letter size: its sizes sorted, the middle one (or two)
    ranked = marks.size[members][np.lexsort((marks.size[members], np.repeat(np.arange(n), lens)))]
    med = (ranked[starts + (lens - 1) // 2] + ranked[starts + lens // 2]) / 2
    order = np.argsort(lc0, kind="stable")
    lo = np.searchsorted(lc0[order], lc0, side="left")
    hi = np.searchsorted(lc0[order], lc1 + LINE_GAP * SIZE_RATIO * med, side="right")
    p, k = _expand(lo, hi)
    q = order[k]
    keep = p != q
    p, q = p[keep], q[keep]
    s, small = np.maximum(med[p], med[q]), np.minimum(med[p], med[q])
    across = np.maximum(lc0[q] - lc1[p], lc0[p] - lc1[q])
    along = np.maximum(la0[q] - la1[p], la0[p] - la1[q])
    shorter = np.minimum(la1[p] - la0[p], la1[q] - la0[q])
    side = (across <= LINE_GAP * s) & (-along >= SIDE_OVERLAP * shorter)
    narrower = np.minimum(lc1[p] - lc0[p], lc1[q] - lc0[q])
    stacked = (-across >= SIDE_OVERLAP * narrower) & (along <= LETTER_GAP * s)
    ok = (side | stacked) & (s <= LINE_SIZE_RATIO * small)
    p, q, across, along = p[ok], q[ok], across[ok], along[ok]
    # the box between the two lines holds no wall
    g0 = np.where(across > 0, np.minimum(lc1[p], lc1[q]), np.maximum(lc0[p], lc0[q]))
    g1 = np.where(across > 0, np.maximum(lc0[p], lc0[q]), np.minimum(lc1[p], lc1[q]))
    h0 = np.where(along > 0, np.minimum(la1[p], la1[q]), np.maximum(la0[p], la0[q]))
    h1 = np.where(along > 0, np.maximum(la0[p], la0[q]), np.minimum(la1[p], la1[q]))
    beside = across > 0
    fenced = np.where(
        beside,
        walls.fence(g0, g1, h0, h1, not vertical),
        walls.fence(h0, h1, g0, g1, vertical),
    )
    # lines that overlap both across and along share their area: nothing stands between them
    free = ~fenced | ((across <= 0) & (along <= 0))
    labels = _connect(n, p[free], q[free])
    groups: dict[int, list[int]] = {}
    for k, label in enumerate(labels.tolist()):
        groups.setdefault(label, []).append(k)
    return list(groups.values())


def _lines_ok(lines, marks: _Marks, parted) -> np.ndarray:
    """Which lines look like ones of text by themselves: not all letters parted from a drawing (a
    drawing parted into pieces is pieces all through), and a short one letter-like (a letter
    alone in its line shows it by itself: a stroke of hatching does not)."""
    if not lines:
        return np.zeros(0, dtype=bool)
    members, starts, lens = _segments(lines)
    area = marks.area[members]
    fill = area / ((marks.x1 - marks.x0)[members] * (marks.y1 - marks.y0)[members])
    stroke = area / marks.size[members]
    free = np.add.reduceat(parted[members].astype(np.int64), starts) < lens
    # three letters in a straight line of one size: the line shows it; for two the mean is the median
    letter_like = np.add.reduceat(fill, starts) >= TEXT_FILL * lens
    letter_like &= np.add.reduceat(stroke, starts) >= TEXT_STROKE * lens
    return free & ((lens > 2) | letter_like)


def _segments(lines):
    """The lines' letters one after the other, where each line starts, and its length."""
    lens = np.array([len(line) for line in lines], dtype=np.int64)
    starts = np.zeros(len(lines), dtype=np.int64)
    starts[1:] = np.cumsum(lens)[:-1]
    return np.concatenate(lines), starts, lens


def _is_text(members, lines, marks: _Marks, ink, paper, vertical: bool) -> bool:
    """Whether one block of letters is text: enough of them in lines, alike, letter-like, on paper."""
    x0, y0, x1, y1, area = marks.x0, marks.y0, marks.x1, marks.y1, marks.area
    # letters that touch along a line count as letters of their width; a mark alone is one letter
    sizes = (marks.letter(vertical) if len(members) > 1 else marks.size)[members]
    median = _median(sizes)
    bx0, by0, bx1, by1 = marks.box(members)
    if len(members) < MIN_LETTERS and median < ALONE_MIN:
        return False
    in_lines = sum(len(line) for line in lines if len(line) > 1)
    if len(members) >= MIN_LETTERS and in_lines < MIN_IN_LINES * len(members):
        return False
    strokes = area[members] / sizes
    fills = area[members] / ((x1 - x0)[members] * (y1 - y0)[members])
    if _median(strokes) < TEXT_STROKE or _median(fills) < TEXT_FILL:
        return False
    same = np.count_nonzero((sizes >= 0.5 * median) & (sizes <= 2 * median))
    if same < SIZE_SPREAD * len(members):
        return False
    letters_px = int(area[members].sum())
    all_ink = int(ink[by0:by1, bx0:bx1].sum())
    if all_ink == 0 or (all_ink - letters_px) > MAX_LINE_INK * all_ink:
        return False
    paper_px = int(paper[by0:by1, bx0:bx1].sum())
    if paper_px < MIN_PAPER * ((by1 - by0) * (bx1 - bx0) - letters_px):
        return False
    # a mark of letters that touch along the line, inked as letters are (`TEXT_FILL`; a fur line
    # is sparser), counts as the block's letters it is long, rounded down (ネ beside ズミ算, 2.9
    # letters long: 1 + 2); a mark alone is one letter
    touching = marks.touching(vertical)[members] & (fills >= TEXT_FILL) & (len(members) > 1)
    long = marks.size[members][touching]
    held = len(members) + np.maximum(0, np.floor(long / median) - 1).sum()
    if held < SHORT:
        # a letter or two: no other letter-sized mark close by (a "!"'s dot may be): a drawing
        m = max(2, round(median * 0.6))
        near = (x1 > bx0 - m) & (x0 < bx1 + m) & (y1 > by0 - m) & (y0 < by1 + m)
        near &= (marks.size >= 0.5 * median) & (marks.size <= 2 * median)
        # ... but a bar in the block's box (a ー between them, a stroke of a letter)
        bars = marks.bars(vertical)
        inside = (x0[bars] >= bx0) & (x1[bars] <= bx1) & (y0[bars] >= by0) & (y1[bars] <= by1)
        bar = np.zeros(len(near), dtype=bool)
        bar[bars[inside]] = True
        bar[members] = False
        if np.count_nonzero(near & ~bar) > len(members):
            return False
    return True


def _complete(seeds, vertical: bool, loose, marks: _Marks):
    """The seeds plus the small marks that are no letters by themselves but belong to a line of
    them: beside it (a ruby, a dakuten, a small ッ set off the column) or beyond its ends, within
    its width (a ー, a ！, the dots of …, a closing bracket)."""
    a0, a1, c0, c1 = marks.axes(vertical)
    median = _median(marks.size[seeds])
    along, across = COMPLETE_ALONG * median, COMPLETE_ACROSS * median
    fits = loose[marks.size[loose] <= 1.5 * median]
    centre, middle = (c0[fits] + c1[fits]) / 2, (a0[fits] + a1[fits]) / 2
    seed_centre = (c0[seeds] + c1[seeds]) / 2
    base = int(c0[seeds].min())
    parts = [seeds]
    for s, e in _spans(c0[seeds] - base, c1[seeds] - base, int(c1[seeds].max()) - base):
        s, e = s + base, e + base
        line = seeds[(seed_centre >= s) & (seed_centre < e)]
        if not len(line):
            continue
        lo, hi = int(a0[line].min()), int(a1[line].max())
        beside = (centre > s - across) & (centre < e + across) & (middle > lo) & (middle < hi)
        # beyond the ends, step by step: any mark of the band that no block took (a dot, a bar, a
        # "」", and a letter after them: the ナナ of "ハンター・ナナ", whose link the ・'s gap broke)
        in_band = (centre >= s) & (centre < e)
        for _ in range(COMPLETE_STEPS):
            beyond = in_band & (a1[fits] > lo - along) & (a0[fits] < hi + along)
            if not beyond.any():
                break
            new_lo = min(lo, int(a0[fits][beyond].min()))
            new_hi = max(hi, int(a1[fits][beyond].max()))
            if (new_lo, new_hi) == (lo, hi):
                break
            lo, hi = new_lo, new_hi
        near = beside | (in_band & (a1[fits] > lo) & (a0[fits] < hi))
        parts.append(fits[near])
    return np.unique(np.concatenate(parts))


def _merge_overlapping(done, marks: _Marks):
    """Blocks that overlap after completion are one block: one in line with the other (a column
    split by a dropped ー), or half of the smaller inside the bigger. The bigger one's direction
    wins."""
    boxes = [marks.box(m) for _, m, _ in done]
    merged = True
    while merged and len(done) > 1:
        merged = False
        for i in range(len(done)):
            for j in range(i + 1, len(done)):
                if _overlapping(boxes[i], boxes[j], done[i][0]):
                    a, b = boxes[i], boxes[j]
                    vertical = done[i][0] if len(done[i][2]) >= len(done[j][2]) else done[j][0]
                    m = np.union1d(done[i][1], done[j][1])
                    s = np.union1d(done[i][2], done[j][2])
                    done[i] = (vertical, m, s)
                    boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del done[j], boxes[j]
                    merged = True
                    break
            if merged:
                break
    return done


def _overlapping(a, b, vertical: bool) -> bool:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return False
    narrow_w = min(a[2] - a[0], b[2] - b[0])
    narrow_h = min(a[3] - a[1], b[3] - b[1])
    if 2 * w * h >= narrow_w * narrow_h:  # half of the smaller (at most) inside the other
        return True
    return 2 * w >= narrow_w if vertical else 2 * h >= narrow_h  # one after the other in a line


def _run_on(found: _Found, table, shape) -> tuple[Rect, bool, list]:
    """A block's box with its lines run on through the drawing their letters touch: letter by
    letter beyond each end of a line, while the next letter's cell of the line's band holds a
    letter's worth more ink than the cells beside the band (text over speed lines or hair: the
    drawing runs beside the band too, the letter only in it); whether a line ends against ink it
    could not tell from the drawing (a letter may go on there); and the bands that ran on, (s, e
    across, their letters' ends along, where they ran on to), for the layout."""
    marks, members, vertical, median = found.marks, found.members, found.vertical, found.median
    a0, a1, c0, c1 = marks.axes(vertical)
    x0, y0, x1, y1 = found.letters
    lo, hi = (y0, y1) if vertical else (x0, x1)
    big = members[marks.size[members] >= 0.5 * median]  # letters, not dots
    step = max(2, round(median))
    base = int(c0[big].min())
    centre = (c0[big] + c1[big]) / 2
    inked, runs = False, []
    for s, e in _spans(c0[big] - base, c1[big] - base, int(c1[big].max()) - base):
        s, e = s + base, e + base
        line = big[(centre >= s) & (centre < e)]
        if not len(line):
            continue
        letter = _median(marks.area[line]) / (step * (e - s))  # a letter's ink per px
        band = _Band(table, shape, vertical, s, e)
        first, last = int(a0[line].min()), int(a1[line].max())
        start, before = band.run(first, -step, letter)
        end, after = band.run(last, step, letter)
        lo, hi, inked = min(lo, start), max(hi, end), inked or before or after
        if start < first or end > last:
            runs.append((s, e, first, last, start, end))
    return ((x0, lo, x1, hi) if vertical else (lo, y0, hi, y1)), inked, runs


class _Band:
    """The strip across [s, e) of a line (a column's x, a row's y), for running it on."""

    def __init__(self, table, shape, vertical: bool, s: int, e: int):
        self.table, self.vertical, self.s, self.e = table, vertical, s, e
        self.hh, self.ww = shape
        across = self.ww if vertical else self.hh
        width = e - s
        # the band and the strips of its width on either side (cut by the image's edges)
        self.r0 = np.array([s, max(0, s - width), e])
        self.r1 = np.array([e, s, min(across, e + width)])

    def run(self, end: int, step: int, letter: float) -> tuple[int, bool]:
        """Where a line that ends at `end` (along) ends, run on `step` by step (negative: back),
        and whether it ends against ink (a letter's worth in the next cell)."""
        length = self.hh if self.vertical else self.ww
        for _ in range(RUN_ON_STEPS):
            p, q = (end, end + step) if step > 0 else (end + step, end)
            if p < 0 or q > length:
                return end, False
            inside, beside = self._densities(p, q)
            if inside > RUN_ON_BLOT or inside - beside < RUN_ON_INK * letter:
                return end, inside >= RUN_ON_INK * letter
            end += step
        return end, False

    def _densities(self, p: int, q: int) -> tuple[float, float]:
        """The ink share of the band's cell along [p, q), and the lower of the cells beside it."""
        p3, q3 = np.full(3, p), np.full(3, q)
        if self.vertical:
            ink = _box_sums(self.table, self.r0, p3, self.r1, q3, self.ww, self.hh)
        else:
            ink = _box_sums(self.table, p3, self.r0, q3, self.r1, self.ww, self.hh)
        area = (self.r1 - self.r0) * (q - p)
        share = np.where(area > 0, ink / np.maximum(area, 1), 1.0)
        return float(share[0]), float(min(share[1], share[2]))


class _Found:
    """A block as the finder found it (half-res marks); `block()` lays it out (lines), which a
    click needs for one block only."""

    def __init__(
        self, vertical: bool, members, seeds, marks: _Marks, light_text: bool, ink, chains
    ):
        self.vertical, self.members, self.marks, self.light_text = (
            vertical,
            members,
            marks,
            light_text,
        )
        self.seeds, self.chains = seeds, chains  # its letters, and each mark's line (`_layout`)
        self.median = _median(marks.size[seeds])
        self.letters = marks.box(members)  # x0, y0, x1, y1 (half-res): its letters
        self._ink = ink  # the window's ink as an integral table (for the run-on)
        self._box: Rect | None = None
        self._inked = False
        self.runs: list = []  # the bands its lines ran on in (`_run_on`), for the layout

    @property
    def box(self) -> Rect:
        """Its letters' box with its lines run on through the drawing they touch (`_run_on`)."""
        if self._box is None:
            shape = (self._ink.shape[0] - 1, self._ink.shape[1] - 1)
            self._box, self._inked, self.runs = _run_on(self, self._ink, shape)
        return self._box

    @property
    def inked(self) -> bool:
        """Whether a line of it ends against ink the run-on could not tell from drawing."""
        _ = self.box  # worked out with the run-on
        return self._inked

    def reach(self) -> Rect:
        """A box its run-on box lies in, cheaply (its letters' box grown by the longest run-on)."""
        x0, y0, x1, y1 = self.letters
        m = RUN_ON_STEPS * max(2, round(self.median))
        if self.vertical:
            return x0, y0 - m, x1, y1 + m
        return x0 - m, y0, x1 + m, y1

    def block(self, ox: int, oy: int, run_on: bool = True) -> Block:
        """The block at image px (ox, oy) of its window; `run_on`: its lines run on as its box
        does (`_run_on`), or stop at its letters."""
        box = self.box
        lines, font = _layout(self, self.marks, self.median, run_on)
        return Block(
            _image_rect(box, ox, oy),
            self.vertical,
            tuple(_image_rect(r, ox, oy) for r in lines),
            font * 2.0,
            self.light_text,
        )


def _image_rect(r, ox: int, oy: int) -> Rect:
    x0, y0, x1, y1 = r
    return ox + 2 * x0, oy + 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0)


def _layout(found: _Found, marks: _Marks, median: float, run_on: bool = True):
    """Lines and font size of a block (half-res px). Its lines stand across where `_line_spans`
    says; each of its marks joins the line nearest to it, and a line runs along over its marks
    and, with `run_on`, on as far as its band ran on (`_run_on`: さまに over hair). Its font size
    is its letters' size: its lines' median width (a line is as wide as its widest letters), or
    the median size of its letters (touching ones by their width) where that is more (a block of
    narrow kana, a line of one letter)."""
    members, vertical = found.members, found.vertical
    a0, a1, c0, c1 = marks.axes(vertical)
    spans = _line_spans(found, marks, median)
    mids = np.array([(s + e) / 2 for s, e in spans])
    centre = (c0[members] + c1[members]) / 2
    nearest = np.abs(centre[:, None] - mids[None, :]).argmin(axis=1)
    lines, widths = [], []
    for k, (s, e) in enumerate(spans):
        inside = members[nearest == k]
        if not len(inside):
            continue
        lo, hi = int(a0[inside].min()), int(a1[inside].max())
        # a line that ends where its band ran on through drawing (さまに over hair) runs on too,
        # where the band is its own (a band over two lines ran on from one of them)
        for rs, re, first, last, start, end in found.runs if run_on else ():
            if min(e, re) > max(s, rs) and sum(min(f, re) > max(t, rs) for t, f in spans) == 1:
                lo = min(lo, start) if lo - first <= median else lo
                hi = max(hi, end) if last - hi <= median else hi
        lines.append((s, lo, e, hi) if vertical else (lo, s, hi, e))
        widths.append(e - s)
    if vertical:
        lines.sort(key=lambda r: -r[0])  # right to left
    else:
        lines.sort(key=lambda r: r[1])
    seeds = found.seeds[(c1 - c0)[found.seeds] <= LINE_WIDE * median]
    size = _median(marks.letter(vertical)[seeds if len(seeds) else found.seeds])
    return lines, max(_median(widths), size)


def _line_spans(found: _Found, marks: _Marks, median: float) -> list[tuple[int, int]]:
    """Where a block's lines stand across (half-res px, [s, e)): the lines of letters the finder
    linked (`_lines`), those in one column made one (a column the links broke: their centres
    within `LINE_SPLIT` letters), over the letters no wider than `LINE_WIDE` letters (a wider one
    is two letters of neighbouring lines that touch, ま and お); widened by the letters alone whose
    centre lies in one, then by those that touch one (`LINE_TOUCH`: the stroke of は beside the
    rest of it); and the letter-sized marks beside them, two or more side by side, are a line the
    links missed (a column of small letters spaced out, "1さい")."""
    seeds, members = found.seeds, found.members
    _, _, c0, c1 = marks.axes(found.vertical)
    centre = (c0 + c1) / 2
    narrow = seeds[c1[seeds] - c0[seeds] <= LINE_WIDE * median]
    chain = found.chains[narrow]
    linked, alone = narrow[chain >= 0], narrow[chain < 0]
    if len(linked):
        # each linked line's letters by their centres: its median centre and its span across
        ids = chain[chain >= 0]
        order = np.lexsort((centre[linked], ids))
        linked, ids = linked[order], ids[order]
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        lens = np.diff(np.r_[starts, len(ids)])
        mid = (centre[linked][starts + (lens - 1) // 2] + centre[linked][starts + lens // 2]) / 2
        lo = np.minimum.reduceat(c0[linked], starts)
        hi = np.maximum.reduceat(c1[linked], starts)
        # lines in one column made one
        by = np.argsort(mid, kind="stable")
        mid, lo, hi = mid[by], lo[by], hi[by]
        first = np.r_[0, np.flatnonzero(np.diff(mid) > LINE_SPLIT * median) + 1]
        lo, hi = np.minimum.reduceat(lo, first), np.maximum.reduceat(hi, first)
    else:  # no two letters linked (a big letter alone, "わ"): the spans its letters cover
        lo, hi = _covered(seeds, c0, c1)
    for near in (0.0, LINE_TOUCH * median):
        if not len(alone):
            break
        if near:
            hit = (c1[alone][:, None] >= lo - near) & (c0[alone][:, None] <= hi + near)
        else:
            hit = (centre[alone][:, None] >= lo) & (centre[alone][:, None] <= hi)
        lo = np.minimum(lo, np.where(hit, c0[alone][:, None], lo).min(axis=0))
        hi = np.maximum(hi, np.where(hit, c1[alone][:, None], hi).max(axis=0))
        alone = alone[_outside(centre[alone], lo, hi)]
    rest = members[
        (marks.size[members] >= 0.5 * median) & (c1[members] - c0[members] <= LINE_WIDE * median)
    ]
    rest = rest[_outside(centre[rest], lo, hi)]
    spans = list(zip(lo.tolist(), hi.tolist()))
    for s, e in zip(*_covered(rest, c0, c1)):
        if np.count_nonzero((c0[rest] >= s) & (c1[rest] <= e)) >= 2:
            spans.append((int(s), int(e)))
    return spans


def _covered(marks, c0, c1):
    """The spans (starts, ends) that marks cover across (their boxes `c0`..`c1`)."""
    if not len(marks):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    base = int(c0[marks].min())
    spans = np.array(_spans(c0[marks] - base, c1[marks] - base, int(c1[marks].max()) - base))
    return spans[:, 0] + base, spans[:, 1] + base


def _outside(values, lo, hi) -> np.ndarray:
    """Which values lie in none of the spans [lo, hi]."""
    return ~((values[:, None] >= lo) & (values[:, None] <= hi)).any(axis=1)


# --- small tools ---------------------------------------------------------------------------------


def _integral(mask: np.ndarray) -> np.ndarray:
    out = np.zeros((mask.shape[0] + 1, mask.shape[1] + 1), dtype=np.int32)
    out[1:, 1:] = mask.cumsum(0, dtype=np.int32).cumsum(1, dtype=np.int32)
    return out


def _box_sums(table, x0, y0, x1, y1, w, h):
    """Sums of the mask over boxes [x0, x1) × [y0, y1), clipped to the image."""
    x0, x1 = np.clip(x0, 0, w), np.clip(x1, 0, w)
    y0, y1 = np.clip(y0, 0, h), np.clip(y1, 0, h)
    x1, y1 = np.maximum(x0, x1), np.maximum(y0, y1)
    return table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0]


def _spans(starts, ends, length, bridge: float = 0):
    """The covered spans [(s, e)] of intervals on 0..length, merged where they touch or where the
    gap between them is at most `bridge`."""
    cover = np.bincount(starts, minlength=length + 1) - np.bincount(ends, minlength=length + 1)
    on = np.concatenate(([0], (cover.cumsum()[:length] > 0).astype(np.int8), [0]))
    edges = np.diff(on)
    spans = list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))
    if bridge <= 0 or not spans:
        return spans
    out = [spans[0]]
    for s, e in spans[1:]:
        if s - out[-1][1] <= bridge:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _expand(lo, hi):
    """All pairs (i, k) with lo[i] <= k < hi[i]."""
    counts = np.clip(hi - lo, 0, None)
    total = int(counts.sum())
    i = np.repeat(np.arange(len(lo)), counts)
    k = np.repeat(lo, counts) + np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return i, k


def _connect(n: int, a, b) -> np.ndarray:
    """Connected components of n items joined by the pairs (a, b): each item's smallest member."""
    labels = np.arange(n)
    if not len(a):
        return labels
    while True:
        la, lb = labels[a], labels[b]
        m = np.minimum(la, lb)
        if not ((la != m) | (lb != m)).any():
            return labels
        np.minimum.at(labels, la, m)  # point both roots at the smaller one
        np.minimum.at(labels, lb, m)
        while True:  # pointer jumping: every item straight to its root
            nxt = labels[labels]
            if np.array_equal(nxt, labels):
                break
            labels = nxt


# --- connected components, run by run ------------------------------------------------------------


def row_runs(mask: np.ndarray):
    """The horizontal runs of True in a bool mask, row by row and left to right: (rows, starts,
    ends), each run [start, end)."""
    h, w = mask.shape
    padded = np.zeros((h, w + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    # a run starts (+1) and ends (-1) in its row: the changes alternate start, end, start, ...
    rows, columns = np.nonzero(np.diff(padded, axis=1))
    return rows[0::2], columns[0::2], columns[1::2]


def components(mask: np.ndarray):
    """8-connected components of a bool mask: per component (x0, y0, x1, y1, pixel count), and
    per horizontal run its component, with the runs (rows, starts, ends); None when empty."""
    w = mask.shape[1]
    rows, starts, ends = row_runs(mask)
    n = len(rows)
    if n == 0:
        return None
    stride = w + 2
    start_key = rows * stride + starts
    end_key = rows * stride + ends
    # runs of row r-1 touching each run of row r (8-connected: [s, e) touches [s', e') when
    # s' <= e and s <= e'); keys keep the search inside that one row
    below = np.flatnonzero(rows > 0)
    r_above = rows[below] - 1
    lo_i = np.searchsorted(end_key, r_above * stride + starts[below], side="left")
    hi_i = np.searchsorted(start_key, r_above * stride + ends[below], side="right")
    b, a = _expand(lo_i, hi_i)
    labels = _connect(n, a, below[b])
    uniq, run_label = np.unique(labels, return_inverse=True)
    k = len(uniq)
    # each component's runs one after the other (every label 0..k-1 has some), for its box
    order = np.argsort(run_label, kind="stable")
    first = np.searchsorted(run_label[order], np.arange(k))
    x0 = np.minimum.reduceat(starts[order], first).astype(np.int64)
    x1 = np.maximum.reduceat(ends[order], first).astype(np.int64)
    y0 = np.minimum.reduceat(rows[order], first).astype(np.int64)
    y1 = np.maximum.reduceat(rows[order], first).astype(np.int64) + 1
    area = np.bincount(run_label, weights=ends - starts, minlength=k).astype(np.int64)
    return x0, y0, x1, y1, area, run_label, (rows, starts, ends, start_key, stride)
