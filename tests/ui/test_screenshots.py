"""Screenshots of every window, rendered headless: the test checks they render (not blank, sane sizes);
`python tests/ui/test_screenshots.py docs/screenshots` writes the README images.

Scenes are composed the way the user sees them: the boxed text (a sample crop from resources/),
the accent box of the selection, and the overlay card beside it with its rounded corners.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QWidget

pytestmark = pytest.mark.gui

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _card(widget) -> QPixmap:
    """The overlay as it looks on screen: grab() ignores the window mask, so clip to the rounded card."""
    from app.ui.overlay_card import RADIUS

    grab = widget.grab()
    out = QPixmap(grab.size())
    out.fill(Qt.GlobalColor.transparent)
    painter = QPainter(out)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    path = QPainterPath()
    path.addRoundedRect(QRectF(out.rect()), RADIUS, RADIUS)
    painter.setClipPath(path)
    painter.drawPixmap(0, 0, grab)
    painter.end()
    return out


def _shadowed(painter: QPainter, pixmap: QPixmap, at: QPoint) -> None:
    for i, alpha in ((10, 18), (6, 28), (3, 40)):
        path = QPainterPath()
        path.addRoundedRect(
            QRectF(at.x() - i / 2, at.y() - i / 4, pixmap.width() + i, pixmap.height() + i), 16, 16
        )
        painter.fillPath(path, QColor(0, 0, 0, alpha))
    painter.drawPixmap(at, pixmap)


def _scene(sample: str, scale: float, size: QSize, box_at: QPoint, overlay_setup) -> QImage:
    import resources
    from app.ui.overlay import Overlay
    from app.ui.overlay_placement import placement

    page = QImage(str(resources.path(sample)))
    page = page.scaled(
        int(page.width() * scale),
        int(page.height() * scale),
        Qt.AspectRatioMode.KeepAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )
    scene = QImage(size, QImage.Format.Format_RGB32)
    scene.fill(QColor("#e7e2d6"))  # a paper-coloured reader page
    painter = QPainter(scene)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.drawImage(box_at, page)
    box = QRect(box_at, page.size()).adjusted(-6, -6, 6, 6)
    painter.setPen(QPen(QColor("#38bdf8"), 2))
    painter.drawRect(box)
    overlay = Overlay()
    overlay_setup(overlay, box, QRect(QPoint(0, 0), size))
    card = _card(overlay)
    _shadowed(
        painter,
        card,
        placement(box, card.size(), QRect(QPoint(0, 0), size).adjusted(16, 16, -16, -16)),
    )
    painter.end()
    overlay.close()
    overlay.deleteLater()
    return scene


def overlay_horizontal() -> QImage:
    def setup(o, box, screen):
        o.configure("Noto Sans CJK JP", 20, False)
        o.set_anchor(box, screen)
        o.show_result("今日はいい天気ですね。", "0.42 s · v2.1 · cpu")

    return _scene("samples/sample_ja_horizontal.png", 1.4, QSize(980, 300), QPoint(40, 60), setup)


def overlay_vertical() -> QImage:
    def setup(o, box, screen):
        o.configure("Noto Sans CJK JP", 22, True)
        o.set_anchor(box, screen)
        o.show_result("ちょっと待って！\nどこへ行くの？", "0.51 s · v2.1 · cuda")

    return _scene("samples/sample_ja_vertical.png", 1.3, QSize(880, 440), QPoint(60, 40), setup)


def overlay_furigana() -> QImage:
    def setup(o, box, screen):
        pairs = [
            ("今日", "きょう"),
            ("は", None),
            ("いい", None),
            ("天気", "てんき"),
            ("ですね。", None),
        ]
        o.configure("Noto Sans CJK JP", 20, False, furigana_provider=lambda text: pairs)
        o.set_anchor(box, screen)
        o.show_result("今日はいい天気ですね。", "0.42 s · v2.1 · cpu")
        o.set_furigana(True)
        o.highlight(5, 2)

    return _scene("samples/sample_ja_horizontal.png", 1.4, QSize(980, 300), QPoint(40, 60), setup)


def tray_menu() -> QImage:
    from app.ui.tray import Tray

    tray = Tray()
    tray.set_hotkeys("<ctrl>+<alt>+o", "<ctrl>+<alt>+r")
    tray.set_hover(False, "Shift")
    tray.set_rescan_enabled(True)
    tray.set_model_state("Model: ready · cpu · v2.1")
    tray.menu.popup(QPoint(100, 100))
    image = tray.menu.grab().toImage()
    tray.menu.hide()
    return image


def settings_dialog(tmp: Path) -> QImage:
    from app.settings import Settings
    from app.ui.settings_dialog import SettingsDialog

    settings = Settings(tmp / "settings.ini")
    settings.set("reading/websocket", True)  # a ticked box beside unticked ones
    dialog = SettingsDialog(settings)
    dialog.show()
    dialog.open_tab("Keep reading")
    image = dialog.grab().toImage()
    dialog.close()
    return image


def _loaded(window) -> None:
    """A history window's rows come from the history thread: wait for them (at most 10 s)."""
    import time

    from PySide6.QtCore import QCoreApplication

    deadline = time.monotonic() + 10
    while window.loading and time.monotonic() < deadline:
        QCoreApplication.processEvents()
        time.sleep(0.01)
    QCoreApplication.processEvents()  # the layout their new labels asked for


