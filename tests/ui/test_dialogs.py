"""Settings dialog (built from the table), model dialog (download with progress/cancel, folder,
offline explanation) and the About dialog (licences, dictionary credits)."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox

from app.settings import Settings
from app.settings.table import SETTINGS
from app.ui.about import AboutDialog
from app.ui.hotkey_edit import HotkeyEdit
from app.ui.model_dialog import ModelDialog
from app.ui.settings_dialog import SettingsDialog

pytestmark = pytest.mark.gui


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    return Settings()


def test_settings_dialog_has_one_editor_per_table_row(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    # every labelled row has its editor; the anki/* rows live on the Anki page, which saves them all
    assert set(dialog.editors) == {s.key for s in SETTINGS if s.label and s.kind != "anki"}
    assert set(dialog.anki_page.values()) == {s.key for s in SETTINGS if s.kind == "anki"}
    assert isinstance(dialog.editors["output/auto_copy"], QCheckBox)
    assert isinstance(dialog.editors["history/length"], QSpinBox)
    assert isinstance(dialog.editors["model/precision"], QComboBox)
    assert isinstance(dialog.editors["hotkey/capture"], HotkeyEdit)
    for s in SETTINGS:
        if s.label and s.kind != "anki":
            assert dialog.editors[s.key].toolTip() == s.help
    assert dialog.values()["history/length"] == 500


def test_drop_downs_show_words_and_store_the_codes(settings, qtbot):
    from app.settings.table import SETTINGS

    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    for setting in SETTINGS:
        if not setting.choices or setting.key not in dialog.editors:
            continue
        combo = dialog.editors[setting.key]
        shown = [combo.itemText(i) for i in range(combo.count())]
        stored = [combo.itemData(i) for i in range(combo.count())]
        assert stored == list(setting.choices), setting.key
        assert len(setting.choice_labels) == len(setting.choices), setting.key
        for code, words in zip(setting.choices, shown):  # never a bare code such as "ja", "hover"
            assert words != code, (setting.key, code)
    trigger = dialog.editors["dictionary/trigger"]
    assert trigger.currentText() == "resting the mouse on a word"
    trigger.setCurrentIndex(trigger.findText("clicking a word"))
    dialog.editors["dictionary/han_language"].setCurrentText("Chinese")
    assert dialog.save()
    assert settings.get("dictionary/trigger") == "click"
    assert settings.get("dictionary/han_language") == "zh"
    assert "han_language=zh" in settings.path.read_text()


def test_settings_dialog_saves_the_values(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.editors["output/auto_copy"].setChecked(False)
    dialog.editors["history/length"].setValue(42)
    dialog.editors["model/precision"].setCurrentText("exact (float32)")  # the words shown
    dialog.editors["hotkey/rescan"].set_combo("<ctrl>+<alt>+e")
    with qtbot.waitSignal(settings.changed, timeout=1000) as changed:
        assert dialog.save()
    assert {"output/auto_copy", "history/length", "model/precision", "hotkey/rescan"} <= set(
        changed.args[0]
    )
    again = Settings()
    assert again.get("output/auto_copy") is False and again.get("history/length") == 42
    assert (
        again.get("model/precision") == "exact" and again.get("hotkey/rescan") == "<ctrl>+<alt>+e"
    )


CTRL_ALT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier


def test_hotkeys_are_recorded_by_pressing_them_and_stored_in_pynput_syntax(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    capture = dialog.editors["hotkey/capture"]
    assert capture.field.text() == "Ctrl+Alt+O"  # shown the way the desktop writes it
    capture.field.setFocus()
    qtbot.keyClick(capture.field, Qt.Key.Key_J, CTRL_ALT)
    assert capture.combo() == "<ctrl>+<alt>+j" and capture.field.text() == "Ctrl+Alt+J"
    qtbot.keyClick(capture.field, Qt.Key.Key_F9, Qt.KeyboardModifier.ShiftModifier)
    assert capture.combo() == "<shift>+<f9>" and capture.field.text() == "Shift+F9"
    qtbot.keyClick(capture.field, Qt.Key.Key_Escape)  # Esc gives up and keeps the last one
    assert capture.combo() == "<shift>+<f9>"
    assert dialog.save()
    assert Settings().get("hotkey/capture") == "<shift>+<f9>"  # the INI format is unchanged


def test_tab_still_moves_on_from_a_hotkey_field(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    capture = dialog.editors["hotkey/capture"]
    capture.field.setFocus()
    qtbot.keyClick(capture.field, Qt.Key.Key_Tab)
    assert not capture.field.hasFocus() and capture.combo() == "<ctrl>+<alt>+o"
    assert dialog.error.text() == ""


def test_a_lone_key_is_refused_with_a_reason(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    rescan = dialog.editors["hotkey/rescan"]
    rescan.field.setFocus()
    qtbot.keyClick(rescan.field, Qt.Key.Key_J)
    assert rescan.combo() == "<ctrl>+<alt>+r"  # unchanged
    assert "Re-scan hotkey" in dialog.error.text() and "Hold Ctrl" in dialog.error.text()
    qtbot.keyClick(rescan.field, Qt.Key.Key_Backspace)  # Backspace turns it off
    assert rescan.combo() == "" and rescan.field.placeholderText()
    assert dialog.save() and Settings().get("hotkey/rescan") == ""


def test_a_clash_is_said_at_once_and_nothing_is_saved(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    capture = dialog.editors["hotkey/capture"]
    capture.field.setFocus()
    qtbot.keyClick(capture.field, Qt.Key.Key_R, CTRL_ALT)  # the re-scan hotkey
    assert "cannot both be Ctrl+Alt+R" in dialog.error.text()
    assert not dialog.save_button.isEnabled() and not dialog.save()
    assert Settings().get("hotkey/capture") == "<ctrl>+<alt>+o"
    qtbot.keyClick(capture.field, Qt.Key.Key_K, CTRL_ALT)
    assert dialog.error.text() == "" and dialog.save_button.isEnabled()


def test_an_invalid_saved_hotkey_is_explained_and_nothing_is_saved(settings, qtbot):
    settings.set("hotkey/capture", "<ctrl>+<banana>")  # a hand-edited settings file
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert not dialog.save()
    assert "Capture hotkey" in dialog.error.text() and "not valid" in dialog.error.text()
    assert "pynput" not in dialog.error.text()


def test_overridden_settings_say_so(tmp_path, monkeypatch, qtbot):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    dialog = SettingsDialog(Settings(overrides={"hotkey/capture": "<ctrl>+<shift>+q"}))
    qtbot.addWidget(dialog)
    assert dialog.editors["hotkey/capture"].combo() == "<ctrl>+<alt>+o"  # edits the saved value
    from PySide6.QtWidgets import QLabel

    assert any("--hotkey overrides" in label.text() for label in dialog.findChildren(QLabel))


def test_model_dialog_downloads_with_progress(qtbot):
    gate = threading.Event()
    calls = []

    def fake_download(variant, progress=None, cancel=None):
        calls.append(variant)
        progress("model.safetensors", 311_000_000, 622_000_000)
        gate.wait(5)
        progress("model.safetensors", 622_000_000, 622_000_000)
        return "/cache/models--hayai/snapshots/abc"

    dialog = ModelDialog(
        "v2.1", "The Hayai OCR v2.1 weights are not installed.", download_fn=fake_download
    )
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.download_button.click()
    qtbot.waitUntil(lambda: dialog.progress.value() == 500, timeout=3000)
    assert "311\u00a0MB of 622\u00a0MB" in dialog.file_label.text()  # never wrapped in two
    assert dialog.cancel_button.isVisible() and not dialog.download_button.isEnabled()
    with qtbot.waitSignal(dialog.downloaded, timeout=5000) as done:
        gate.set()
    assert done.args == ["/cache/models--hayai/snapshots/abc"] and calls == ["v2.1"]


def test_model_dialog_cancel_keeps_it_usable(qtbot):
    def fake_download(variant, progress=None, cancel=None):
        from model.errors import DownloadCancelled

        progress("model.safetensors", 1, 100)
        cancel.wait(5)
        raise DownloadCancelled("download cancelled")

    dialog = ModelDialog("v2.1", download_fn=fake_download)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.download_button.click()
    qtbot.waitUntil(lambda: dialog.progress.value() == 10, timeout=3000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: "cancelled" in dialog.status.text(), timeout=5000)
    assert dialog.download_button.isEnabled() and dialog.folder_button.isEnabled()


def _visible_labels(dialog):
    from PySide6.QtWidgets import QLabel

    return [w for w in dialog.findChildren(QLabel) if w.isVisible() and w.text()]


def _assert_gui_wording(dialog):
    """No command-line text in view: no commands, dash bullets, paths, or a size that can wrap."""
    for label in _visible_labels(dialog):
        text = label.text()
        assert "hayai " not in text and "--" not in text and "\n  - " not in text, text
        assert "/" not in text and " MB" not in text, text  # sizes use a no-break space
        # not clipped: the label got the height its wrapped text needs, inside the window
        assert label.height() >= label.heightForWidth(label.width()) - 1, text
        bottom = label.mapTo(dialog, label.rect().bottomLeft()).y()
        assert bottom <= dialog.height(), text


def test_model_dialog_says_one_sentence_with_the_facts_behind_details(qtbot):
    from model.download import missing_message

    dialog = ModelDialog("v2.1", missing_message("v2.1"))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    _assert_gui_wording(dialog)
    assert dialog.intro.text().count(".") == 1  # one sentence
    assert not dialog.details.text.isVisible()  # details closed until asked for
    facts = dialog.details.plain_text()
    assert "not installed" in facts and "model.safetensors" in facts and "huggingface.co" in facts
    assert "  - " not in facts and "hayai model download" not in facts
    dialog.details.button.click()
    assert dialog.details.text.isVisible()
    _assert_gui_wording(dialog)


def test_model_dialog_offline_failure_is_one_sentence_not_the_cli_text_again(qtbot):
    def offline(variant, progress=None, cancel=None):
        from model.download import missing_message
        from model.errors import DownloadError

        raise DownloadError(missing_message(variant, offline=True))

    dialog = ModelDialog("v2.1", download_fn=offline)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.download_button.click()
    qtbot.waitUntil(lambda: "cannot reach huggingface.co" in dialog.status.text(), timeout=5000)
    assert dialog.download_button.text() == "Try again"
    _assert_gui_wording(dialog)
    details = dialog.details.plain_text()
    assert details.count("Offline") == 1  # the reason once, behind Details, not the CLI block
    assert "HF_HUB_OFFLINE" not in details and "--model" not in details
    dialog.download_button.click()  # a second failure replaces the first, nothing piles up
    qtbot.waitUntil(lambda: dialog.download_button.isEnabled(), timeout=5000)
    assert dialog.details.plain_text().count("Offline") == 1
    assert dialog.status.text().count("cannot reach") == 1


def test_model_dialog_folder_choice(qtbot, tmp_path):
    dialog = ModelDialog("v2.1")
    qtbot.addWidget(dialog)
    folder = tmp_path / "hayai-v2.1"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert not dialog.use_folder(str(folder))  # no weights yet: said, and the dialog stays
    assert "hayai-v2.1" in dialog.status.text() and "model.safetensors" in dialog.status.text()
    for name in ("model.safetensors", "tokenizer.json"):
        (folder / name).write_bytes(b"x")
    with qtbot.waitSignal(dialog.folder_chosen, timeout=1000) as chosen:
        assert dialog.use_folder(str(folder))
    assert chosen.args == [str(folder)]


def test_about_lists_licences_and_dictionary_credits(qtbot):
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    text = dialog.browser.toPlainText()
    assert "Apache-2.0" in text and "LGPL-3.0" in text and "PyTorch" in text
    from app.dictionary import CREDITS

    assert "EDRDG" in CREDITS and "EDRDG" in text
