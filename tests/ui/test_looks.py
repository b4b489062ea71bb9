"""One theme everywhere (issue #40, item 8): a ticked box shows a tick, the whole screen's banner and
the tray's notes are cards of the app's dark theme, the overlay's status line is whole, and a
details box grows with its window rather than scrolling inside it.

The tray note runs on a desktop as users have one (`desktop`: Xvfb + openbox + trayer, no
notification service), in a child process (this file's `tray` part): there Qt draws its own
balloon for QSystemTrayIcon.showMessage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QStyle, QStyleOptionButton, QVBoxLayout, QWidget

from app.ui import theme

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
SHOTS = os.environ.get("HAYAI_SCREENSHOT_DIR")  # set to keep the pictures (see CONTRIBUTING)


def colours(image, rect: QRect) -> dict[str, int]:
    """How many pixels of each colour (#rrggbb) inside `rect` of `image`."""
    counts: dict[str, int] = {}
    for y in range(rect.top(), rect.bottom() + 1):
        for x in range(rect.left(), rect.right() + 1):
            name = image.pixelColor(x, y).name()
            counts[name] = counts.get(name, 0) + 1
    return counts


def near(name: str, colour: str, step: int = 24) -> bool:
    a, b = QColor(name), QColor(colour)
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue())) <= step


@pytest.mark.gui
def test_a_ticked_box_shows_a_tick_on_the_accent(qtbot):
    window = QWidget()
    theme.apply(window, "HayaiWindow")
    layout = QVBoxLayout(window)
    boxes = [QCheckBox("Copy text automatically"), QCheckBox("Keep a history")]
    boxes[0].setChecked(True)
    for box in boxes:
        layout.addWidget(box)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    image = window.grab().toImage()
    inside = []  # the colours inside each box's indicator (its border left out)
    for box in boxes:
        option = QStyleOptionButton()
        box.initStyleOption(option)
        rect = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
        rect.translate(box.mapTo(window, QPoint(0, 0)))
        inside.append(colours(image, rect.adjusted(3, 3, -3, -3)))
    ticked, unticked = inside
    assert not any(near(c, theme.ACCENT) for c in unticked)
    accent = sum(n for c, n in ticked.items() if near(c, theme.ACCENT))
    tick = sum(n for c, n in ticked.items() if near(c, theme.BACKGROUND, 40))
    assert accent > 30  # the ticked one is filled with the accent
    assert tick > 10  # and a tick is drawn on it in the dark of the theme


@pytest.mark.gui
def test_the_whole_screens_banner_is_a_card_of_the_theme(qtbot):
    from PySide6.QtGui import QImage

    from app.capture import Capture, ScreenInfo
    from app.ui.page_view import PageView

    image = QImage(800, 500, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))  # a bright page, as most are
    view = PageView(Capture(ScreenInfo("page", (0, 0, 800, 500), (0, 0, 800, 500), 1.0), image))
    qtbot.addWidget(view)
    view.setGeometry(QRect(0, 0, 800, 500))
    view.show()
    view.set_record({"blocks": []})
    qtbot.waitExposed(view)
    banner = view.banner
    shot = banner.grab().toImage()
    counts = colours(shot, shot.rect().adjusted(12, 4, -12, -4))
    background = max(counts, key=counts.get)
    assert near(background, theme.BACKGROUND, 4), background
    assert any(near(c, theme.TEXT, 16) for c in counts)  # its sentence in the theme's text colour


@pytest.mark.gui
def test_open_details_are_as_tall_as_their_text_and_the_window_grows(qtbot):
    from app.ui.model_dialog import ModelDialog

    folder = "/home/someone/" + "/".join(f"models-{i}" for i in range(12))
    dialog = ModelDialog("v2.1", "Cannot open the model folder.", folder=folder)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    closed = dialog.height()
    dialog.details.button.click()
    box = dialog.details.text

    def bottom() -> int:
        return box.mapTo(dialog, box.rect().bottomLeft()).y()

    qtbot.waitUntil(lambda: bottom() <= dialog.height())  # the window grew to hold it
    assert dialog.height() > closed + 150
    assert box.height() > 150  # taller than the old fixed box: its text needs it
    assert box.verticalScrollBar().maximum() == 0  # every line in view, no scrolling inside


