"""Lines into blocks: the detector's line boxes joined into the pieces a reader reads as one (a
balloon's columns, a narration box's rows, a caption), in reading order; and the block a click
means. Every value named here is in app/blocks/params.py.

1. paper: each line's paper level (the median of its box: its letters are the fewer pixels) and
   its home, the connected area of pixels near that level around it (a balloon's inside, a box,
   the page between panels): lines in two homes never join (an outline or a border between);
2. letters: each box shrunk to the marks of ink within it (an outline it cuts runs on beyond it
   and is left out), `margin` px around them; where the detector took close lines for one, a gap
   no mark crosses all along it parts them (a ruby beside a column stays with it); a speck goes;
3. direction: a line much taller than wide is a column, much wider than tall a row; a squarer one
   (a letter or two) takes the direction of the lines it joins;
4. joins: two lines of one direction, one home and a like letter size (a column's width, a row's
   height) are one block when they stand side by side, at most `line_gap` (rows: `row_gap`)
   letters apart, overlapping along their length and starting together, ending together or
   sharing their middle (`align`); or one after the other in one column (or row), at most
   `along_gap` letters apart (a column the detector cut in two);
5. each block keeps its lines in reading order (columns right to left, rows top to bottom), a line
   cut in two made one again; its box is their union; its font size their median thickness less
   the margins;
6. blocks in reading order: right to left, top to bottom when most are vertical (a Japanese
   page), else left to right.
"""

from __future__ import annotations

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


def _joins(b: np.ndarray, vertical: bool, params: Params) -> np.ndarray:
    """Which pairs of lines (n×n) join when read in this direction."""
    # along: the reading direction within a line; across: from one line to the next
    a0, a1, c0, c1 = b.T[[1, 3, 0, 2]] if vertical else b.T[[0, 2, 1, 3]]
    thick = (c1 - c0).astype(np.float64)
    length = (a1 - a0).astype(np.float64)
    letter = np.maximum(thick[:, None], thick[None, :])
    alike = letter <= params.size_ratio * np.minimum(thick[:, None], thick[None, :])
    gap_across = np.maximum(c0[:, None], c0[None, :]) - np.minimum(c1[:, None], c1[None, :])
    gap_along = np.maximum(a0[:, None], a0[None, :]) - np.minimum(a1[:, None], a1[None, :])
    shorter = np.minimum(length[:, None], length[None, :])
    # lines of one block start together, end together or share their middle
    ends = np.minimum(
        np.minimum(np.abs(a0[:, None] - a0[None, :]), np.abs(a1[:, None] - a1[None, :])),
        np.abs((a0 + a1)[:, None] - (a0 + a1)[None, :]) / 2,
    )
    side = (
        (gap_across <= (params.line_gap if vertical else params.row_gap) * letter)
        & (-gap_along >= params.side_overlap * shorter)
        & (ends <= params.align * letter)
    )
    thinner = np.minimum(thick[:, None], thick[None, :])
    after = (-gap_across >= params.same_line * thinner) & (gap_along <= params.along_gap * letter)
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


def homes(gray: np.ndarray, lines: list[Box], levels: list[float], params: Params) -> list[int]:
    """Each line's home: the connected area of paper around it (a balloon's inside, a box, the
    page between panels), as a number; lines in one home may join, lines in two never (an
    outline or a border stands between them). Paper is the pixels within `paper_tolerance` of
    the line's paper level, 4-connected; a line's home is the area most of its paper belongs to."""
    import cv2

    out = [0] * len(lines)
    todo = list(range(len(lines)))
    base = 0
    while todo:  # one labelling per paper level (white balloons; a game's dark box)
        level = levels[todo[0]]
        same = [i for i in todo if abs(levels[i] - level) <= params.paper_tolerance / 2]
        todo = [i for i in todo if i not in same]
        clear = np.abs(gray.astype(np.int16) - int(level)) <= params.paper_tolerance
        count, labels = cv2.connectedComponents(clear.view(np.uint8), connectivity=4)
        for i in same:
            x0, y0, x1, y1 = lines[i]
            found = np.bincount(labels[y0:y1, x0:x1].ravel(), minlength=2)
            found[0] = 0  # not paper
            out[i] = base + int(found.argmax())
        base += count
    return out


def tight(gray: np.ndarray, line: Box, level: float, params: Params) -> list[Box]:
    """A line's box shrunk to its letters and `margin` px around them, never past the detector's
    box; two or more boxes where the detector took close lines for one (columns a white gap
    apart all along, each as thick as the others). Its letters are the marks of ink (pixels off
    its paper level by more than `paper_tolerance`) that lie within the box and a few px around
    it: a balloon's outline or a drawn line that the box cuts runs on beyond it, and is left out."""
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
    m = params.margin
    return [
        (max(x0, a - m), max(y0, b - m), min(x1, c + m), min(y1, d + m))
        for a, b, c, d in _parts(marks, y1 - y0 >= x1 - x0)
        if max(c - a, d - b) >= params.min_letter  # a speck is no line of letters
    ]


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
    b = np.array(lines, dtype=np.int64).reshape(-1, 4)
    way = _direction(b, params)
    if gray is not None:
        levels = paper_levels(gray, lines)
        found = homes(gray, lines, levels, params)
        pieces = [tight(gray, line, level, params) for line, level in zip(lines, levels)]
        if not any(pieces):
            return []
        home = [h for h, piece in zip(found, pieces) for _ in piece]
        lines = [r for piece in pieces for r in piece]
        b = np.array(lines, dtype=np.int64).reshape(-1, 4)
        way = _direction(b, params)
    else:
        home = [0] * len(lines)
    sets = _Sets(len(b))
    for vertical, sign in ((True, 1), (False, -1)):
        ok = way != -sign  # this direction's lines and the square ones
        joins = _joins(b, vertical, params) & ok[:, None] & ok[None, :]
        for i, j in zip(*np.nonzero(np.triu(joins, 1))):
            if home[i] != home[j]:
                continue
            sets.join(int(i), int(j))
    members: dict[int, list[int]] = {}
    for i in range(len(b)):
        members.setdefault(sets.find(i), []).append(i)
    inset = 2 * params.margin if gray is not None else 0  # a tight line's margins, both sides
    blocks = [_block([lines[i] for i in idx], way[idx], inset) for idx in members.values()]
    return reading_order(blocks)


def _block(lines: list[Box], way: np.ndarray, inset: int) -> Block:
    sizes = np.array([(x1 - x0, y1 - y0) for x0, y0, x1, y1 in lines], dtype=np.float64)
    lengths = sizes.max(axis=1)
    votes = float(lengths[way == 1].sum() - lengths[way == -1].sum())
    if votes == 0:  # squares only: a column unless clearly wider than tall
        x0, y0, x1, y1 = union(lines)
        vertical = y1 - y0 >= x1 - x0
    else:
        vertical = votes > 0
    thickness = float(np.median(sizes[:, 0] if vertical else sizes[:, 1]))
    font_size = max(1.0, thickness - inset)  # the letters' own size, without the margins
    merged = _merge_collinear(lines, vertical)
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
