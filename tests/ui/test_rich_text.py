"""Outside text is never markup (issue #21, item 1): no widget opens a file, draws an image or
blocks because of text it shows.

Two detectors, both real files: a FIFO with a writer in another process (any `open()` of it for
reading is recorded; without the writer such an open would block the GUI thread, as it did), and
a magenta PNG (drawn pixels of exactly that colour mean Qt loaded it). The three cases the issue
reproduced come first, then a walk over every module of app/ that shows text in a rich-text-capable
widget: each is fed the hostile texts through its real setters.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import QPoint, QUrl
from PySide6.QtGui import QColor, QImage, Qt, QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QTextBrowser, QToolTip, QWidget

from app.ui.rich_text import SafeTextBrowser, SafeTextDocument, escape

pytestmark = pytest.mark.gui

REPO = Path(__file__).resolve().parents[2]
MAGENTA = (255, 0, 255)
MARKER = "HOSTILE"


class Probe:
    """A FIFO whose every open for reading is recorded, and a magenta PNG."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="h", dir="/tmp"))  # short: a file name holds it
        self.fifo = self.dir / "f"
        self.png = self.dir / "p.png"
        self.log = self.dir / "opened"
        os.mkfifo(self.fifo)
        Image.new("RGB", (300, 300), MAGENTA).save(self.png)
        writer = (
            "import os\n"
            "while True:\n"
            f" fd = os.open({str(self.fifo)!r}, os.O_WRONLY)\n"
            f" open({str(self.log)!r}, 'a').write('x')\n"
            " os.close(fd)\n"
        )
        self.writer = subprocess.Popen([sys.executable, "-c", writer])

    def opened(self) -> bool:
        return self.log.exists()

    def assert_never_opened(self) -> None:
        time.sleep(0.3)  # the writer process records an open a moment after it happened
        assert not self.opened(), "a file was opened because of text"

    def close(self) -> None:
        self.writer.kill()
        self.writer.wait()
        for path in (self.fifo, self.png, self.log):
            path.unlink(missing_ok=True)
        self.dir.rmdir()


@pytest.fixture
def probe():
    p = Probe()
    yield p
    p.close()


def hostile_texts(probe: Probe) -> list[str]:
    """Each way a text could ask Qt for a resource, aimed at both detectors."""
    out = []
    for t in (str(probe.png), str(probe.fifo)):
        slashes = t.replace("/", "&#47;")  # how a file name spells a path
        out += [
            f'<img src="{t}"> {MARKER}',
            f"<img src={slashes}>.png {MARKER}",
            f'<img src="file://{t}" width="300"> {MARKER}',
            f'ねこ" src="file://{t}" width="300',  # out of an attribute (a pitch reading)
            f"ねこ' src='{t}' width='300",
            f'<table background="{t}"><tr><td>{MARKER}</td></tr></table>',
            f'<p style="background-image:url({t})">{MARKER}</p>',
            f'<link rel="stylesheet" href="{t}"><b>{MARKER}</b>',
            f'<img src="http://127.0.0.1:9/x.png"><img src="qrc:{t}"> {MARKER}',
        ]
    return out


def magenta_pixels(widget: QWidget) -> int:
    import numpy as np
    from PySide6.QtGui import QImage

    if widget.width() < 2 or widget.height() < 2:
        widget.resize(max(widget.width(), 600), max(widget.height(), 400))
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(bytes(image.constBits()), np.uint32)
    return int(np.count_nonzero((pixels & 0xFFFFFF) == 0xFF00FF))


