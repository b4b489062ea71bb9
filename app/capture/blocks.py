"""Text blocks on a page or a screen (pure numpy, no Qt): every block of text, for one click (the
block under the pointer) and for reading a whole page at once.

A text block is a group of letters: marks of a letter's size, on clean paper, close to each other
and far from other groups. The finder works on the image at half resolution, pooled so that a
one-pixel stroke survives (the darkest of each 2×2 for dark ink, the lightest for light ink):

1. ink: pixels darker than `INK` (dark text on light paper; a second pass reads light text on dark
   boxes, a game's dialogue box, from the inverted image);
2. marks: the 8-connected pieces of ink, found run by run, with their boxes;
3. letters: the marks of a letter's size (`LETTER_MIN`..`LETTER_MAX`), compact (`MAX_ASPECT`), neither
   a mesh of thin lines nor a blot (`MIN_FILL`..`MAX_FILL`, `MIN_STROKE`), on paper (`MAX_GRAY`).
   Balloon outlines, panel borders and long drawn lines are bigger or thinner and drop out here;
   screentone dots are smaller. The bigger marks become walls that no group crosses;
4. groups: each letter's box grown by `GAP` of its own size and painted on a grid; the connected
   painted areas are the candidate groups;
5. lines: a group is cut into the columns (or rows) its letters stand in, about one letter wide
   (`LINE_WIDTH`); marks outside them are drawing; lines further apart than `LINE_GAP` letters, or
   a gap of `LETTER_GAP` letters along a line, start another block (two balloons side by side);
6. a block is text when its letters are many enough (`MIN_LETTERS`, or one big letter alone),
   letter-like (`TEXT_STROKE`, `TEXT_FILL`), alike in size (`SIZE_SPREAD`), on paper (`MIN_PAPER`)
   and not crossed by drawn lines (`MAX_LINE_INK`);
7. completion: the small marks the strict letter test left out (ノ, ー, dots, small kana) that stand
   in line with a block's letters join it (`COMPLETE_*`); blocks that then overlap are one;
8. each block gets its direction (its lines run the way they are long), its lines and font size.

`find_blocks(gray)` does the whole image; `block_at(gray, x, y)` reads only a window around a click,
so a click costs the same on any screen size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# luminance (0-255) below which a pooled pixel is ink; paper is ~230+, screentone ~120-200
INK = 110
PAPER = 200  # the lightest of a 2×2 at or above this is paper (half-res: white between strokes)
LETTER_MIN = 4  # half-res px: marks smaller than this on both sides are dots (tone, dakuten, noise)
LETTER_MAX = 56  # half-res px: bigger marks are outlines, borders, drawings (letters ≤ ~110 px)
MAX_ASPECT = 4  # a mark longer than this many times its width is a line (speed lines, hatching) or a ー (completed later)
MIN_STROKE = 1.5  # ink px per px of a mark's size below this is one thin line (hatching, a hair)
TEXT_STROKE = 1.7  # a block's letters carry at least this much ink per px of size (median) ...
TEXT_FILL = 0.33  # ... and fill this share of their boxes: drawn strokes are sparser than letters
# below this a mark is a mesh of thin lines (hatching, grass), or a ノ (completed later)
MIN_FILL = 0.2
MAX_FILL = 0.72  # ink share of a mark's box above this is a blot (an eye, hair), not a stroke
GAP = 0.4  # a letter reaches this share of its size towards its neighbours (columns < 0.8 apart)
MAX_GRAY = 0.25  # share of a letter's surroundings that may be gray (tone, hatching): on paper
MIN_LETTERS = 2  # a block of one letter must be big and alone in paper (`ALONE_MIN`)
ALONE_MIN = 10  # half-res px: a single letter this big, in clean paper, is a block ("わ", "!")
SIZE_SPREAD = 0.7  # at least this share of a block's letters within 0.5×..2× of their median size
MIN_PAPER = 0.55  # share of a block's box (minus its letters) that must be paper
MAX_LINE_INK = 0.6  # share of a block's ink that may belong to non-letter marks (lines, outlines)
COMPLETE_ALONG = 0.9  # a block takes in small marks this many letters beyond its line ends ...
COMPLETE_ACROSS = 0.3  # ... and this far beside its lines (a ruby, a small ッ set off the column)
COMPLETE_STEPS = 3  # ... for at most this many letters: further is a drawing that touches the text
LINE_WIDTH = (0.5, 2.6)  # a column (or row) is this many letters wide: wider is letters and drawing
MIN_IN_LINES = 0.3  # share of a group's marks that must stand in such lines, or it is a drawing
LINE_GAP = 0.8  # letters: columns further apart than this belong to different blocks
LETTER_GAP = 1.2  # letters: a gap this long along a line ends the block (the next balloon below)
REACH = 0.6  # letters: a click this far beside a block's letters still means that block (more: fur, tone)
# share of dark pixels below which a window holds no dark box to read light text on
DARK_GROUND = 0.1
WINDOW = 240  # image px around a click that `block_at` reads (a 480×480 window holds a balloon)

Rect = tuple[int, int, int, int]


@dataclass(frozen=True)
class Block:
    box: Rect  # x, y, w, h in image px: the block's letters
    vertical: bool
    lines: tuple[Rect, ...]  # each column (vertical) or row (horizontal), in reading order
    font_size: float  # image px: a line's width (vertical) or height (horizontal)
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
    h, w = gray.shape
    x0, y0 = max(0, x - WINDOW), max(0, y - WINDOW)
    x1, y1 = min(w, x + WINDOW), min(h, y + WINDOW)
    best, best_key = None, (0, 0)
    for f in _found(gray[y0:y1, x0:x1]):
        bx, by = x0 + 2 * f.box[0], y0 + 2 * f.box[1]
        bw, bh = 2 * (f.box[2] - f.box[0]), 2 * (f.box[3] - f.box[1])
        reach = max(8, round(f.median * 2 * REACH))  # a click in the balloon next to the letters
        dx = max(bx - x, 0, x - (bx + bw))
        dy = max(by - y, 0, y - (by + bh))
        if dx <= reach and dy <= reach:
            key = (dx * dx + dy * dy, bw * bh)  # the nearest; of two around the click, the smaller
            if best is None or key < best_key:
                best, best_key = f, key
    return None if best is None else best.block(x0, y0)


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


# --- the finder ------------------------------------------------------------------------------------


def _found(gray: np.ndarray) -> list[_Found]:
    gray = luminance(gray)
    h, w = gray.shape[0] // 2 * 2, gray.shape[1] // 2 * 2
    if h < 8 or w < 8:
        return []
    g = gray[:h, :w]
    a, b, c, d = g[0::2, 0::2], g[0::2, 1::2], g[1::2, 0::2], g[1::2, 1::2]
    lo = np.minimum(np.minimum(a, b), np.minimum(c, d))
    hi = np.maximum(np.maximum(a, b), np.maximum(c, d))
    out = _pass(lo, hi, light_text=False)
    # light text on dark boxes: the same pass on the inverted image (its darkest becomes its
    # lightest), where there is dark ground enough to hold a box of it
    if np.count_nonzero(hi < 255 - PAPER) >= DARK_GROUND * hi.size:
        out += _pass(255 - hi, 255 - lo, light_text=True)
    return out


def text_boxes(gray: np.ndarray) -> list[tuple[Rect, float]]:
    """(box, letter size) in image px of every text block, without their layout (cheaper than
    `find_blocks`)."""
    out = []
    for f in _found(gray):
        x0, y0, x1, y1 = f.box
        out.append(((2 * x0, 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0)), 2 * f.median))
    return out


def _image_rect(r, ox: int, oy: int) -> Rect:
    x0, y0, x1, y1 = r
    return ox + 2 * x0, oy + 2 * y0, 2 * (x1 - x0), 2 * (y1 - y0)


def _pass(lo: np.ndarray, hi: np.ndarray, light_text: bool):
    ink = lo < INK
    paper = hi >= PAPER
    marks = _components(ink)
    if marks is None:
        return []
    x0, y0, x1, y1, area, run_label, runs = marks
    mw, mh = x1 - x0, y1 - y0
    size = np.maximum(mw, mh)
    thin = np.minimum(mw, mh)
    fill = area / (mw * mh)
    letter = (
        (size >= LETTER_MIN)
        & (size <= LETTER_MAX)
        & (size <= MAX_ASPECT * thin)
        & (fill >= MIN_FILL)
        & (fill <= MAX_FILL)
        & (area >= MIN_STROKE * size)
    )
    if not letter.any():
        return []
    # a letter sits on paper: around it (its box grown by a third) little is gray (tone, hatching)
    gray = ~ink & ~paper
    m = np.ceil(size / 3).astype(np.int64)
    hh, ww = ink.shape
    gray_px = _box_sums(_integral(gray), x0 - m, y0 - m, x1 + m, y1 + m, ww, hh)
    ring = (np.minimum(x1 + m, ww) - np.maximum(x0 - m, 0)) * (
        np.minimum(y1 + m, hh) - np.maximum(y0 - m, 0)
    )
    letter &= gray_px <= MAX_GRAY * ring
    if not letter.any():
        return []
    idx = np.flatnonzero(letter)
    # group: paint each letter's box grown by GAP × its size on a grid of CELL px, then label it
    cell = 2
    grow = np.ceil(GAP * size[idx]).astype(np.int64)
    gx0 = np.clip((x0[idx] - grow) // cell, 0, None)
    gy0 = np.clip((y0[idx] - grow) // cell, 0, None)
    gx1 = np.clip((x1[idx] + grow + cell - 1) // cell, None, (ww + cell - 1) // cell)
    gy1 = np.clip((y1[idx] + grow + cell - 1) // cell, None, (hh + cell - 1) // cell)
    gh, gw = (hh + cell - 1) // cell, (ww + cell - 1) // cell
    diff = np.zeros((gh + 1, gw + 1), dtype=np.int32)
    np.add.at(diff, (gy0, gx0), 1)
    np.add.at(diff, (gy0, gx1), -1)
    np.add.at(diff, (gy1, gx0), -1)
    np.add.at(diff, (gy1, gx1), 1)
    painted = diff.cumsum(0).cumsum(1)[:gh, :gw] > 0
    # outlines and borders (marks too big to be letters) cut groups: two balloons that touch
    # stay two blocks, and a group never leaks out of its balloon
    big = (size > LETTER_MAX)[run_label]
    rows, starts, ends = runs[0][big], runs[1][big], runs[2][big]
    wall = np.zeros((hh, ww + 1), dtype=np.int32)
    np.add.at(wall, (rows, starts), 1)
    np.add.at(wall, (rows, ends), -1)
    pad = np.zeros((gh * cell, gw * cell), dtype=bool)
    pad[:hh, :ww] = wall.cumsum(1)[:, :ww] > 0
    walls = np.asarray(pad.reshape(gh, cell, gw, cell).any(axis=(1, 3)))
    # a wall one cell thick can be crossed diagonally by the 8-connected groups: thicken it
    thick = walls.copy()
    thick[1:] |= walls[:-1]
    thick[:, 1:] |= walls[:, :-1]
    painted &= ~thick
    groups = _components(painted)
    if groups is None:
        return []
    _, _, _, _, _, g_run_label, g_runs = groups
    # each letter's group: the painted run under its centre cell
    cy = ((y0[idx] + y1[idx]) // 2) // cell
    cx = ((x0[idx] + x1[idx]) // 2) // cell
    group_of = _label_at(g_runs, g_run_label, cy, cx)
    # a lone mark can only be a block when it is one big letter: the rest go before the Python loop
    counts = np.bincount(group_of)
    keep = (counts[group_of] >= MIN_LETTERS) | (size[idx] >= ALONE_MIN)
    idx, group_of = idx[keep], group_of[keep]
    if not len(idx):
        return []
    order = np.argsort(group_of, kind="stable")
    bounds = np.flatnonzero(np.diff(group_of[order])) + 1
    texts = [
        part
        for group in np.split(idx[order], bounds)
        for part in _lines_apart(group, marks, size)
        if _is_text(part, marks, size, ink, paper)
    ]
    # complete each block: the marks the strict letter test left out (ノ, し, ー, dots, small kana)
    # that lie in line with its letters, then blocks that now overlap become one
    small = np.flatnonzero(size <= LETTER_MAX)
    done = []
    for members in texts:
        done.append(_complete(members, small, marks, size))
    done = _merge_overlapping(done, marks)
    return [_Found(members, seeds, marks, size, light_text) for members, seeds in done]


class _Found:
    """A block as the finder found it (half-res marks); `block()` lays it out (lines, direction),
    which a click needs for one block only."""

    def __init__(self, members, seeds, marks, size, light_text: bool):
        x0, y0, x1, y1 = marks[:4]
        self.members, self.marks, self.light_text = members, marks, light_text
        self.median = float(np.median(size[seeds]))
        self.box = (
            int(x0[members].min()),
            int(y0[members].min()),
            int(x1[members].max()),
            int(y1[members].max()),
        )

    def block(self, ox: int, oy: int) -> Block:
        x0, y0, x1, y1 = self.marks[:4]
        vertical, lines, font = _layout(self.members, x0, y0, x1, y1, self.median)
        return Block(
            _image_rect(self.box, ox, oy),
            vertical,
            tuple(_image_rect(r, ox, oy) for r in lines),
            font * 2.0,
            self.light_text,
        )


def _lines_apart(members, marks, size):
    """A group cut into the blocks its lines make: letters stand in columns (or rows) about one
    letter wide; marks outside such lines are drawing and go; lines further apart than `LINE_GAP`
    letters, or letters further apart along a line, are separate blocks (two balloons side by
    side, a drawing that touches the text)."""
    x0, y0, x1, y1 = marks[:4]
    if len(members) < 2:
        return [members]
    median = float(np.median(size[members]))
    best = None
    for vertical in (True, False):
        a0, a1 = (x0, x1) if vertical else (y0, y1)
        base = int(a0[members].min())
        spans = _spans(a0[members] - base, a1[members] - base, int(a1[members].max()) - base)
        good = [
            (s, e) for s, e in spans if LINE_WIDTH[0] * median <= e - s <= LINE_WIDTH[1] * median
        ]
        centre = (a0[members] + a1[members]) / 2 - base
        inside = np.zeros(len(members), dtype=bool)
        line_of = np.full(len(members), -1)
        for k, (s, e) in enumerate(good):
            hit = (centre >= s) & (centre < e)
            inside |= hit
            line_of[hit] = k
        score = np.count_nonzero(inside)
        if best is None or score > best[0]:
            best = (score, vertical, good, line_of)
    score, vertical, good, line_of = best
    if score < MIN_IN_LINES * len(members):
        return []
    members = members[line_of >= 0]
    line_of = line_of[line_of >= 0]
    # neighbouring lines closer than LINE_GAP letters form one block
    clusters, current = [], [0]
    for k in range(1, len(good)):
        if good[k][0] - good[k - 1][1] > LINE_GAP * median:
            clusters.append(current)
            current = []
        current.append(k)
    clusters.append(current)
    parts = []
    b0, b1 = (y0, y1) if vertical else (x0, x1)
    for lines in clusters:
        part = members[np.isin(line_of, lines)]
        if not len(part):
            continue
        # along the lines: a gap of more than LETTER_GAP letters starts another block
        base = int(b0[part].min())
        for s, e in _spans(
            b0[part] - base, b1[part] - base, int(b1[part].max()) - base, LETTER_GAP * median
        ):
            centre = (b0[part] + b1[part]) / 2 - base
            parts.append(part[(centre >= s) & (centre < e)])
    return [p for p in parts if len(p)]


def _is_text(members, marks, size, ink, paper) -> bool:
    """Whether one group of letters is text: enough of them, alike, letter-like, on paper."""
    x0, y0, x1, y1, area = marks[:5]
    sizes = size[members]
    median = float(np.median(sizes))
    bx0, by0 = int(x0[members].min()), int(y0[members].min())
    bx1, by1 = int(x1[members].max()), int(y1[members].max())
    if len(members) < MIN_LETTERS and median < ALONE_MIN:
        return False
    strokes = area[members] / sizes
    fills = area[members] / ((x1 - x0)[members] * (y1 - y0)[members])
    if np.median(strokes) < TEXT_STROKE or np.median(fills) < TEXT_FILL:
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
    if len(members) < MIN_LETTERS:
        # one letter: clean paper all around it, most of a letter's size away
        m = max(2, round(median * 0.6))
        near = (x1 > bx0 - m) & (x0 < bx1 + m) & (y1 > by0 - m) & (y0 < by1 + m)
        near &= (size >= LETTER_MIN) & (size <= LETTER_MAX)
        if np.count_nonzero(near) > 1:  # another mark of a letter's size close by: a drawing
            return False
    return True


def _complete(seeds, small, marks, size):
    """(members, seeds): the seeds plus the small marks in line with them: beyond a line's end
    (a ー, a ノ, the dots of …) or just beside it (a small ッ set off the column)."""
    x0, y0, x1, y1 = marks[:4]
    median = float(np.median(size[seeds]))
    along, across = COMPLETE_ALONG * median, COMPLETE_ACROSS * median
    bx0, by0 = x0[seeds].min(), y0[seeds].min()
    bx1, by1 = x1[seeds].max(), y1[seeds].max()
    vertical = (by1 - by0) >= (bx1 - bx0)
    fits = small[size[small] <= 1.5 * median]
    cx, cy = (x0[fits] + x1[fits]) / 2, (y0[fits] + y1[fits]) / 2
    members = seeds
    for _ in range(COMPLETE_STEPS):
        if vertical:  # centres within the columns' span, reaching past the ends
            near = (cx > bx0 - across) & (cx < bx1 + across)
            near &= (y1[fits] > by0 - along) & (y0[fits] < by1 + along)
        else:
            near = (cy > by0 - across) & (cy < by1 + across)
            near &= (x1[fits] > bx0 - along) & (x0[fits] < bx1 + along)
        grown = np.union1d(fits[near], seeds)
        if len(grown) == len(members):
            break
        members = grown
        bx0, by0 = x0[members].min(), y0[members].min()
        bx1, by1 = x1[members].max(), y1[members].max()
    return members, seeds


def _merge_overlapping(done, marks):
    """Blocks whose boxes overlap after completion are one block (a column split by a dropped ー)."""
    x0, y0, x1, y1 = marks[:4]
    boxes = [(x0[m].min(), y0[m].min(), x1[m].max(), y1[m].max()) for m, _ in done]
    merged = True
    while merged and len(done) > 1:
        merged = False
        for i in range(len(done)):
            for j in range(i + 1, len(done)):
                a, b = boxes[i], boxes[j]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    m = np.union1d(done[i][0], done[j][0])
                    s = np.union1d(done[i][1], done[j][1])
                    done[i] = (m, s)
                    boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del done[j], boxes[j]
                    merged = True
                    break
            if merged:
                break
    return done


def _layout(members, x0, y0, x1, y1, median):
    """Direction, lines and font size of a block from its marks' boxes: the lines are the spans
    its letter-sized marks cover across the text (dots and small kana join the nearest)."""
    bx0, by0 = int(x0[members].min()), int(y0[members].min())
    bx1, by1 = int(x1[members].max()), int(y1[members].max())
    size = np.maximum(x1[members] - x0[members], y1[members] - y0[members])
    big = members[size >= 0.4 * median]
    bridge = 0.2 * median
    cols = _spans(x0[big] - bx0, x1[big] - bx0, bx1 - bx0, bridge)
    rows = _spans(y0[big] - by0, y1[big] - by0, by1 - by0, bridge)
    # the lines run the way they are long: columns of letters are much taller than wide, and
    # the "columns" of a horizontal text are short and wide (and the other way round)
    vertical = _elongation(big, cols, x0, x1, y0, y1, bx0) >= _elongation(
        big, rows, y0, y1, x0, x1, by0
    )
    a0, a1, b0, b1, base, spans = (
        (x0, x1, y0, y1, bx0, cols) if vertical else (y0, y1, x0, x1, by0, rows)
    )
    centre = (a0[members] + a1[members]) / 2 - base
    mids = np.array([(s + e) / 2 for s, e in spans])
    nearest = np.abs(centre[:, None] - mids[None, :]).argmin(axis=1)
    lines = []
    for k, (s, e) in enumerate(spans):
        inside = members[nearest == k]
        lo, hi = int(b0[inside].min()), int(b1[inside].max())
        s0, e0 = int(min(a0[inside].min(), base + s)), int(max(a1[inside].max(), base + e))
        lines.append((s0, lo, e0, hi) if vertical else (lo, s0, hi, e0))
    if vertical:
        lines.sort(key=lambda r: -r[0])  # right to left
    else:
        lines.sort(key=lambda r: r[1])
    font = float(np.median([e - s for s, e in spans]))
    return vertical, lines, max(font, median)


def _elongation(members, spans, a0, a1, b0, b1, base) -> float:
    """Mean length over width of the lines `spans` (across-axis a, along-axis b) would make."""
    centre = (a0[members] + a1[members]) / 2 - base
    ratios = []
    for s, e in spans:
        inside = members[(centre >= s) & (centre < e)]
        if len(inside):
            ratios.append((b1[inside].max() - b0[inside].min()) / max(1, e - s))
    return float(np.mean(ratios)) if ratios else 0.0


def _integral(mask: np.ndarray) -> np.ndarray:
    out = np.zeros((mask.shape[0] + 1, mask.shape[1] + 1), dtype=np.int32)
    out[1:, 1:] = mask.cumsum(0, dtype=np.int32).cumsum(1, dtype=np.int32)
    return out


def _box_sums(table, x0, y0, x1, y1, w, h):
    """Sums of the mask over boxes [x0, x1) × [y0, y1), clipped to the image."""
    x0, x1 = np.clip(x0, 0, w), np.clip(x1, 0, w)
    y0, y1 = np.clip(y0, 0, h), np.clip(y1, 0, h)
    return table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0]


def _spans(starts, ends, length, bridge: float = 0):
    """The covered spans [(s, e)] of intervals on 0..length, merged where they touch or where the
    gap between them is at most `bridge`."""
    cover = np.zeros(length + 1, dtype=np.int32)
    np.add.at(cover, starts, 1)
    np.add.at(cover, ends, -1)
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


# --- connected components, run by run ------------------------------------------------------------


def _components(mask: np.ndarray):
    """8-connected components of a bool mask: per component (x0, y0, x1, y1, pixel count), and
    per horizontal run its component, with the runs (rows, starts, ends); None when empty."""
    h, w = mask.shape
    padded = np.zeros((h, w + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edges = np.diff(padded, axis=1)
    rows, starts = np.nonzero(edges == 1)
    _, ends = np.nonzero(edges == -1)
    n = len(rows)
    if n == 0:
        return None
    stride = w + 2
    start_key = rows * stride + starts
    end_key = rows * stride + ends
    # runs of row r-1 touching each run of row r (8-connected: [s, e) touches [s', e') when
    # s' <= e and s <= e'); keys keep the search inside that one row
    has_above = rows > 0
    below = np.flatnonzero(has_above)
    r_above = rows[below] - 1
    lo_i = np.searchsorted(end_key, r_above * stride + starts[below], side="left")
    hi_i = np.searchsorted(start_key, r_above * stride + ends[below], side="right")
    counts = np.clip(hi_i - lo_i, 0, None)
    total = int(counts.sum())
    labels = np.arange(n)
    if total:
        b = np.repeat(below, counts)
        first = np.repeat(lo_i, counts)
        offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        a = first + offsets
        while True:
            la, lb = labels[a], labels[b]
            m = np.minimum(la, lb)
            changed = (la != m) | (lb != m)
            if not changed.any():
                break
            np.minimum.at(labels, la, m)  # point both roots at the smaller one
            np.minimum.at(labels, lb, m)
            while True:  # pointer jumping: every run straight to its root
                nxt = labels[labels]
                if np.array_equal(nxt, labels):
                    break
                labels = nxt
    uniq, run_label = np.unique(labels, return_inverse=True)
    k = len(uniq)
    x0 = np.full(k, w, dtype=np.int64)
    y0 = np.full(k, h, dtype=np.int64)
    x1 = np.zeros(k, dtype=np.int64)
    y1 = np.zeros(k, dtype=np.int64)
    np.minimum.at(x0, run_label, starts)
    np.minimum.at(y0, run_label, rows)
    np.maximum.at(x1, run_label, ends)
    np.maximum.at(y1, run_label, rows + 1)
    area = np.bincount(run_label, weights=ends - starts, minlength=k).astype(np.int64)
    return x0, y0, x1, y1, area, run_label, (rows, starts, ends, start_key, stride)


def _label_at(runs, run_label, ys, xs):
    """The component under each (y, x), from the runs (every point must be inside the mask)."""
    rows, starts, ends, start_key, stride = runs
    k = np.searchsorted(start_key, ys * stride + xs, side="right") - 1
    return run_label[np.clip(k, 0, len(run_label) - 1)]
