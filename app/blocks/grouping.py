"""Lines into blocks: the detector's line boxes joined into the pieces a reader reads as one (a
balloon's columns, a narration box's rows, a caption), in reading order; and the block a click
means. Every value named here is in app/blocks/params.py.

1. paper: each line's paper level (the median of its box: its letters are the fewer pixels) and
   its home, the connected area of pixels near that level around it (a balloon's inside, a box,
   the page between panels): lines in two homes join only when very close (an outline or a border
   stands between the others); a home is closed when of a balloon's or a box's size;
2. letters: each box shrunk to the marks of ink within it (an outline it cuts runs on beyond it
   and is left out); where the detector took close lines for one, a gap no mark crosses all
   along it parts them (a ruby beside a column stays with it); a speck goes. Every length below
   is measured on the letters' ink, in letters (their thickness), the same at any scale;
3. direction: a line much taller than wide is a column, much wider than tall a row; a squarer one
   (a letter or two) takes the direction of the lines it joins;
4. joins: two lines of one direction and a like letter size (a column's width, a row's height)
   are one block when they stand side by side, overlapping along their length, and either at
   most `close_gap` letters apart (a column set lower, a ruby, letters outlined on tone) or, in
   one home, at most `line_gap` (rows: `row_gap`) apart and starting together, ending together
   or sharing their middle (`align`); or one after the other in one column (or row) and one
   home, at most `along_gap` letters apart (a column the detector cut in two, a caption's words);
5. each block keeps its lines in reading order (columns right to left, rows top to bottom), a line
   cut in two made one again, each `margin` px around its letters (fewer around small letters:
   `margin_share`); its box is their union; its font size their median thickness;
6. marks alone: a block of one line shaped like a single letter, or much thinner than the page's
   letters, is a drawn star, sparkle or speck on the open page, and goes; in a balloon or a box a
   thin one is punctuation alone ("…"), made as wide as the page's letters;
7. blocks in reading order: right to left, top to bottom when most are vertical (a Japanese
   page), else left to right.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.blocks.params import PARAMS, Params

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in image px, x1 and y1 exclusive


@dataclass(frozen=True)
class Block:
    box: Box  # around its lines: the letters and their ruby, a few px of margin at most
    vertical: bool
    lines: tuple[Box, ...]  # each column (vertical) or row, in reading order
    font_size: float  # image px: its letters' size (its lines' median thickness)

    def letters(self) -> float:
        """An estimate of its letters: its lines' lengths over its font size (at least 1)."""
        axis = 1 if self.vertical else 0
        length = sum(line[axis + 2] - line[axis] for line in self.lines)
        return max(1.0, length / max(1.0, self.font_size))


def union(boxes) -> Box:
    boxes = list(boxes)
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


class _Sets:
    """Union-find over n items."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        self.parent[self.find(i)] = self.find(j)


def _joins(b: np.ndarray, vertical: bool, home: np.ndarray, params: Params) -> np.ndarray:
    """Which pairs of lines (n×n) join when read in this direction; `b`: their letters' boxes,
    `home`: each one's home."""
    # along: the reading direction within a line; across: from one line to the next
    a0, a1, c0, c1 = b.T[[1, 3, 0, 2]] if vertical else b.T[[0, 2, 1, 3]]
    thick = (c1 - c0).astype(np.float64)
    length = (a1 - a0).astype(np.float64)
    letter = np.maximum(thick[:, None], thick[None, :])
    ratio = params.size_ratio if vertical else params.row_size_ratio
    alike = letter <= ratio * np.minimum(thick[:, None], thick[None, :])
    gap_across = np.maximum(c0[:, None], c0[None, :]) - np.minimum(c1[:, None], c1[None, :])
    gap_along = np.maximum(a0[:, None], a0[None, :]) - np.minimum(a1[:, None], a1[None, :])
    shorter = np.minimum(length[:, None], length[None, :])
    # lines of one block start together, end together or share their middle
    ends = np.minimum(
        np.minimum(np.abs(a0[:, None] - a0[None, :]), np.abs(a1[:, None] - a1[None, :])),
        np.abs((a0 + a1)[:, None] - (a0 + a1)[None, :]) / 2,
    )
    # lines closer than any two balloons' texts stand (no outline and paper fit between) are
    # one piece however they start (a column set lower) and whatever paper each seems to be on
    # (letters outlined in white on tone: each column's own halo)
    close = gap_across <= params.close_gap * letter
    at_home = home[:, None] == home[None, :]
    side = (
        (gap_across <= (params.line_gap if vertical else params.row_gap) * letter)
        & (-gap_along >= params.side_overlap * shorter)
        & ((ends <= params.align * letter) | close)
        & (at_home | close)
    )
    thinner = np.minimum(thick[:, None], thick[None, :])
    after = (
        (-gap_across >= params.same_line * thinner)
        & (gap_along <= params.along_gap * letter)
        & at_home
    )
    return alike & (side | after)