def assert_safe(probe: Probe, *widgets: QWidget) -> None:
    """Nothing opened or drawn, and every view of outside text is plain or can load nothing."""
    QApplication.processEvents()
    for widget in widgets:
        assert magenta_pixels(widget) == 0, f"{type(widget).__name__} drew an image from a path"
        for view in [widget, *widget.findChildren(QWidget)]:
            if isinstance(view, QTextBrowser):
                assert isinstance(view, SafeTextBrowser), f"{type(widget).__name__}: a QTextBrowser"
            if isinstance(view, QLabel) and re.search(r"<img|<table|<link", view.text()):
                auto = view.textFormat().name == "AutoText"
                assert view.textFormat().name == "PlainText" or (
                    auto and not Qt.mightBeRichText(view.text())
                ), f"{type(widget).__name__}: a rich-text label shows {view.text()[:60]!r}"
    assert not probe.opened(), "a file was opened because of text"


# --- the three cases of the issue -----------------------------------------------------------------


def test_a_watched_folder_file_name_with_img_is_not_loaded_by_the_toast(qtbot, probe, tmp_path):
    from app.reading.channels.folder import FolderImages
    from app.ui.tray import Toast

    folder = FolderImages(str(tmp_path))
    messages = []
    folder.failed.connect(lambda path, message: messages.append(message))
    for target in (probe.png, probe.fifo):
        name = "<img src=" + str(target).replace("/", "&#47;") + ">.png"
        (tmp_path / name).write_bytes(b"not an image")
    qtbot.waitUntil(lambda: len(messages) == 2, timeout=15000)
    toast = Toast()
    qtbot.addWidget(toast)
    for message in messages:
        assert "<img src=&#47;" in message
        toast.show_message("Cannot read an image", message, error=True)
        assert toast.body.text() == message  # shown as it is, characters and all
        assert_safe(probe, toast)
    folder.close()
    probe.assert_never_opened()


def test_a_pitch_reading_cannot_leave_its_attribute_in_the_popup(qtbot, probe):
    from app.dictionary.models import Entry, LookupResult, Sense
    from app.ui.dictionary_popup import DictionaryPopup
    from app.ui.entry_html import pitch_html

    popup = DictionaryPopup()
    qtbot.addWidget(popup)
    for target in (probe.png, probe.fifo):
        reading = f'ねこ" src="file://{target}" width="300'
        assert 'src="file://' not in pitch_html(reading, 1, "serif")
        entry = Entry(
            headword="猫",
            reading="ねこ",
            readings=["ねこ"],
            pos=["n"],
            senses=[Sense(["cat"], ["n"])],
            source="yomitan",
            match="猫",
            pitch=[{"dictionary": "Evil", "reading": reading, "positions": [1]}],
        )
        popup.show_result(
            LookupResult(1, [entry], "ja"), QPoint(10, 10), popup.screen().availableGeometry()
        )
        assert_safe(probe, popup)
    probe.assert_never_opened()


def test_a_dictionary_title_with_img_is_plain_in_the_settings_status_line(qtbot, probe, tmp_path):
    sys.path.insert(0, str(REPO / "tests" / "dictionary"))
    from yomitan_zips import write_zip

    from app.dictionary.yomitan import Store
    from app.ui.dictionary_manager import DictionaryManager

    manager = DictionaryManager(Store(tmp_path / "imported.sqlite"))
    qtbot.addWidget(manager)
    manager.resize(500, 300)
    for i, target in enumerate((probe.png, probe.fifo)):
        title = f'<img src="{target}" width="300"> Evil {i}'
        zip_path = write_zip(
            tmp_path / f"evil{i}.zip",
            {"title": title, "format": 3, "revision": f'<img src="{target}">'},
            {"term_bank_1.json": [["猫", "ねこ", "", "", 1, ["cat"], 1, ""]]},
        )
        with qtbot.waitSignal(manager.imported, timeout=20000):
            manager.start_import(str(zip_path))
        assert manager.status.text().startswith(f"Imported {title}")
        assert_safe(probe, manager)
        show_tooltips(manager.list.item(i).toolTip())
        assert_safe(probe, *tooltip_windows())
    probe.assert_never_opened()


# --- every widget that shows text in rich-text-capable views ----------------------------------------


