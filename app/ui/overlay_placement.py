"""Where the result overlay goes: beside the boxed region, never over it nor over the blocks it must
leave clear (the next one in reading order), kept on the box's screen."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QPoint, QRect, QSize

GAP = 10  # px between the box and the card
MAX_WIDTH = 520  # px: the card's widest
MIN_WIDTH = 300


def room_beside(box: QRect, screen: QRect, keep_clear: Iterable[QRect] = (), gap: int = GAP) -> int:
    """The width free left or right of `box`, up to the screen's edge or the first block to keep
    clear beside it, on the wider side, less the gaps: how wide a card beside a column can be. A
    block the box lies in (the box dragged inside its balloon) counts as the box."""
    keep = list(keep_clear)
    for r in keep:
        if r.intersects(box):
            box = box.united(r)
    beside = [r for r in keep if r.top() <= box.bottom() and r.bottom() >= box.top()]
    left = max([screen.left()] + [r.right() + 1 for r in beside if r.right() < box.left()])
    right = min([screen.right() + 1] + [r.left() for r in beside if r.left() > box.right()])
    return max(box.left() - left, right - box.right() - 1) - 2 * gap


def card_room(box: QRect, screen: QRect, vertical: bool, keep_clear: Iterable[QRect] = ()) -> QSize:
    """The most a card may take: the screen's height less the gaps, `MAX_WIDTH` wide; for vertical
    text beside its column, no wider than the room beside the box (a tall, narrow card)."""
    width = MAX_WIDTH
    if vertical and box.isValid() and screen.isValid():
        width = max(MIN_WIDTH, min(MAX_WIDTH, room_beside(box, screen, keep_clear)))
    return QSize(width, screen.height() - 2 * GAP if screen.isValid() else 2**16)


def placement(
    box: QRect, size: QSize, screen: QRect, keep_clear: Iterable[QRect] = (), gap: int = GAP
) -> QPoint:
    """Top-left for a card of `size` inside `screen`, covering neither `box` nor any of `keep_clear`,
    `gap` px off each, when there is room for that anywhere on the screen; then off the box alone.

    Nearest the box wins, then the side in the reading flow of horizontal text: right, left, below,
    above, lined up with the box. The positions tried are every screen edge and every side of what
    must stay clear: a card that fits somewhere fits at one of them (slid left and up until it
    touches something). When nothing fits, the side with the most room is used, clamped to the
    screen.
    """
    w, h = size.width(), size.height()
    keep = [QRect(r) for r in keep_clear if r.isValid()]
    for clear in ([box, *keep], [box]):
        blocked = [r.adjusted(-gap, -gap, gap, gap) for r in clear]
        xs = {box.right() + 1 + gap, box.left() - gap - w, box.left(), screen.left()}
        ys = {box.top(), box.bottom() + 1 + gap, box.top() - gap - h, screen.top()}
        xs |= {screen.right() + 1 - w, box.right() + 1 - w}
        ys |= {screen.bottom() + 1 - h, box.bottom() + 1 - h}
        for r in blocked:
            xs |= {r.right() + 1, r.left() - w}
            ys |= {r.bottom() + 1, r.top() - h}
        free = [
            card
            for card in (QRect(x, y, w, h) for x in xs for y in ys)
            if screen.contains(card) and not any(card.intersects(r) for r in blocked)
        ]
        if free:
            return min(free, key=lambda card: _rank(card, box)).topLeft()
    return _most_room(box, size, screen, gap)


def _rank(card: QRect, box: QRect) -> tuple[int, int, int]:
    """Distance from the box, side (right, left, below, above), misalignment with the box."""
    dx = max(0, box.left() - card.right(), card.left() - box.right())
    dy = max(0, box.top() - card.bottom(), card.top() - box.bottom())
    if card.left() > box.right():
        side = 0
    elif card.right() < box.left():
        side = 1
    else:
        side = 2 if card.top() > box.bottom() else 3
    along = abs(card.top() - box.top()) if side < 2 else abs(card.left() - box.left())
    return dx + dy, side, along


def _most_room(box: QRect, size: QSize, screen: QRect, gap: int) -> QPoint:
    """Nothing fits off the box: the side with the most room, the card clamped to the screen."""
    w, h = size.width(), size.height()

    def clamp(x: int, y: int) -> QPoint:
        x = max(screen.left(), min(x, screen.right() + 1 - w))
        y = max(screen.top(), min(y, screen.bottom() + 1 - h))
        return QPoint(x, y)

    sides = [
        (screen.right() + 1 - (box.right() + 1 + gap) - w, clamp(box.right() + 1 + gap, box.top())),
        (box.left() - gap - screen.left() - w, clamp(box.left() - gap - w, box.top())),
        (screen.bottom() - box.bottom() - gap - h, clamp(box.left(), box.bottom() + 1 + gap)),
        (box.top() - gap - screen.top() - h, clamp(box.left(), box.top() - gap - h)),
    ]
    return max(sides, key=lambda side: side[0])[1]