def history_window(tmp: Path) -> QImage:
    import resources
    from app.flows.reads import png_bytes
    from app.history import History
    from app.ui.history_window import HistoryWindow

    history = History(tmp / "history.sqlite3")
    history.clear()
    h = QImage(str(resources.path("samples/sample_ja_horizontal.png")))
    v = QImage(str(resources.path("samples/sample_ja_vertical.png")))
    for text, image, box, when in (
        ("ちょっと待って！どこへ行くの？", v, (812, 140, 201, 279), 1_764_400_000),
        ("今日はいい天気ですね。", h, (120, 600, 322, 41), 1_764_403_600),
        ("第3話　約束の場所", h, (40, 80, 260, 36), 1_764_407_200),
    ):
        history.add(text, "DP-1", box, png_bytes(image), created=when)
    window = HistoryWindow(history)
    window.resize(640, 400)
    window.show()
    _loaded(window)
    image = window.grab().toImage()
    window.close()
    history.close()
    return image


def reading_log(tmp: Path) -> QImage:
    """The reading log of an evening's session, one line being corrected, with a crop on hover."""
    import resources
    from app.flows.reads import png_bytes
    from app.history import History
    from app.ui.reading_log import ReadingLog

    history = History(tmp / "log.sqlite3")
    history.clear()
    h = QImage(str(resources.path("samples/sample_ja_horizontal.png")))
    start = 1_764_400_000
    lines = (
        ("第3話　約束の場所", "box"),
        ("ちょっと待って！どこへ行くの？", "click"),
        ("今日はいい天気ですね。", "watch"),
        ("明日も晴れるといいな。そしたら朝早く起きて、山の上まで一緒に歩いて行こうよ。", "watch"),
        ("そうだね、一緒に行こう。", "watch"),
    )
    for i, (text, source) in enumerate(lines):
        history.add(text, "DP-1", (0, 0, 1, 1), png_bytes(h), created=start + i * 7, source=source)
    window = ReadingLog(history, start)
    window.resize(620, 480)
    window.show()
    _loaded(window)
    window.list.setCurrentRow(2)
    shot = window.grab().toImage()
    # the hovered line's crop, drawn where it floats next to the pointer
    crop = QImage.fromData(history.entries()[0].thumbnail)
    painter = QPainter(shot)
    row = window.list.visualItemRect(window.list.item(3))
    at = window.list.mapTo(window, row.center()) + QPoint(40, 18)
    painter.setPen(QPen(QColor(0, 0, 0, 60), 1))
    painter.drawImage(at, crop)
    painter.drawRect(QRect(at, crop.size()).adjusted(0, 0, -1, -1))
    painter.end()
    window.close()
    history.close()
    return shot


def model_dialog() -> QImage:
    from app.ui.model_dialog import ModelDialog

    dialog = ModelDialog("v2.1")
    dialog.show()
    dialog.progress.setVisible(True)  # what start_download() does, without a download
    dialog._set_downloading(True)
    dialog._on_progress("model.safetensors", 248_000_000, 622_502_784)
    image = dialog.grab().toImage()
    dialog.close()
    return image