def _direction(boxes: np.ndarray, params: Params) -> np.ndarray:
    """Per line: 1 a column, -1 a row, 0 square enough to be either."""
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    return np.where(
        h >= params.direction_ratio * w, 1, np.where(w >= params.direction_ratio * h, -1, 0)
    )


def paper_levels(gray: np.ndarray, lines: list[Box]) -> list[float]:
    """Each line's paper level: the median luminance of its box (its letters are the fewer
    pixels)."""
    return [float(np.median(gray[y0:y1, x0:x1])) for x0, y0, x1, y1 in lines]


def homes(
    gray: np.ndarray, lines: list[Box], levels: list[float], params: Params
) -> tuple[list[int], list[bool]]:
    """Each line's home: the connected area of paper around it (a balloon's inside, a box, the
    page between panels), as a number; lines in one home may join, lines in two never (an
    outline or a border stands between them). Paper is the pixels within `paper_tolerance` of
    the line's paper level, 4-connected; a line's home is the area most of its paper belongs to.
    And whether each home is closed: a balloon's size or a box's (its longer side at most
    `lone_balloon_max` of the image's), not the open page around the drawing."""
    import cv2

    out = [0] * len(lines)
    closed = [False] * len(lines)
    longest = params.lone_balloon_max * max(gray.shape)
    todo = list(range(len(lines)))
    base = 0
    while todo:  # one labelling per paper level (white balloons; a game's dark box)
        level = levels[todo[0]]
        same = [i for i in todo if abs(levels[i] - level) <= params.paper_tolerance / 2]
        todo = [i for i in todo if i not in same]
        clear = np.abs(gray.astype(np.int16) - int(level)) <= params.paper_tolerance
        count, labels, stats, _ = cv2.connectedComponentsWithStats(
            clear.view(np.uint8), connectivity=4
        )
        for i in same:
            x0, y0, x1, y1 = lines[i]
            found = np.bincount(labels[y0:y1, x0:x1].ravel(), minlength=2)
            found[0] = 0  # not paper
            k = int(found.argmax())
            out[i] = base + k
            closed[i] = k > 0 and max(stats[k, 2], stats[k, 3]) <= longest
        base += count
    return out, closed


def tight(gray: np.ndarray, line: Box, level: float, params: Params) -> list[Box]:
    """The boxes of a line's letters (their ink, no margin): one, or two or more where the
    detector took close lines for one (columns a white gap apart all along, each as thick as the
    others); the line itself when no letter is found in it. Its letters are the marks of ink
    (pixels off its paper level by more than `paper_tolerance`) that lie within the box and a
    few px around it: a balloon's outline or a drawn line that the box cuts runs on beyond it,
    and is left out."""
    import cv2

    height, width = gray.shape
    x0, y0, x1, y1 = line
    g = params.margin
    cx0, cy0, cx1, cy1 = max(0, x0 - g), max(0, y0 - g), min(width, x1 + g), min(height, y1 + g)
    ink = np.abs(gray[cy0:cy1, cx0:cx1].astype(np.int16) - int(level)) > params.paper_tolerance
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink.view(np.uint8), connectivity=8)
    left, top, w, h = stats[1:, 0], stats[1:, 1], stats[1:, 2], stats[1:, 3]
    inner = (
        ((left > 0) | (cx0 == 0))
        & ((top > 0) | (cy0 == 0))
        & ((left + w < cx1 - cx0) | (cx1 == width))
        & ((top + h < cy1 - cy0) | (cy1 == height))
    )
    if not inner.any():
        return [line]
    marks = np.stack([left + cx0, top + cy0, left + w + cx0, top + h + cy0], axis=1)[inner]
    return [
        part
        for part in _parts(marks, y1 - y0 >= x1 - x0)
        if max(part[2] - part[0], part[3] - part[1]) >= params.min_letter  # a speck is no line
    ]


