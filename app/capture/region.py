"""A region of a screen to read: where it is in each coordinate system, and what the selection
knew around it. Every read keeps its own (app/flows/reads.py); re-scan and a watch read the last
one boxed again."""

from __future__ import annotations

from dataclasses import dataclass

from app.capture.nearby import Nearby


@dataclass(frozen=True)
class Region:
    """The last boxed region, for re-scan."""

    screen_name: str
    box_image_px: tuple[int, int, int, int]
    box_desktop_px: tuple[int, int, int, int]
    logical_rect: tuple[int, int, int, int]
    # what the selection knew around the box, logical: blocks the overlay leaves clear, direction
    nearby: Nearby = Nearby()
