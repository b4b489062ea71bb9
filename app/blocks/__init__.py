"""Text blocks found by a learned detector: an image → its blocks; a point → the block a click
there proposes. No Qt here (`hayai blocks` and `hayai page` run without PySide6).

`find_blocks(image)` runs the detector (PP-OCRv6 det small, app/blocks/detector.py) over the
image and joins its lines into blocks (app/blocks/grouping.py), in reading order; `block_at(blocks,
x, y)` is the click rule, the same for the selection and `hayai blocks --at`. Everything tuned is in
app/blocks/params.py. The detector takes a few hundred milliseconds a page: never call
`find_blocks` on the GUI thread.
"""

from __future__ import annotations

from typing import Any

from app.blocks.grouping import Block, Box, block_at
from app.blocks.params import PARAMS, Params

__all__ = ["Block", "Box", "block_at", "find_blocks"]


def find_blocks(image: Any, bgr: bool = False, params: Params = PARAMS) -> list[Block]:
    """The text blocks of a PIL image or a numpy gray, RGB or RGBA array (BGR or BGRA with
    `bgr`: a Qt screen's pixels), in reading order, in the image's pixels."""
    import cv2

    from app.blocks.detector import as_bgr, detect_lines
    from app.blocks.grouping import group, reading_order
    from app.blocks.marks import lone_marks

    image = as_bgr(image, bgr)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    lines, _ = detect_lines(image, params)
    found = group(lines, gray, params)
    return reading_order(found + lone_marks(gray, found, params))
