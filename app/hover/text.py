"""Which character of a read block is under the pointer (no Qt): for Hover to read (app/flows/hover.py)
and the whole screen's boxes (app/ui/page_view.py).

The block's text is first spread over its lines, the detector's line boxes in reading order
(`spread`: the model's own line breaks where it wrote one per line, else each line a share of the
letters in proportion to its length, as `app.page.read.split_lines` cuts them). The character under a
point is then the one at the point's share of the nearest line's length: along a column downwards
(vertical text, columns right to left), along a row rightwards (rows top to bottom). The letters of
one block have one size, so a share of a line's length is a share of its letters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.page.read import split_lines

Box = Sequence[int]  # x0, y0, x1, y1 in image px, x1 and y1 exclusive


@dataclass(frozen=True)
class Spot:
    """A character of a block's text: its index in the lines joined, and which line holds it."""

    index: int
    line: int


def spread(text: str, boxes: Sequence[Box], vertical: bool) -> list[str]:
    """`text` (a block read as one) over `boxes`, one string per box; joined, they are the text
    without its line breaks."""
    lengths = [(y1 - y0) if vertical else (x1 - x0) for x0, y0, x1, y1 in boxes]
    return split_lines(text, lengths)


def char_at(
    boxes: Sequence[Box],
    vertical: bool,
    lines: Sequence[str],
    x: float,
    y: float,
    reach: float | None = None,
) -> Spot | None:
    """The character at (x, y) of a block whose `lines` (see `spread`) stand in `boxes`: in the
    line nearest the point across the text (a point inside a line is in it), at the point's share
    of that line's length. None when there is no text, the lines and boxes do not pair up, or the
    point lies more than `reach` px beyond the ends of that line (None: any distance)."""
    if not boxes or len(lines) != len(boxes) or not any(lines):
        return None
    p_across, p_along = (x, y) if vertical else (y, x)

    def distance(box: Box) -> tuple[float, float]:
        lo, hi = (box[0], box[2]) if vertical else (box[1], box[3])
        outside = max(lo - p_across, 0.0, p_across - (hi - 1))
        return outside, abs(
            (lo + hi) / 2 - p_across
        )  # ties (ruby beside a line): the nearer middle

    candidates = [k for k in range(len(boxes)) if lines[k]]
    k = min(candidates, key=lambda i: distance(boxes[i]))
    x0, y0, x1, y1 = boxes[k]
    a0, a1 = (y0, y1) if vertical else (x0, x1)
    if reach is not None and not a0 - reach <= p_along < a1 + reach:
        return None
    share = min(max((p_along - a0) / max(1, a1 - a0), 0.0), 0.999)
    before = sum(len(line) for line in lines[:k])
    return Spot(before + int(share * len(lines[k])), k)
