"""Balloons that hold punctuation alone ("！", "？", "…"): the detector, trained on lines of
letters, gives such marks a probability of text near nothing (000b's "！" 0.01, 002b's "．．．"
0.05), so a second look finds them.

A balloon here is a closed area of paper (pixels at least `lone_paper` light, 4-connected) of a
balloon's size and compact, away from the image's edges, that holds no block the detector found.
The ink it encloses (its holes) is punctuation alone when it is a few marks near its middle,
spanning less than `lone_span` of it, that are either three or more dots of one size evenly in a
straight row ("…", "．．．") or
upright strokes each with a dot beyond its lower end ("！", "？", "！！"), and printed in ink: their
pixels on average `lone_ink` darker than the balloon's paper. A pupil in an eye's white (one blot,
no dot), a mouth or a curl of hair (a stroke without a dot) is not, nor a grey sparkle or hatching
on a light wall.
"""

from __future__ import annotations

import numpy as np

from app.blocks.grouping import Block, Box
from app.blocks.params import PARAMS, Params


def lone_marks(gray: np.ndarray, found: list[Block], params: Params = PARAMS) -> list[Block]:
    """The blocks of punctuation alone in balloons that hold none of the `found` blocks."""
    import cv2

    height, width = gray.shape
    paper = (gray >= params.lone_paper).view(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=4)
    x, y, w, h, area = stats.T
    longest = params.lone_balloon_max * max(height, width)
    ok = (
        (np.minimum(w, h) >= params.lone_balloon_min)
        & (np.maximum(w, h) <= longest)
        & (area >= params.lone_fill * w * h)
        & (x > 0)
        & (y > 0)
        & (x + w < width)
        & (y + h < height)
    )
    ok[0] = False  # ink
    out: list[Block] = []
    for k in np.flatnonzero(ok):
        balloon = (int(x[k]), int(y[k]), int(x[k] + w[k]), int(y[k] + h[k]))
        if any(_inside(b.box, balloon) for b in found):
            continue
        inside = labels[balloon[1] : balloon[3], balloon[0] : balloon[2]] == k
        marks, held = _holes(inside)
        block = _punctuation(marks, balloon, params)
        if block is None:
            continue
        region = gray[balloon[1] : balloon[3], balloon[0] : balloon[2]]
        kept = np.flatnonzero(marks[:, 4] >= params.lone_speck) + 1  # the marks' labels
        ink = float(region[np.isin(held, kept)].mean())
        if ink <= float(np.median(region[inside])) - params.lone_ink:
            out.append(block)
    return out


def _inside(box: Box, balloon: Box) -> bool:
    """Whether a block's middle lies in a balloon's box."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return balloon[0] <= cx < balloon[2] and balloon[1] <= cy < balloon[3]


def _holes(inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The marks an area of paper encloses: each one's box (x0, y0, x1, y1) and pixels, as rows
    of an (n, 5) array in the area's pixels; and their labels (row i is label i + 1, 0 none)."""
    import cv2

    outside = np.pad(~inside, 1, constant_values=True).view(np.uint8) * np.uint8(255)
    mask = np.zeros((outside.shape[0] + 2, outside.shape[1] + 2), np.uint8)
    cv2.floodFill(outside, mask, (0, 0), 0)  # what reaches the border is not enclosed
    enclosed = (outside[1:-1, 1:-1] > 0).view(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(enclosed, connectivity=8)
    s = stats[1:]
    boxes = np.stack([s[:, 0], s[:, 1], s[:, 0] + s[:, 2], s[:, 1] + s[:, 3], s[:, 4]], axis=1)
    return boxes, labels


def _punctuation(marks: np.ndarray, balloon: Box, params: Params) -> Block | None:
    """The block of a balloon's marks when they are punctuation alone (module docstring)."""
    marks = marks[marks[:, 4] >= params.lone_speck]
    if not 1 <= len(marks) <= params.lone_pieces:
        return None
    bw, bh = balloon[2] - balloon[0], balloon[3] - balloon[1]
    x0, y0 = int(marks[:, 0].min()), int(marks[:, 1].min())
    x1, y1 = int(marks[:, 2].max()), int(marks[:, 3].max())
    if x1 - x0 > params.lone_span * bw or y1 - y0 > params.lone_span * bh:
        return None
    middle = params.lone_middle
    if abs((x0 + x1) / 2 - bw / 2) > middle * bw or abs((y0 + y1) / 2 - bh / 2) > middle * bh:
        return None
    sides = np.stack([marks[:, 2] - marks[:, 0], marks[:, 3] - marks[:, 1]], axis=1)
    size = sides.max(axis=1)
    centres = np.stack([marks[:, 0] + marks[:, 2], marks[:, 1] + marks[:, 3]], axis=1) / 2
    round_ = (size <= 1.6 * np.maximum(sides.min(axis=1), 1)).all()
    ellipsis = round_ and len(marks) >= 3 and size.max() <= 2 * size.min()
    dots = size <= params.lone_dot * size.max()
    if ellipsis:
        if not _in_a_row(centres):
            return None
    elif not _strokes_with_dots(marks[~dots], centres[dots], params):
        return None
    vertical = y1 - y0 >= x1 - x0
    long, short = max(x1 - x0, y1 - y0), min(x1 - x0, y1 - y0)
    # the letters' size: a "！" is about one letter high; dots stand about a letter apart at
    # most ("．．．"), and closer in "…"; the box is as wide across as that
    letter = max(short, long / (len(marks) - 1) if ellipsis else long / 2)
    grow = max(0, round((letter - short) / 2))
    gx, gy = (grow, 0) if vertical else (0, grow)
    m = params.margin
    box = (
        balloon[0] + x0 - m - gx,
        balloon[1] + y0 - m - gy,
        balloon[0] + x1 + m + gx,
        balloon[1] + y1 + m + gy,
    )
    return Block(box, vertical, (box,), float(letter))


def _in_a_row(centres: np.ndarray) -> bool:
    """Whether points lie evenly on one straight line (the dots of "…")."""
    d = centres - centres.mean(axis=0)
    _, sv, vt = np.linalg.svd(d, full_matrices=False)
    steps = np.diff(np.sort(d @ vt[0]))
    return bool(sv[1] <= 0.15 * sv[0] and steps.max() <= 2 * max(steps.min(), 1.0))


def _strokes_with_dots(strokes: np.ndarray, dots: np.ndarray, params: Params) -> bool:
    """Whether every stroke is upright, no blot, and has a dot beyond its lower end ("！", "？")."""
    if len(strokes) > 2 or len(dots) < len(strokes):
        return False
    for x0, y0, x1, y1, pixels in strokes:
        w, h = x1 - x0, y1 - y0
        solid = pixels > params.lone_blot * w * h  # a bar; a round solid one is a pupil
        if h < (params.lone_bar if solid else params.lone_upright) * w:
            return False
        below = (
            (dots[:, 1] > y1 - h / 4)
            & (dots[:, 1] < y1 + h)
            & (dots[:, 0] >= x0 - w)
            & (dots[:, 0] <= x1 + w)
        )
        if not below.any():
            return False
    return True