def show_tooltips(text: str) -> None:
    QToolTip.showText(QPoint(50, 50), text)
    QApplication.processEvents()


def tooltip_windows() -> list[QWidget]:
    return [w for w in QApplication.topLevelWidgets() if type(w).__name__ == "QTipLabel"]


def feed_about(hostile, qtbot):
    from app.ui.about import AboutDialog

    dialog = AboutDialog()
    dialog.browser.setHtml(hostile)  # were the credits ever to carry a tag, nothing loads
    return [dialog]


def feed_anki_settings(hostile, qtbot):
    from app.settings import Settings
    from app.ui.anki_settings import AnkiSettingsPage

    widget = AnkiSettingsPage(Settings())
    widget.url.setText("http://127.0.0.1:9")  # nothing listens: the field lookup fails quietly
    widget._on_refreshed((hostile, [hostile], [hostile]), "")
    widget._show_fields([hostile, "Front"])
    widget._say(hostile, error=True)
    return [widget]


def feed_dictionary_manager(hostile, qtbot):
    from app.ui.dictionary_manager import DictionaryManager

    manager = DictionaryManager()
    manager.status.setText(f"Could not import {hostile}. Nothing was changed.")
    manager._on_finished("", f"Could not import {hostile}. Nothing was changed.")
    return [manager]


def feed_dictionary_popup(hostile, qtbot):
    from app.dictionary.models import Entry, KanjiInfo, LookupResult, Sense
    from app.ui.dictionary_popup import DictionaryPopup

    popup = DictionaryPopup()
    entry = Entry(
        headword=hostile,
        reading=hostile,
        readings=[hostile, "x"],
        pos=[hostile],
        # a sense's HTML as an imported dictionary's renderer made it: tags and all, still nothing loads
        senses=[Sense([hostile], [hostile], notes=[hostile]), Sense([], [], html=hostile)],
        source="yomitan",
        dictionary=hostile,
        match=hostile,
        deinflection=[hostile],
        pitch=[{"dictionary": hostile, "reading": hostile, "positions": [0, 1]}],
        frequencies=[{"dictionary": hostile, "display": hostile}],
        kanji=[
            KanjiInfo(
                "猫",
                [hostile],
                [hostile],
                [hostile],
                2,
                8,
                11,
                dictionaries=[{"dictionary": hostile, "meanings": [hostile, "x"]}],
                frequencies=[{"dictionary": hostile, "value": 1, "display": hostile}],
            )
        ],
    )
    popup.show_result(LookupResult(1, [entry], "ja"), QPoint(0, 0), popup.screen().geometry())
    second = DictionaryPopup()
    second.set_message(hostile)
    return [popup, second]


def feed_history_window(hostile, qtbot):
    from app.history import History
    from app.ui.history_window import HistoryWindow

    history = History(limit=10)
    history.add(hostile, source=hostile)
    window = HistoryWindow(history)
    qtbot.waitUntil(lambda: not window.loading, timeout=5000)  # the history thread answered
    show_tooltips(window.list.item(0).toolTip())
    return [window, *tooltip_windows()]


def feed_main_window(hostile, qtbot):
    from app.ui.main_window import MainWindow

    window = MainWindow(reason=hostile)
    window.set_model_state(f"Model: loading “{hostile}”…", actionable=True)
    window.set_folder_waiting(2)
    return [window]


def feed_details(hostile, qtbot):
    from app.ui.details import DetailsSection

    details = DetailsSection()
    details.set_text(hostile)  # a model's or a server's message, past its first sentence
    details.set_open(True)
    return [details]


def feed_note(hostile, qtbot):
    from app.ui.note import ErrorNote

    note = ErrorNote()
    note.show_text(hostile)  # an Anki or server message, whole
    return [note]