def model_dialog_failed() -> QImage:
    """After a failed download: one sentence in view, the reason behind the open Details."""
    from app.ui.model_dialog import ModelDialog

    dialog = ModelDialog("v2.1")
    dialog.show()
    dialog._on_failed(
        "cannot reach the Hugging Face Hub: [Errno -3] Temporary failure in name resolution", False
    )
    dialog.details.set_open(True)
    image = dialog.grab().toImage()
    dialog.close()
    return image


def no_tray_window() -> QImage:
    from app.ui.main_window import MainWindow

    window = MainWindow("Hayai was started without a tray icon, so its actions are here.")
    window.set_hotkeys("<ctrl>+<alt>+o", "<ctrl>+<alt>+r")
    window.set_hover(False, "Shift")
    window.set_rescan_enabled(True)
    window.set_model_state("Model: ready · cpu · v2.1 from “hayai-v2.1”")
    window.show()
    image = window.grab().toImage()
    window.close_for_quit()
    return image


def folder_chooser(tmp: Path) -> QImage:
    """Qt's own folder dialog (used where the desktop has no native one) under the Hayai theme."""
    from PySide6.QtCore import QDeadlineTimer
    from PySide6.QtWidgets import QApplication, QFileDialog

    from app.ui.model_dialog import ModelDialog

    home = tmp / "models"
    for name in ("hayai-v2.1", "hayai-nova", "manga", "screenshots"):
        (home / name).mkdir(parents=True, exist_ok=True)
    parent = ModelDialog("v2.1")  # the chooser inherits the theme from the window that opens it
    dialog = QFileDialog(parent, "Choose the folder with the model files", str(home))
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    dialog.resize(760, 440)
    dialog.show()
    deadline = QDeadlineTimer(3000)
    while not deadline.hasExpired():  # the folder's listing fills in from a thread
        QApplication.processEvents()
        views = [v for v in dialog.findChildren(QWidget) if v.objectName() == "treeView"]
        if views and views[0].model().rowCount(views[0].rootIndex()) >= 4:
            break
    image = dialog.grab().toImage()
    dialog.close()
    parent.close()
    return image


def message_box() -> QImage:
    """A question box (the history's "Clear all…") over a Hayai window, whose theme it inherits."""
    from PySide6.QtWidgets import QMessageBox

    from app.ui import theme

    window = QWidget()
    theme.apply(window, "HayaiWindow")
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Clear history",
        "Delete every capture in the history?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        window,
    )
    box.show()
    image = box.grab().toImage()
    box.close()
    window.close()
    return image


def overlay_error() -> QImage:
    def setup(o, box, screen):
        o.configure("Noto Sans CJK JP", 20, False)
        o.set_anchor(box, screen)
        o.show_error(
            "No model is loaded, so this box was not read.\n"
            "The Hayai OCR v2.1 weights are not installed.\n"
            "Click “Model: not ready” in the tray menu to download it or choose its folder."
        )

    return _scene("samples/sample_ja_horizontal.png", 1.4, QSize(980, 260), QPoint(40, 60), setup)


def about_dialog() -> QImage:
    from app.ui.about import AboutDialog

    dialog = AboutDialog()
    dialog.show()
    image = dialog.grab().toImage()
    dialog.close()
    return image


def waiting_window() -> QImage:
    """The window a portal capture shows while the desktop asks for permission (Wayland)."""
    from app.capture.backends.portal import ASKING
    from app.ui.waiting import WaitingWindow

    window = WaitingWindow()
    window.set_text(ASKING)
    window.show()
    image = window.grab().toImage()
    window.close()
    return image


