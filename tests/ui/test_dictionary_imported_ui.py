"""Imported Yomitan dictionaries in the GUI: the popup's frequency badges, pitch accent (graph and
downstep over the kana), dictionary labels and structured content; the Settings list with
enable/disable, order, remove, and an import with a progress bar off the GUI thread."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt, QUrl
from PySide6.QtGui import QImage, QTextDocument

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dictionary"))
import yomitan_zips  # noqa: E402

from app.dictionary.lookup import Dictionary  # noqa: E402
from app.dictionary.yomitan import JMDICT, Store  # noqa: E402
from app.ui.dictionary_manager import DictionaryManager  # noqa: E402
from app.ui.dictionary_popup import DictionaryPopup, pitch_graph  # noqa: E402
from app.ui.entry_html import pitch_html, pitch_url  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def zips(tmp_path):
    return yomitan_zips.sample_zips(tmp_path / "zips")


@pytest.fixture
def imported_dictionary(tmp_path, dictionary_index, zips):
    store_file = tmp_path / "imported.sqlite"
    store = Store(store_file)
    for name in ("terms", "freq", "pitch"):
        store.import_zip(zips[name])
    store.close()
    d = Dictionary(index_file=dictionary_index, store_file=store_file)
    yield d
    d.close()


def test_popup_shows_frequencies_pitch_and_the_imported_entry(qtbot, imported_dictionary, tmp_path):
    popup = DictionaryPopup()
    qtbot.addWidget(popup)
    result = imported_dictionary.lookup("食べた")
    popup.show_result(result, QPoint(40, 40), QRect(0, 0, 1280, 900))
    qtbot.waitExposed(popup)
    text = popup.browser.toPlainText()
    assert "Test Freq" in text and "500㋕" in text  # the badge: dictionary name and value
    assert "ꜜ" in text and "[2]" in text and "Test Pitch" in text  # たべꜜる [2]
    assert "Test Terms" in text  # the imported entry is labelled with its dictionary
    assert "to live on (e.g. a salary)" in text and "Note: also used figuratively." in text
    assert '"tag"' not in text and "structured-content" not in text  # never raw JSON
    graph = popup.browser.document().resource(
        QTextDocument.ResourceType.ImageResource, QUrl(pitch_url("たべる", 2))
    )
    assert isinstance(graph, QImage) and not graph.isNull()
    # HAYAI_SCREENSHOT_DIR keeps the picture (the README's), else it goes to tmp_path
    folder = Path(os.environ.get("HAYAI_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dictionary-popup-yomitan.png"
    assert popup.grab().save(str(path)) and path.stat().st_size > 10_000


def test_pitch_html_marks_the_downstep_after_its_mora():
    html = pitch_html("たべる", 2, "Noto Sans CJK JP")
    assert html.startswith('<img src="pitch:2:たべる"')  # the graph, then the reading
    html = html.split("&nbsp;", 1)[1]
    assert html.index("べ") < html.index("ꜜ") < html.index("る")
    assert "overline" in html and "[2]" in html
    assert "ꜜ" not in pitch_html("にほんご", 0, "x")  # heiban: no drop


def test_pitch_graph_puts_high_morae_on_top():
    image = pitch_graph("たべる", 2)  # low, high, low, particle low
    step = 13

    def column_top(i):
        x = int(3.2 + 1 + i * step)
        return min(y for y in range(image.height()) if image.pixelColor(x, y).alpha() > 100)

    assert column_top(1) < column_top(0) and column_top(1) < column_top(2)


# ------------------------------------------------------------------------------------ Settings list


@pytest.fixture
def manager(qtbot, tmp_path):
    store = Store(tmp_path / "manager.sqlite")
    widget = DictionaryManager(store)
    qtbot.addWidget(widget)
    yield widget
    store.close()


def _import(qtbot, manager, path):
    seen = []
    manager._progress.connect(lambda f, stage: seen.append((f, threading.current_thread())))
    with qtbot.waitSignals([manager._finished], timeout=30000):
        manager.start_import(str(path))
        assert manager.is_importing() and not manager.import_button.isEnabled()
        assert not manager.list.isEnabled()
    return seen


def test_import_runs_off_the_gui_thread_with_progress(qtbot, manager, zips, tmp_path):
    big = yomitan_zips.generated_zip(tmp_path / "big.zip", 6000, per_bank=1000)
    with qtbot.waitSignal(manager.imported, timeout=30000) as done:
        seen = _import(qtbot, manager, big)
    assert done.args == ["Generated 6000"]
    assert len({round(f, 2) for f, _t in seen}) >= 5  # the bar moved bank by bank
    assert (
        manager.progress.isVisible() is False and "Imported Generated 6000" in manager.status.text()
    )
    assert manager.titles() == [JMDICT, "Generated 6000"]
    assert manager.import_button.isEnabled()


def test_enable_order_and_remove_from_the_list(qtbot, manager, zips):
    for name in ("terms", "freq", "pitch"):
        _import(qtbot, manager, zips[name])
    assert manager.titles() == [JMDICT, "Test Terms", "Test Freq", "Test Pitch"]
    item = manager.list.item(2)
    assert item.checkState() == Qt.CheckState.Checked
    item.setCheckState(Qt.CheckState.Unchecked)
    assert [d.title for d in manager.store.dictionaries(enabled_only=True)] == [
        "Test Terms",
        "Test Pitch",
    ]
    manager.list.setCurrentRow(3)
    manager.up_button.click()
    assert manager.titles() == [JMDICT, "Test Terms", "Test Pitch", "Test Freq"]
    assert manager.list.currentRow() == 2
    manager.list.setCurrentRow(1)
    manager._remove(confirm=False)
    assert manager.titles() == [JMDICT, "Test Pitch", "Test Freq"]
    assert manager.list.item(2).checkState() == Qt.CheckState.Unchecked  # still disabled


def test_jmdict_has_a_row_that_moves_but_stays(qtbot, manager, zips):
    # GIVEN imported dictionaries, THEN JMdict's row is in the list at its place: no check box, no
    # Remove, and Up/Down move it among them (the order lookups use)
    _import(qtbot, manager, zips["terms"])
    _import(qtbot, manager, zips["freq"])
    jmdict = manager.list.item(0)
    assert not jmdict.flags() & Qt.ItemFlag.ItemIsUserCheckable
    manager.list.setCurrentRow(0)
    assert not manager.remove_button.isEnabled() and not manager.up_button.isEnabled()
    manager.down_button.click()
    assert manager.titles() == ["Test Terms", JMDICT, "Test Freq"]
    assert manager.store.order() == manager.titles()
    manager._remove(confirm=False)
    assert manager.titles() == ["Test Terms", JMDICT, "Test Freq"]


def test_a_broken_file_is_explained_and_changes_nothing(qtbot, manager, zips, tmp_path):
    _import(qtbot, manager, zips["terms"])
    path, _word = yomitan_zips.broken_zips(tmp_path)["bad JSON in the second bank"]
    with qtbot.waitSignal(manager.failed, timeout=30000) as failed:
        _import(qtbot, manager, path)
    message = failed.args[0]
    assert (
        "badjson.zip" in message
        and "term_bank_2.json" in message
        and "Nothing was changed" in message
    )
    assert manager.status.text() == message
    assert manager.titles() == [JMDICT, "Test Terms"]
    assert manager.store.con.execute("SELECT count(*) FROM terms").fetchone()[0] == 5


def test_settings_dialog_has_the_dictionary_list(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    from app.settings import Settings
    from app.ui.settings_dialog import SettingsDialog

    store = Store(tmp_path / "s.sqlite")
    dialog = SettingsDialog(Settings(), dictionary_store=store)
    qtbot.addWidget(dialog)
    assert dialog.dictionaries.store is store
    dialog.open_tab("Dictionary")
    assert dialog.dictionaries.empty.isVisibleTo(dialog)
    store.close()


def test_korean_hover_shows_the_imported_entry(qtbot, tmp_path, dictionary_index):
    from app.ui.dictionary_popup_controller import DictionaryPopupController

    folder = tmp_path / "ko"
    folder.mkdir()
    store = Store(tmp_path / "ko.sqlite")
    store.import_zip(yomitan_zips.korean_zip(folder))
    store.close()
    d = Dictionary(index_file=dictionary_index, store_file=tmp_path / "ko.sqlite")
    controller = DictionaryPopupController(d)
    qtbot.addWidget(controller.popup)
    with qtbot.waitSignal(controller.highlight, timeout=5000) as highlight:
        controller.on_hover("밥을 먹었어요", 3, QPoint(100, 100))
    assert highlight.args == [3, 4]  # 먹었어요, the verb with its endings
    text = controller.popup.browser.toPlainText()
    assert "먹다" in text and "to eat" in text and "Test Korean" in text
    assert "No Korean dictionary" not in text
    d.close()


def test_a_zip_bomb_is_refused_in_one_sentence(qtbot, manager, tmp_path):
    # a 2 MB zip declaring a 2 GB bank: refused from its declared size, the list unchanged
    bomb = yomitan_zips.bomb_zip(tmp_path / "bomb.zip", 2_000_000_000, gloss=1_000_000)
    with qtbot.waitSignal(manager.failed, timeout=30000) as failed:
        _import(qtbot, manager, bomb)
    message = failed.args[0]
    assert message == (
        "Could not import bomb.zip: term_bank_1.json would unpack to 2 GB, more than the 250 MB "
        "a dictionary bank may have. Nothing was changed."
    )
    assert manager.status.text() == message and manager.titles() == []
    manager.resize(640, 360)
    path = tmp_path / "dictionary-manager-bomb.png"
    assert manager.grab().save(str(path)) and path.stat().st_size > 2_000


def test_a_bad_record_stored_by_an_older_version_hides_nothing_in_the_popup(
    qtbot, tmp_path, dictionary_index
):
    # today: "Dictionary unavailable: maximum recursion depth exceeded", and JMdict hidden too
    from app.ui.dictionary_popup_controller import DictionaryPopupController

    d = Dictionary(index_file=dictionary_index, store_file=yomitan_zips.old_store(tmp_path / "old"))
    controller = DictionaryPopupController(d)
    qtbot.addWidget(controller.popup)
    controller.on_hover("深い森", 0, QPoint(100, 100))
    text = controller.popup.browser.toPlainText()
    assert "Dictionary unavailable" not in text
    assert "profound" in text  # JMdict
    assert "deep (Good)" in text and "a second sense (Old)" in text
    path = tmp_path / "dictionary-popup-old-store.png"
    assert controller.popup.grab().save(str(path)) and path.stat().st_size > 10_000
    d.close()
