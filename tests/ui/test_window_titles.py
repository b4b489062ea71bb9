"""Window titles as the window manager gets them on a real X server: "History — Hayai", never
"Hayai — History — Hayai" (Qt appends the application's display name to a title not ending in it).

The Qt part runs in a child process on Xvfb (xcb); `xprop` reads each window's _NET_WM_NAME."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.xvfb]

HERE = Path(__file__).resolve()


@pytest.mark.skipif(shutil.which("xprop") is None, reason="xprop (x11-utils) is not installed")
def test_every_window_of_ours_names_itself_then_hayai_once(xvfb, child, tmp_path):
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="xcb",
        HAYAI_CONFIG_DIR=str(tmp_path / "cfg"),
        PYTHONPATH=str(HERE.parents[2]),
    )
    titles = json.loads(child(HERE, env=env).stdout.strip().splitlines()[-1])
    assert titles == {
        "settings": "Settings — Hayai",
        "history": "History — Hayai",
        "log": "Reading log — Hayai",
        "model": "OCR model — Hayai",
        "about": "About Hayai",
    }


def _title(window) -> str:
    out = subprocess.run(
        ["xprop", "-id", str(int(window.winId())), "_NET_WM_NAME"],
        capture_output=True,
        text=True,
        timeout=10,
    ).stdout
    return out.split("=", 1)[1].strip().strip('"')


def main() -> None:
    from PySide6.QtWidgets import QApplication

    from app.history import History
    from app.settings import Settings
    from app.ui.about import AboutDialog
    from app.ui.history_window import HistoryWindow
    from app.ui.model_dialog import ModelDialog
    from app.ui.reading_log import ReadingLog
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.theme import APP_TITLE

    qapp = QApplication(sys.argv[:1])
    qapp.setApplicationDisplayName(APP_TITLE)  # as app/launcher.py does
    history = History(limit=10)
    windows = {
        "settings": SettingsDialog(Settings()),
        "history": HistoryWindow(history),
        "log": ReadingLog(history, 0.0),
        "model": ModelDialog(),
        "about": AboutDialog(),
    }
    for window in windows.values():
        window.show()
    for _ in range(20):
        qapp.processEvents()
    print(json.dumps({name: _title(w) for name, w in windows.items()}, ensure_ascii=False))
    for window in windows.values():
        window.close()
    history.close()


if __name__ == "__main__":
    main()