def _manga_page() -> tuple[QImage, tuple[int, int]]:
    """A page with real Japanese text in two bubbles over screentone (the drawn sample page's strokes
    where the CJK font is missing), and where a reader would click the vertical bubble."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    font_path = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc")
    if not font_path.is_file():
        from app.capture.sample_page import draw_screen

        bgra, regions = draw_screen()
        half = np.ascontiguousarray(bgra[:, :960])
        image = QImage(half.tobytes(), 960, 1080, 960 * 4, QImage.Format.Format_RGB32).copy()
        return image, next(r.click for r in regions if r.name == "ellipse-vertical")
    font = ImageFont.truetype(str(font_path), 34)
    page = Image.new("RGB", (960, 1080), "white")
    draw = ImageDraw.Draw(page)
    for panel in ((40, 40, 880, 560), (40, 640, 880, 400)):
        x, y, w, h = panel
        for yy in range(y, y + h, 6):
            for xx in range(x + (yy // 6 % 2) * 3, x + w, 6):
                draw.ellipse((xx, yy, xx + 2, yy + 2), fill=(80, 80, 80))
        draw.rectangle((x, y, x + w, y + h), outline="black", width=5)
    draw.ellipse((110, 90, 420, 560), fill="white", outline="black", width=4)
    for i, column in enumerate(["ちょっと待って！", "どこへ行くの？"]):
        for j, char in enumerate(column):
            draw.text((280 - i * 48, 150 + j * 40), char, font=font, fill="black")
    draw.polygon([(560, 905), (520, 990), (620, 905)], fill="white", outline="black", width=4)
    draw.rounded_rectangle((460, 700, 880, 910), 60, fill="white", outline="black", width=4)
    draw.rectangle((566, 900, 612, 910), fill="white")
    draw.text((510, 750), "約束の場所で", font=font, fill="black")
    draw.text((510, 800), "待っているから。", font=font, fill="black")
    rgb = np.ascontiguousarray(np.asarray(page))
    image = QImage(rgb.tobytes(), 960, 1080, 960 * 3, QImage.Format.Format_RGB888).copy()
    return image.convertToFormat(QImage.Format.Format_RGB32), (256, 300)


def bubble_proposal() -> QImage:
    """The selection resting on a manga bubble: the box a click would read."""
    from PySide6.QtCore import QPointF

    from app.blocks import find_blocks
    from app.capture import Capture, ScreenInfo
    from app.platform.qt_images import qimage_bgra
    from app.ui.selection_window import SelectionWindow

    image, (x, y) = _manga_page()
    info = ScreenInfo("page", (0, 0, 640, 720), (0, 0, 960, 1080), 1.5)
    window = SelectionWindow(Capture(info, image))
    window.blocks = find_blocks(qimage_bgra(image), bgr=True)  # what the detector's thread finds
    window.setGeometry(0, 0, 640, 720)
    window.show()
    window._mouse = QPointF(x / 1.5, y / 1.5)
    window.propose_at(window._mouse)
    assert window.proposal is not None, "no proposal on the screenshot's bubble"
    shot = window.grab().toImage()
    window.close()
    return shot


def page_read() -> QImage:
    """ "Read the whole screen" on a real scanned page: a box over every text block the finder found,
    one hovered. The texts are the page's ground truth (tests/data/pages/blocks.json) in place of the
    model's reads: the picture shows the window, not a model."""
    import json

    from PIL import Image
    from PySide6.QtCore import QPointF

    from app.blocks import find_blocks
    from app.capture import Capture, ScreenInfo
    from app.page.read import block_record
    from app.platform.qt_images import pil_to_qimage
    from app.ui.page_view import PageView

    pages = HERE.parent / "data" / "pages"
    page = Image.open(pages / "001b.jpg").convert("RGB")
    truth = json.loads((pages / "blocks.json").read_text("utf-8"))["pages"]["001b.jpg"]["blocks"]

    def text_of(box) -> str:  # the truth block the found one covers most
        x0, y0, x1, y1 = box
        cover = [
            (max(0, min(x1, tx + tw) - max(x0, tx)) * max(0, min(y1, ty + th) - max(y0, ty)), t)
            for t in truth
            for tx, ty, tw, th in [t["box"]]
        ]
        area, best = max(cover, key=lambda c: c[0])
        return best["text"] if area > 0 else ""

    found = find_blocks(page)
    blocks = [block_record(b, text_of(b.box)) for b in found]
    scale = 0.75
    size = QSize(round(page.width * scale), round(page.height * scale))
    info = ScreenInfo("page", (0, 0, size.width(), size.height()), (0, 0, *page.size), 1 / scale)
    view = PageView(Capture(info, pil_to_qimage(page)))
    view.setGeometry(QRect(QPoint(0, 0), size))
    view.show()
    view.set_record({"blocks": blocks})
    hovered = next(i for i, b in enumerate(view.blocks) if "つかまえた" in b["text"])
    x0, y0, x1, y1 = view.blocks[hovered]["box"]
    view._hovered = view.block_at(QPointF((x0 + x1) / 2 * scale, (y0 + y1) / 2 * scale))
    shot = view.grab().toImage()
    view.close()
    return shot


