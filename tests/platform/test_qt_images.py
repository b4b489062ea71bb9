"""app/platform/qt_images.py is the one place that converts pixels between Qt and the engine, and
app/ui/screens.py the one place that answers where on a screen our windows may go."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QGuiApplication, QImage

from app.platform.qt_images import bgra_to_qimage, pil_to_qimage, qimage_bgra, qimage_to_pil
from app.ui.screens import FALLBACK_AREA, screen_area

APP = Path(__file__).resolve().parents[2] / "app"
# A QImage's bytes are read (constBits/bits) or a QImage built over bytes (data, w, h, stride, format)
# only in app/platform/qt_images.py.
PIXEL_ACCESS = {"constBits", "bits"}

pytestmark = pytest.mark.gui


def noise(height: int, width: int, channels: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (height, width, channels), dtype=np.uint8)


def test_pil_qimage_pil_is_exact_with_odd_widths(qapp):
    for width in (1, 13, 64):  # 13 × 3 bytes: rows padded to 4 bytes inside the QImage
        pil = Image.fromarray(noise(7, width, 3, width))
        image = pil_to_qimage(pil)
        assert (image.width(), image.height()) == (width, 7)
        assert qimage_to_pil(image).tobytes() == pil.tobytes()
    gray = Image.fromarray(noise(5, 9, 1)[:, :, 0])  # any mode goes in as RGB
    assert qimage_to_pil(pil_to_qimage(gray)).tobytes() == gray.convert("RGB").tobytes()


def test_bgra_rows_become_an_rgb32_image_and_back(qapp):
    bgra = noise(6, 11, 4)
    bgra[:, :, 3] = 255  # RGB32: the fourth byte is 0xff
    data = bgra.tobytes()
    image = bgra_to_qimage(data, 11, 6)
    del data  # the image owns a copy
    assert image.format() == QImage.Format.Format_RGB32
    assert np.array_equal(qimage_bgra(image), bgra)
    b, g, r, _ = bgra[2, 3]
    assert qimage_to_pil(image).getpixel((3, 2)) == (r, g, b)
    # another format is converted (a copy), the RGB32 one read in place (a view)
    assert np.array_equal(qimage_bgra(image.convertToFormat(QImage.Format.Format_RGB888)), bgra)
    assert not qimage_bgra(image).flags.owndata


def test_no_other_module_touches_a_qimage_s_bytes():
    offenders = []
    for path in sorted(APP.rglob("*.py")):
        if path.name == "qt_images.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(APP.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and node.attr in PIXEL_ACCESS:
                offenders.append(f"{where} .{node.attr}")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "QImage"
                and len(node.args) >= 4
            ):
                offenders.append(f"{where} QImage(data, ...)")
    assert offenders == []


def test_screen_area_is_the_free_area_of_the_screen_at_a_point(qapp):
    primary = QGuiApplication.primaryScreen()
    assert primary is not None  # offscreen Qt has one screen
    assert screen_area() == primary.availableGeometry()
    assert screen_area(primary.geometry().center()) == primary.availableGeometry()
    assert screen_area(QPoint(-(10**6), -(10**6))) == primary.availableGeometry()  # on no screen
    assert FALLBACK_AREA == QRect(0, 0, 1920, 1080)


def test_no_other_module_picks_a_screen_area_itself():
    # the windows outside app/application.py (its two places are the Application split's, #26)
    offenders = [
        str(path.relative_to(APP.parent))
        for path in sorted((APP / "ui").rglob("*.py"))
        if path.name != "screens.py" and "availableGeometry" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
