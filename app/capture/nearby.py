"""What the text blocks of a frozen screen say about one read (no Qt): the blocks the overlay must
leave uncovered, and the read's direction.

The selection hands a `Nearby` on with its `Selection` (app/ui/selection_window.py) and the read
keeps it in its `Region` (app/flows/reads.py): the overlay is placed off `keep_clear` (the block read and
the next one in reading order: what the user reads next) and opens in `vertical` (the block's
direction; None: not known, the setting decides). `nearby(box, blocks)` makes one from the
finder's blocks of the screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.capture.models import Rect


@dataclass(frozen=True)
class Nearby:
    keep_clear: tuple[Rect, ...] = ()  # x, y, w, h, in the coordinates of the box it comes with
    vertical: bool | None = None  # the read block's direction; None: not known

    def mapped(self, convert) -> Nearby:
        """The same, each rect through `convert(rect) -> rect` (image px to logical, say)."""
        return Nearby(tuple(convert(r) for r in self.keep_clear), self.vertical)


def _overlap(a: Rect, b: Rect) -> int:
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, w) * max(0, h)


def nearby(box: Rect, blocks: Sequence[tuple[Rect, bool]]) -> Nearby:
    """The `Nearby` of a read of `box`, from the screen's `blocks` (rect, vertical) in reading
    order, in the box's coordinates: the block the box holds most of and the one after it; with
    no block under the box, nothing is known."""
    shares = [_overlap(box, rect) for rect, _ in blocks]
    if not shares or max(shares) == 0:
        return Nearby()
    read = shares.index(max(shares))
    keep = tuple(rect for rect, _ in blocks[read : read + 2])
    return Nearby(keep, blocks[read][1])
