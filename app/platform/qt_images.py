"""Pixels between Qt and the engine: QImage ↔ PIL ↔ numpy BGRA, the one place that reads or builds
a QImage's bytes.

Screens are grabbed as RGB32 QImages (B, G, R, A bytes on little-endian machines, as mss gives
them); the engine reads RGB PIL images; change detection, the clipboard's image hash and the text
detector read numpy views. Every function works on QImage (never QPixmap), so any thread may call it.
"""

from __future__ import annotations

import numpy as np
from PIL import Image
from PySide6.QtGui import QImage


def qimage_to_pil(image: QImage) -> Image.Image:
    """An RGB PIL copy of a QImage (any format)."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    width, height, stride = rgb.width(), rgb.height(), rgb.bytesPerLine()
    data = bytes(rgb.constBits())[: stride * height]
    return Image.frombuffer("RGB", (width, height), data, "raw", "RGB", stride, 1).copy()


def pil_to_qimage(pil: Image.Image) -> QImage:
    """A QImage (RGB888) that owns a copy of the PIL image's pixels (any mode, converted to RGB)."""
    rgb = pil if pil.mode == "RGB" else pil.convert("RGB")
    data = rgb.tobytes()
    image = QImage(data, rgb.width, rgb.height, rgb.width * 3, QImage.Format.Format_RGB888)
    return image.copy()  # own the pixels: `data` goes away


def bgra_to_qimage(data, width: int, height: int) -> QImage:
    """An RGB32 QImage that owns a copy of `data`: rows of `width` B, G, R, A pixels (what mss
    grabs, or a numpy array's bytes)."""
    return QImage(data, width, height, width * 4, QImage.Format.Format_RGB32).copy()


def qimage_bgra(image: QImage) -> np.ndarray:
    """An (h, w, 4) B, G, R, A view of an RGB32 image's pixels (a converted copy for other formats)."""
    converted = image.format() not in (QImage.Format.Format_RGB32, QImage.Format.Format_ARGB32)
    if converted:
        image = image.convertToFormat(QImage.Format.Format_RGB32)
    h, w, bpl = image.height(), image.width(), image.bytesPerLine()
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=bpl * h)
    view = data.reshape(h, bpl // 4, 4)[:, :w]
    return view.copy() if converted else view  # the converted image is gone after the return