def shows_whole(label) -> bool:
    """The label's text fits the width it has (QLabel cuts what does not fit)."""
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


@pytest.mark.gui
@pytest.mark.parametrize("vertical", [False, True])
def test_the_overlays_status_line_is_whole_with_every_button_and_after_a_longer_word(
    qtbot, vertical
):
    from app.ui.overlay import Overlay

    overlay = Overlay()
    qtbot.addWidget(overlay)
    # as the app makes it: readings and Mine on, the window and glyphs prepared before any read
    overlay.configure("Noto Sans CJK JP", 18, vertical, furigana_provider=lambda t: [(t, None)])
    overlay.set_mining(True)
    overlay.prepare()
    overlay.set_anchor(QRect(200, 200, 300, 60), QRect(0, 0, 1280, 720))
    overlay.show_result("今日はいい天気ですね。", "0.42 s · v2.1 · cpu")
    qtbot.waitExposed(overlay)
    status = overlay.status
    buttons = [
        overlay.copy_button,
        overlay.layout_button,
        overlay.furigana_button,
        overlay.rescan_button,
        overlay.mine_button,
    ]

    def all_whole() -> bool:  # the status and every button's word (a squeezed one is elided)
        return shows_whole(status) and all(b.width() >= b.sizeHint().width() for b in buttons)

    assert status.text() == "0.42 s · v2.1 · cpu" and all_whole(), status.width()
    overlay.show_note("This line is in your collection already.")  # what Mine may say
    qtbot.waitUntil(all_whole)
    assert status.text() == "This line is in your collection already."


# --- the tray's note on a desktop without a notification service --------------------------------


@pytest.mark.xvfb
@pytest.mark.slow
def test_the_tray_note_is_a_card_of_the_theme_beside_the_icon(desktop, tmp_path):
    env = desktop.env(HAYAI_CONFIG_DIR=str(tmp_path / "cfg"), DBUS_SESSION_BUS_ADDRESS="")
    shot = str(Path(SHOTS) / "tray-note.png") if SHOTS else ""
    done = subprocess.run(
        [sys.executable, str(HERE), "tray", shot],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("NOTE ")]
    assert done.returncode == 0 and lines, done.stdout + done.stderr
    note = json.loads(lines[-1][len("NOTE ") :])
    assert note["qt_balloons"] == 0  # Qt's light yellow balloon is not shown
    assert note["toast_visible"]
    assert near(note["toast_background"], theme.BACKGROUND, 4), note
    x, y, w, h = note["toast"]
    ix, iy, iw, ih = note["icon"]
    assert abs((y + h) - iy) <= 24 or abs(y - (iy + ih)) <= 24, note  # by the icon
    assert x <= ix + iw and x + w >= ix - 400, note


def _tray(shot: str) -> int:
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QSystemTrayIcon

    from app.ui.tray import Tray

    qapp = QApplication([])
    deadline = time.monotonic() + 30
    while not QSystemTrayIcon.isSystemTrayAvailable() and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.05)
    tray = Tray()
    tray.show()
    report = {}

    def note() -> None:
        tray.notify("History not saved", "The disk is full: your reads are kept and saved later.")
        QTimer.singleShot(500, look)

    def look() -> None:
        try:
            see()
        finally:
            print("NOTE", json.dumps(report), flush=True)
            qapp.quit()

    def see() -> None:
        balloons = [
            w
            for w in QApplication.topLevelWidgets()
            if w.metaObject().className() == "QBalloonTip" and w.isVisible()
        ]
        report["qt_balloons"] = len(balloons)
        toast = getattr(tray, "_toast", None)
        report["toast_visible"] = toast is not None and toast.isVisible()
        if toast is not None:
            g = toast.frameGeometry()
            report["toast"] = [g.x(), g.y(), g.width(), g.height()]
            report["toast_background"] = toast.grab().toImage().pixelColor(4, 4).name()
        g = tray.icon.geometry()
        report["icon"] = [g.x(), g.y(), g.width(), g.height()]
        if shot:
            screen = QApplication.primaryScreen()
            screen.grabWindow(0).save(shot)

    QTimer.singleShot(1500, note)  # the tray has embedded the icon
    return qapp.exec()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "tray":
    sys.path.insert(0, str(REPO))
    raise SystemExit(_tray(sys.argv[2] if len(sys.argv) > 2 else ""))
