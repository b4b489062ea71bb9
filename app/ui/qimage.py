"""PIL ↔ Qt images, and the history's thumbnails decoded through the one safe loader (model/images.py)."""

from __future__ import annotations

import logging

from PySide6.QtGui import QImage, QPixmap

log = logging.getLogger(__name__)

THUMBNAIL_PATCHES = (
    1  # the loader's pixel cap for a thumbnail: 1 × 256² px (ours are ≤ 160 px a side)
)


def pil_to_qimage(pil) -> QImage:
    rgb = pil.convert("RGB")
    data = rgb.tobytes()
    image = QImage(data, rgb.width, rgb.height, rgb.width * 3, QImage.Format.Format_RGB888)
    return image.copy()  # own the pixels: `data` goes away


def thumbnail_pixmap(data: bytes) -> QPixmap | None:
    """A stored thumbnail as a pixmap; None (logged) when the bytes are not a small raster image."""
    from model.images import ImageError, open_image

    try:
        return QPixmap.fromImage(pil_to_qimage(open_image(data, THUMBNAIL_PATCHES)))
    except ImageError as exc:
        log.info("history thumbnail not shown: %s", exc)
        return None