def around(ink: Box, line: Box, margin: int) -> Box:
    """Letters' box with `margin` px around it, never past the detector's box of their line."""
    return (
        max(line[0], ink[0] - margin),
        max(line[1], ink[1] - margin),
        min(line[2], ink[2] + margin),
        min(line[3], ink[3] + margin),
    )


def _parts(marks: np.ndarray, vertical: bool) -> list[tuple[int, int, int, int]]:
    """The boxes of a line's marks (x0, y0, x1, y1 rows): one, or one per line where a gap no mark
    crosses runs all along it (across: x for a column) and each side is a line's thickness (a ruby
    beside a column stays with it)."""
    c0, c1 = (0, 2) if vertical else (1, 3)
    order = np.argsort(marks[:, c0], kind="stable")
    reach = np.maximum.accumulate(marks[order, c1])
    cuts = np.flatnonzero(marks[order[1:], c0] >= reach[:-1]) + 1  # no mark crosses
    parts = [marks[idx] for idx in np.split(order, cuts)]
    thick = [int(p[:, c1].max() - p[:, c0].min()) for p in parts]
    while len(parts) > 1 and min(thick) < 0.6 * max(thick):  # a thin part joins its neighbour
        k = thick.index(min(thick))
        n = k - 1 if k == len(parts) - 1 or (k > 0 and thick[k - 1] < thick[k + 1]) else k + 1
        parts[min(k, n)] = np.concatenate([parts[k], parts[n]])
        del parts[max(k, n)]
        thick = [int(p[:, c1].max() - p[:, c0].min()) for p in parts]
    return [
        (int(p[:, 0].min()), int(p[:, 1].min()), int(p[:, 2].max()), int(p[:, 3].max()))
        for p in parts
    ]


def group(lines: list[Box], gray: np.ndarray | None = None, params: Params = PARAMS) -> list[Block]:
    """The blocks the lines make, in reading order; `gray`: the image's luminance, where ink
    walling two lines off keeps them apart."""
    if not lines:
        return []
    if gray is not None:
        levels = paper_levels(gray, lines)
        found, closed = homes(gray, lines, levels, params)
        pieces = [tight(gray, line, level, params) for line, level in zip(lines, levels)]
        home = [h for h, piece in zip(found, pieces) for _ in piece]
        inside = [c for c, piece in zip(closed, pieces) for _ in piece]
        owner = [line for line, piece in zip(lines, pieces) for _ in piece]
        inks = [r for piece in pieces for r in piece]
        if not inks:
            return []
    else:
        home, owner, inks = [0] * len(lines), list(lines), list(lines)
        inside = [True] * len(lines)
    b = np.array(inks, dtype=np.int64).reshape(-1, 4)
    way = _direction(b, params)
    sets = _Sets(len(b))
    for vertical, sign in ((True, 1), (False, -1)):
        ok = way != -sign  # this direction's lines and the square ones
        joins = _joins(b, vertical, np.array(home), params) & ok[:, None] & ok[None, :]
        for i, j in zip(*np.nonzero(np.triu(joins, 1))):
            sets.join(int(i), int(j))
    members: dict[int, list[int]] = {}
    for i in range(len(b)):
        members.setdefault(sets.find(i), []).append(i)
    blocks = [
        _block([inks[i] for i in idx], [owner[i] for i in idx], way[idx], params)
        for idx in members.values()
    ]
    alone = [len(idx) == 1 and not inside[idx[0]] for idx in members.values()]
    size = gray.shape if gray is not None else None
    return reading_order(_marks_alone(blocks, alone, size, params))


