"""Every themed window's dialogs stay readable: Qt's own folder dialog and message boxes inherit the
Hayai style sheet, so their text must contrast with what it is drawn on (WCAG's 4.5:1 for text)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QFileDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QWidget,
)

from app.ui import theme

pytestmark = pytest.mark.gui


def _luminance(colour: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(colour.redF())
        + 0.7152 * channel(colour.greenF())
        + 0.0722 * channel(colour.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _drawn_contrast(image: QImage, rect) -> float:
    """In the pixels of `rect`: the contrast of the colour most unlike the background (the most
    common colour) with that background: a widget's text at its darkest or lightest."""
    counts: dict[int, int] = {}
    for y in range(rect.top(), rect.bottom() + 1, 1):
        for x in range(rect.left(), rect.right() + 1, 1):
            rgb = image.pixel(x, y)
            counts[rgb] = counts.get(rgb, 0) + 1
    background = QColor.fromRgb(max(counts, key=counts.get))
    return max(contrast(QColor.fromRgb(rgb), background) for rgb in counts)


def _unreadable(dialog: QDialog) -> list[str]:
    """Widgets with text whose drawn text hardly stands out from what it is drawn on."""
    image = dialog.grab().toImage()
    problems = []
    for widget in dialog.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not dialog:
            continue
        if isinstance(widget, (QLabel, QPushButton)) and widget.text():
            area = widget
        elif isinstance(widget, QAbstractItemView) and widget.model().rowCount(widget.rootIndex()):
            area = widget.viewport()
        else:
            continue
        rect = QRect(area.mapTo(dialog, QPoint(0, 0)), area.size()).intersected(dialog.rect())
        ratio = _drawn_contrast(image, rect)
        if ratio < 4.5:
            name = widget.objectName() or type(widget).__name__
            problems.append(f"{name} {getattr(widget, 'text', lambda: '')()!r}: {ratio:.1f}:1")
    return problems


@pytest.fixture
def themed_window(qtbot):
    window = QWidget()
    theme.apply(window, "HayaiWindow")
    qtbot.addWidget(window)
    window.show()
    return window


def test_the_folder_chooser_is_readable_under_the_theme(themed_window, qtbot, tmp_path):
    (tmp_path / "hayai-v2.1").mkdir()
    dialog = QFileDialog(themed_window, "Choose the folder with the model files", str(tmp_path))
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # Qt's own, as without a desktop
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    QApplication.processEvents()
    for _ in range(50):  # the listing fills in from a thread
        views = [v for v in dialog.findChildren(QAbstractItemView) if v.objectName() == "treeView"]
        if views and views[0].model().rowCount(views[0].rootIndex()):
            break
        qtbot.wait(20)
    corner = QColor.fromRgb(dialog.grab().toImage().pixel(2, dialog.height() // 2))
    assert contrast(corner, QColor(theme.BACKGROUND)) < 1.1  # the theme's card, all of it
    assert _unreadable(dialog) == []


def test_message_boxes_are_readable_under_the_theme(themed_window, qtbot):
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Clear history",
        "Delete every capture in the history?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        themed_window,
    )
    qtbot.addWidget(box)
    box.show()
    qtbot.waitExposed(box)
    assert _unreadable(box) == []
