"""Where the result overlay goes: beside the boxed region, never over it, kept on the box's screen."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize

GAP = 10  # px between the box and the card


def placement(box: QRect, size: QSize, screen: QRect, gap: int = GAP) -> QPoint:
    """Top-left for a card of `size` beside `box`, inside `screen`, not covering the box when possible.

    Tries right, left, below, above (the reading flow of horizontal text, then the others); when
    none fits, the side with the most room is used and the card is clamped to the screen.
    """
    w, h = size.width(), size.height()

    def clamp(x: int, y: int) -> QPoint:
        x = max(screen.left(), min(x, screen.right() + 1 - w))
        y = max(screen.top(), min(y, screen.bottom() + 1 - h))
        return QPoint(x, y)

    candidates = [
        (
            screen.right() + 1 - (box.right() + 1 + gap),
            h <= screen.height(),
            clamp(box.right() + 1 + gap, box.top()),
        ),
        (
            box.left() - gap - screen.left(),
            h <= screen.height(),
            clamp(box.left() - gap - w, box.top()),
        ),
        (
            screen.bottom() + 1 - (box.bottom() + 1 + gap),
            w <= screen.width(),
            clamp(box.left(), box.bottom() + 1 + gap),
        ),
        (
            box.top() - gap - screen.top(),
            w <= screen.width(),
            clamp(box.left(), box.top() - gap - h),
        ),
    ]
    for (room, fits_across, point), need in zip(candidates, (w, w, h, h)):
        if room >= need and fits_across:
            return point
    best = max(range(4), key=lambda i: candidates[i][0] - (w, w, h, h)[i])
    return candidates[best][2]