def _marks_alone(
    blocks: list[Block], open_page: list[bool], size: tuple[int, ...] | None, params: Params
) -> list[Block]:
    """The blocks less the marks that stand alone on the open page, with punctuation alone set
    in the page's letter cells. A block of one line is a mark when no longer than `lone_glyph`
    times its thickness (a letter's shape) or thinner than `punct_thin` of the page's letters
    (the median font size, known from three blocks on): on the open page around the drawing
    (`open_page`) such a mark is a drawn star, a sparkle or a speck (a letter alone is in a
    balloon or a box); elsewhere a thin one is "…", "⋮" or "ー", whose marks sit in the middle of
    letter cells, so its box is made as wide across as the page's letters."""
    letter = float(np.median([b.font_size for b in blocks])) if len(blocks) >= 3 else 0.0
    out = []
    for b, on_open in zip(blocks, open_page):
        x0, y0, x1, y1 = b.box
        thin = len(b.lines) == 1 and b.font_size < params.punct_thin * letter
        short = len(b.lines) == 1 and max(x1 - x0, y1 - y0) <= params.lone_glyph * min(
            x1 - x0, y1 - y0
        )
        if on_open and (thin or short):
            continue
        if thin:
            margin = min(params.margin, math.ceil(params.margin_share * letter))
            across = x1 - x0 if b.vertical else y1 - y0
            grow = max(0, round((letter + 2 * margin - across) / 2))
            if b.vertical:
                x0, x1 = x0 - grow, x1 + grow
            else:
                y0, y1 = y0 - grow, y1 + grow
            if size is not None:
                x0, y0, x1, y1 = max(0, x0), max(0, y0), min(size[1], x1), min(size[0], y1)
            b = Block((x0, y0, x1, y1), b.vertical, ((x0, y0, x1, y1),), letter)
        out.append(b)
    return out


def _block(inks: list[Box], owners: list[Box], way: np.ndarray, params: Params) -> Block:
    """A block of lines: their letters' boxes, each line's detector box and direction."""
    sizes = np.array([(x1 - x0, y1 - y0) for x0, y0, x1, y1 in inks], dtype=np.float64)
    lengths = sizes.max(axis=1)
    votes = float(lengths[way == 1].sum() - lengths[way == -1].sum())
    if votes == 0:  # squares only: a column unless clearly wider than tall
        x0, y0, x1, y1 = union(inks)
        vertical = y1 - y0 >= x1 - x0
    else:
        vertical = votes > 0
    font_size = max(1.0, float(np.median(sizes[:, 0] if vertical else sizes[:, 1])))
    # a few px around the letters, fewer around small ones (the box stays the letters' own)
    margin = min(params.margin, math.ceil(params.margin_share * font_size))
    merged = _merge_collinear([around(r, o, margin) for r, o in zip(inks, owners)], vertical)
    return Block(union(merged), vertical, tuple(merged), font_size)


def _merge_collinear(lines: list[Box], vertical: bool) -> list[Box]:
    """The lines in reading order, those that stand in one column (or row) made one."""
    across = (0, 2) if vertical else (1, 3)
    order = sorted(lines, key=lambda r: -(r[0] + r[2]) if vertical else r[1] + r[3])
    out: list[Box] = []
    for line in order:
        for k, other in enumerate(out):
            lo = max(line[across[0]], other[across[0]])
            hi = min(line[across[1]], other[across[1]])
            thinner = min(line[across[1]] - line[across[0]], other[across[1]] - other[across[0]])
            if hi - lo >= 0.5 * thinner:
                out[k] = union((line, other))
                break
        else:
            out.append(line)
    return out


def reading_order(blocks: list[Block]) -> list[Block]:
    """Right to left, top to bottom when most blocks are vertical (a Japanese page); left to
    right otherwise. Blocks whose tops lie above the middle of the row's first block form a row."""
    vertical = sum(b.vertical for b in blocks) * 2 >= len(blocks)
    rest = sorted(blocks, key=lambda b: b.box[1])
    ordered: list[Block] = []
    while rest:
        x0, y0, x1, y1 = rest[0].box
        limit = y0 + max((y1 - y0) // 2, 1)
        row = [b for b in rest if b.box[1] < limit]
        rest = [b for b in rest if b.box[1] >= limit]
        row.sort(key=lambda b: -b.box[2] if vertical else b.box[0])
        ordered += row
    return ordered


def block_at(blocks: list[Block], x: float, y: float, params: Params = PARAMS) -> Block | None:
    """The block a click at image px (x, y) proposes: the one whose box holds the point, or the
    nearest within `click_reach` letters of its box; None away from every block."""
    best, best_distance = None, None
    for block in blocks:
        x0, y0, x1, y1 = block.box
        dx = max(x0 - x, 0.0, x - (x1 - 1))
        dy = max(y0 - y, 0.0, y - (y1 - 1))
        distance = (dx * dx + dy * dy) ** 0.5
        if distance > min(params.click_reach * block.font_size, params.click_reach_px):
            continue
        if best_distance is None or distance < best_distance:
            best, best_distance = block, distance
    return best