def feed_page_view(hostile, qtbot):
    from app.capture.models import Capture, ScreenInfo
    from app.ui.page_view import PageView

    image = QImage(320, 200, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    screen = ScreenInfo("page-0", (0, 0, 320, 200), (0, 0, 320, 200), 1.0)
    view = PageView(Capture(screen, image))
    box = [10, 10, 200, 60]
    view.set_record({"blocks": [{"box": box, "text": hostile, "vertical": False, "ms": 1.0}]})
    failed = PageView(Capture(screen, image))
    failed.set_failed(hostile)  # the worker's message, whole
    return [view, failed]


def feed_waiting(hostile, qtbot):
    from app.ui.waiting import WaitingWindow

    window = WaitingWindow()
    window.set_text(hostile)  # what the portal waits for; may name a desktop's own words
    return [window]


def feed_views(hostile, qtbot):
    from app.ui.main_window import MainWindow
    from app.ui.tray import Tray

    windows = []
    for view in (MainWindow(), Tray()):  # the status lines every EntryView shares
        view.set_hotkey_problem(f"Capture hotkey stays Ctrl+Alt+O: {hostile}")
        view.set_watch_note(hostile)
        show_tooltips(view.entries["hotkey_problem"].toolTip())
        windows.append(view.menu if isinstance(view, Tray) else view)
    return [*windows, *tooltip_windows()]


def feed_model_dialog(hostile, qtbot):
    from app.ui.model_dialog import ModelDialog

    dialog = ModelDialog(message=hostile)
    dialog._say(hostile, error=True)
    dialog.file_label.setText(hostile)
    dialog.file_label.setVisible(True)
    folder = ModelDialog(folder=hostile, message=hostile)  # a folder it cannot use, by name
    return [dialog, folder]


def feed_overlay(hostile, qtbot):
    from app.ui.overlay import Overlay

    overlay = Overlay()
    overlay.show_result(hostile, hostile, activate=False)
    errors = Overlay()
    errors.show_error(f"{hostile}\n{hostile}")
    errors._toggle_error_details()
    note = Overlay()
    note.show_result("text", "status", activate=False)
    note.show_note(hostile)
    return [overlay, errors, note]


def feed_reading_log(hostile, qtbot):
    from app.history import History
    from app.ui.reading_log import ReadingLog

    history = History(limit=10)
    history.add(hostile, source="box")
    log = ReadingLog(history, since=0)
    qtbot.waitUntil(lambda: not log.loading, timeout=5000)
    log.show_note(hostile)
    return [log]


def feed_settings_dialog(hostile, qtbot):
    from app.settings import Settings
    from app.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings())
    dialog.error.setText(f"Reading: {hostile}")
    return [dialog]


def feed_tray(hostile, qtbot):
    from app.ui.tray import Toast, Tray

    toast = Toast()
    toast.show_message(hostile, hostile, error=True)
    tray = Tray()
    tray.set_model_state(hostile)
    tray.set_folder_waiting(3)
    show_tooltips(tray.icon.toolTip())  # how an X11 (XEmbed) tray shows the icon's tooltip
    return [toast, tray.menu, *tooltip_windows()]


def feed_text_view(hostile, qtbot):
    from PySide6.QtCore import QMimeData

    from app.ui.painted_text import PaintedTextView
    from app.ui.text_view import EditableTextView

    painted = PaintedTextView()
    painted.set_content(hostile, vertical=False, ruby=None)
    edited = EditableTextView()
    edited.setPlainText(hostile)
    pasted = QMimeData()
    pasted.setHtml(hostile)  # rich text pasted or dropped into the editor stays plain
    edited.insertFromMimeData(pasted)
    return [painted, edited]


