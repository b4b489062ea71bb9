"""Settings dialog (built from the table), model dialog (download with progress/cancel, folder,
offline explanation) and the About dialog (licences, dictionary credits)."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from app.settings import SETTINGS, Settings
from app.ui.about import AboutDialog
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
    assert set(dialog.editors) == {s.key for s in SETTINGS if s.label}
    assert isinstance(dialog.editors["output/auto_copy"], QCheckBox)
    assert isinstance(dialog.editors["history/length"], QSpinBox)
    assert isinstance(dialog.editors["model/precision"], QComboBox)
    assert isinstance(dialog.editors["hotkey/capture"], QLineEdit)
    for s in SETTINGS:
        if s.label:
            assert dialog.editors[s.key].toolTip() == s.help
    assert dialog.values()["history/length"] == 500


def test_settings_dialog_saves_the_values(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.editors["output/auto_copy"].setChecked(False)
    dialog.editors["history/length"].setValue(42)
    dialog.editors["model/precision"].setCurrentText("exact")
    dialog.editors["hotkey/rescan"].setText("<ctrl>+<alt>+e")
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


def test_an_invalid_hotkey_is_explained_and_nothing_is_saved(settings, qtbot):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.editors["hotkey/capture"].setText("<ctrl>+<banana>")
    assert not dialog.save()
    assert "hotkey" in dialog.error.text().lower()
    dialog.editors["hotkey/capture"].setText("<ctrl>+<alt>+r")  # same as re-scan
    assert not dialog.save() and "same" in dialog.error.text()
    assert Settings().get("hotkey/capture") == "<ctrl>+<alt>+o"


def test_overridden_settings_say_so(tmp_path, monkeypatch, qtbot):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    dialog = SettingsDialog(Settings(overrides={"hotkey/capture": "<ctrl>+<shift>+q"}))
    qtbot.addWidget(dialog)
    assert dialog.editors["hotkey/capture"].text() == "<ctrl>+<alt>+o"  # edits the saved value
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
    assert "311.0 MB of 622.0 MB" in dialog.file_label.text()
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


def test_model_dialog_offline_failure_explains_where_the_files_go(qtbot):
    def offline(variant, progress=None, cancel=None):
        from model.download import missing_message
        from model.errors import DownloadError

        raise DownloadError(missing_message(variant, offline=True))

    dialog = ModelDialog("v2.1", download_fn=offline)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.download_button.click()
    qtbot.waitUntil(lambda: "Offline" in dialog.status.text(), timeout=5000)
    assert "--model DIR" in dialog.status.text() and dialog.download_button.text() == "Try again"
    # and the dialog always names the files and the folder route, even before trying
    assert "model.safetensors" in dialog.details.text()


def test_model_dialog_folder_choice(qtbot):
    dialog = ModelDialog("v2.1")
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.folder_chosen, timeout=1000) as chosen:
        dialog.use_folder("/models/hayai")
    assert chosen.args == ["/models/hayai"]


def test_about_lists_licences_and_dictionary_credits(qtbot):
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    text = dialog.browser.toPlainText()
    assert "Apache-2.0" in text and "LGPL-3.0" in text and "PyTorch" in text
    from app.dictionary import CREDITS

    assert "EDRDG" in CREDITS and "EDRDG" in text
