"""The launcher's own paths: --install-desktop-entry, and a bad override that exits with a message."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from app import launcher

REPO = Path(__file__).resolve().parents[2]


def _args(**overrides):
    values = dict(
        model=None,
        hotkey=None,
        no_tray=True,
        verbose=False,
        debug_dir=None,
        install_desktop_entry=False,
        command=None,
        repeat=False,
    )
    values.update(overrides)
    return argparse.Namespace(**values)


def test_install_desktop_entry_writes_the_entry_and_says_where(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr("sys.platform", "linux")
    assert launcher.main(_args(install_desktop_entry=True)) == 0
    entry = tmp_path / "data" / "applications" / "hayai.desktop"
    assert entry.is_file() and "Exec=" in entry.read_text()
    assert str(entry) in capsys.readouterr().out


def test_a_forwarding_start_never_builds_a_gui(tmp_path, monkeypatch, qapp):
    # GIVEN the lock is held by a running app that acknowledges commands
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    from app.platform import single_instance

    lock = single_instance.lock_file()
    assert lock.tryLock(0)
    sent = []
    monkeypatch.setattr(
        single_instance,
        "send",
        lambda command, **_: sent.append(command) or single_instance.Answer(),
    )
    monkeypatch.setattr(
        launcher, "run_app", lambda *a, **k: (_ for _ in ()).throw(AssertionError("started an app"))
    )
    try:
        # WHEN `hayai capture --repeat` runs THEN it forwards "rescan" and returns 0
        assert launcher.main(_args(command="capture", repeat=True)) == 0
        assert launcher.main(_args()) == 0  # a plain second `hayai` opens a capture
    finally:
        lock.unlock()
    assert sent == ["rescan", "capture"]


def test_a_term_signal_just_before_the_event_loop_still_ends_the_app(tmp_path):
    # GIVEN the app started with a SIGTERM landing just before its event loop runs (a kill as it
    # starts; Qt drops a quit asked for before the loop, so the app ran on with its parts shut down)
    code = """
import os, signal, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

real_exec = QApplication.exec

def exec_after_a_term(*_):
    os.kill(os.getpid(), signal.SIGTERM)
    QTimer.singleShot(15000, lambda: QApplication.exit(99))  # the quit was lost
    return real_exec()

QApplication.exec = exec_after_a_term
from app.cli import build_parser
from app.launcher import main
sys.exit(main(build_parser().parse_args(["--no-tray"])))
"""
    env = {
        **os.environ,
        "HAYAI_CONFIG_DIR": str(tmp_path / "cfg"),
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(REPO),
    }
    # WHEN it runs THEN it ends, cleanly, at once
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