FEEDERS = {
    "app/ui/about.py": feed_about,
    "app/ui/details.py": feed_details,
    "app/ui/anki_settings.py": feed_anki_settings,
    "app/ui/dictionary_manager.py": feed_dictionary_manager,
    "app/ui/dictionary_popup.py": feed_dictionary_popup,
    "app/ui/history_window.py": feed_history_window,
    "app/ui/main_window.py": feed_main_window,
    "app/ui/model_dialog.py": feed_model_dialog,
    "app/ui/note.py": feed_note,
    "app/ui/page_view.py": feed_page_view,
    "app/ui/overlay.py": feed_overlay,
    "app/ui/overlay_header.py": feed_overlay,
    "app/ui/overlay_message.py": feed_overlay,
    "app/ui/reading_log.py": feed_reading_log,
    "app/ui/settings_dialog.py": feed_settings_dialog,
    "app/ui/text_view.py": feed_text_view,
    "app/ui/tray.py": feed_tray,
    "app/ui/views.py": feed_views,
    "app/ui/waiting.py": feed_waiting,
}
# Modules that match the search but never show outside text in such a view (why, each):
OWN_TEXT_ONLY = {
    "app/flows/windows.py": "its one QMessageBox (the desktop-shortcuts question) is our own words, set as plain text; messages go to the tray or the toast (app/ui/tray.py)",
    "app/ui/hotkey_edit.py": "a QLineEdit (plain) and our own tooltip",
    "app/ui/rich_text.py": "the helpers themselves (tested below)",
    "app/ui/theme.py": "style sheets that name widget classes",
}
RICH_TEXT = re.compile(
    r"setHtml\(|TextFormat\.RichText|setTextFormat|QTextBrowser|QTextDocument\b|QTextEdit\b|"
    r"QLabel\(|QMessageBox|setToolTip\(|addRow\(|QToolTip|QWhatsThis"
)


def modules_with_rich_text() -> set[str]:
    found = set()
    for path in sorted((REPO / "app").rglob("*.py")):
        if RICH_TEXT.search(path.read_text(encoding="utf-8")):
            found.add(path.relative_to(REPO).as_posix())
    return found


def test_every_module_that_can_show_rich_text_is_walked():
    found = modules_with_rich_text()
    missing = found - set(FEEDERS) - set(OWN_TEXT_ONLY)
    assert not missing, f"add a feeder for {sorted(missing)} (or say why it shows only our text)"
    assert set(FEEDERS) <= found  # a feeder for a module that no longer matches: remove it


@pytest.mark.parametrize("module", sorted(FEEDERS))
def test_hostile_text_loads_nothing(module, qtbot, probe, monkeypatch, tmp_path):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    for hostile in hostile_texts(probe):
        widgets = FEEDERS[module](hostile, qtbot)
        for widget in widgets:
            if isinstance(widget, QWidget) and widget.parent() is None:
                qtbot.addWidget(widget)
        assert_safe(probe, *widgets)
        QToolTip.hideText()
    probe.assert_never_opened()


# --- the helpers ----------------------------------------------------------------------------------


def test_escape_quotes_too():
    assert escape("a\" b='c' <d>&") == "a&quot; b=&#x27;c&#x27; &lt;d&gt;&amp;"


def test_safe_views_show_added_images_and_refuse_the_rest(qtbot, probe):
    from PySide6.QtGui import QImage

    ours = QImage(40, 40, QImage.Format.Format_RGB32)
    ours.fill(QColor(*MAGENTA))
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    browser.resize(400, 200)
    browser.document().addResource(
        QTextDocument.ResourceType.ImageResource, QUrl("pitch:1:ねこ"), ours
    )
    browser.setHtml(f'<img src="pitch:1:ねこ"><img src="{probe.fifo}">')
    assert magenta_pixels(browser) > 0  # our own generated image is drawn
    document = SafeTextDocument()
    document.setHtml(f'<img src="{probe.fifo}"><img src="file://{probe.png}">')
    document.setTextWidth(300)
    assert document.size().width() > 0
    from PySide6.QtGui import QPainter

    canvas = QImage(300, 300, QImage.Format.Format_RGB32)
    painter = QPainter(canvas)
    document.drawContents(painter)
    painter.end()
    probe.assert_never_opened()
