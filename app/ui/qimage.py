"""The history's thumbnails, decoded through the one safe loader (model/images.py); the pixels'
conversion is app/platform/qt_images.py's."""

from __future__ import annotations

import logging

from PySide6.QtGui import QPixmap

from app.platform.qt_images import pil_to_qimage
from model.config import ImageCap

log = logging.getLogger(__name__)

# the loader's pixel cap for a thumbnail: 1 × 256² px (ours are ≤ 160 px a side)
THUMBNAIL_CAP = ImageCap(budget=1)


def thumbnail_pixmap(data: bytes) -> QPixmap | None:
    """A stored thumbnail as a pixmap; None (logged) when the bytes are not a small raster image."""
    from model.images import ImageError, open_image

    try:
        return QPixmap.fromImage(pil_to_qimage(open_image(data, THUMBNAIL_CAP)))
    except ImageError as exc:
        log.info("history thumbnail not shown: %s", exc)
        return None
