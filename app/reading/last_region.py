"""The last boxed region, kept across restarts for `hayai watch --last` (virtual-desktop physical
px, in the config folder; standard library only)."""

from __future__ import annotations

import json

MIN_SIDE = 4  # px: as `hayai watch --region` asks

NO_LAST_REGION = (
    "no region has been boxed yet, so there is no last region to watch; box one with "
    "`hayai watch` (or the tray's “Watch a region…”)"
)


def last_region_file():
    from app.platform.paths import user_dir

    return user_dir("config") / "last-region.json"


def save_last_region(box_desktop_px) -> None:
    """Remember the last boxed region (virtual-desktop physical px) for `watch --last`; OSError."""
    from app.platform.private_files import private_file

    path = private_file(last_region_file())
    path.write_text(json.dumps({"box": [int(v) for v in box_desktop_px]}), encoding="utf-8")


def load_last_region() -> tuple[int, int, int, int] | None:
    """The remembered region, or None when there is none (or the file is not ours to trust)."""
    try:
        x, y, w, h = (int(v) for v in json.loads(last_region_file().read_text("utf-8"))["box"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (x, y, w, h) if w >= MIN_SIDE and h >= MIN_SIDE else None