def watched_region() -> QImage:
    """A game's dialogue line under watch: the frame just outside the region, the last read beside."""
    from PySide6.QtGui import QFont, QLinearGradient, QRegion

    from app.reading.watch import WatchFrame
    from app.ui.overlay import Overlay
    from app.ui.overlay_placement import placement

    size = QSize(1120, 360)
    scene = QImage(size, QImage.Format.Format_RGB32)
    painter = QPainter(scene)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    sky = QLinearGradient(0, 0, 0, size.height())
    sky.setColorAt(0, QColor(80, 120, 200))
    sky.setColorAt(1, QColor(200, 160, 120))
    painter.fillRect(scene.rect(), sky)
    dialogue = QRect(30, 180, 1060, 160)
    grade = QLinearGradient(dialogue.left(), 0, dialogue.right(), 0)
    grade.setColorAt(0, QColor(24, 30, 88, 235))
    grade.setColorAt(1, QColor(44, 52, 120, 235))
    painter.setPen(QPen(QColor(230, 230, 240), 3))
    painter.setBrush(grade)
    painter.drawRoundedRect(dialogue, 10, 10)
    painter.setPen(QColor(250, 250, 250))
    painter.setFont(QFont("Noto Sans CJK JP", 22))
    painter.drawText(QPoint(80, 262), "「明日も晴れるといいな。」")
    painter.setFont(QFont("Noto Sans CJK JP", 14))
    painter.drawText(QPoint(80, 212), "ユキ")
    region = QRect(66, 226, 560, 50)
    frame = WatchFrame((region.x(), region.y(), region.width(), region.height()))
    ring = QRegion(frame.geometry()).subtracted(QRegion(region))
    painter.setClipRegion(ring)
    painter.drawPixmap(frame.geometry().topLeft(), frame.grab())
    painter.setClipping(False)
    frame.close()
    overlay = Overlay()
    overlay.configure("Noto Sans CJK JP", 20, False)
    overlay.set_anchor(region, QRect(QPoint(0, 0), size))
    overlay.show_result("「明日も晴れるといいな。」", "0.38 s · v2.1 · cpu", activate=False)
    card = _card(overlay)
    _shadowed(
        painter,
        card,
        placement(region, card.size(), QRect(QPoint(0, 0), size).adjusted(16, 16, -16, -16)),
    )
    painter.end()
    overlay.close()
    overlay.deleteLater()
    return scene


def render_all(out: Path, tmp: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    shots = {
        "overlay-horizontal": overlay_horizontal(),
        "overlay-vertical": overlay_vertical(),
        "overlay-furigana": overlay_furigana(),
        "tray-menu": tray_menu(),
        "settings": settings_dialog(tmp),
        "history": history_window(tmp),
        "model-download": model_dialog(),
        "model-download-failed": model_dialog_failed(),
        "no-tray-window": no_tray_window(),
        "folder-chooser": folder_chooser(tmp),
        "message-box": message_box(),
        "overlay-error": overlay_error(),
        "about": about_dialog(),
        "bubble-proposal": bubble_proposal(),
        "page-read": page_read(),
        "reading-log": reading_log(tmp),
        "watched-region": watched_region(),
        "waiting-for-desktop": waiting_window(),
    }
    paths = {}
    for name, image in shots.items():
        path = out / f"{name}.png"
        assert image.save(str(path)), path
        paths[name] = path
    return paths


def _distinct_colours(image: QImage) -> int:
    small = image.scaled(64, 64)
    return len({small.pixel(x, y) for x in range(small.width()) for y in range(small.height())})


def test_every_window_renders(qapp, tmp_path):
    paths = render_all(tmp_path / "shots", tmp_path)
    for name, path in paths.items():
        image = QImage(str(path))
        assert image.width() >= 150 and image.height() >= 100, (name, image.size())
        assert _distinct_colours(image) > 12, f"{name} looks blank"


if __name__ == "__main__":
    import os
    import tempfile

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        for path in render_all(Path(sys.argv[1]), Path(tmp)).values():
            print(path)
