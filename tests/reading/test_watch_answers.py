"""`hayai watch`, `--stop` and `--toggle` say what the running app did (issue #40, item 7): the app
answers the watch commands over the single-instance socket with a sentence, which the command
prints (or, when the app could not, prints on stderr and exits 1)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from app.platform.single_instance import Answer

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "platform")
)  # test_single_instance's launcher child
import test_single_instance  # noqa: E402  (the real launcher in a child process)
import wired_app

env, make_app = wired_app.env, wired_app.make_app
Primary, hayai = test_single_instance.Primary, test_single_instance.hayai

pytestmark = pytest.mark.gui


def test_each_watch_command_says_what_it_did(make_app, monkeypatch):
    import app.reading.watch as watch_module
    from app.capture.region import Region

    monkeypatch.setattr(watch_module, "app_windows_over", lambda rect, exclude=None: False)
    app = make_app()
    nothing = Answer("Nothing is being watched")
    assert app.handle_command("watch-stop") == nothing
    assert app.handle_command("watch-toggle") == nothing
    frame = QImage(780, 100, QImage.Format.Format_RGB32)
    frame.fill(0xFFEEEEEE)
    app.capture.route.grab_box = lambda name, box, desktop: frame
    # a region of 780×100 physical pixels at 1060,730 of the virtual desktop
    region = Region("fake-0", (10, 20, 780, 100), (1060, 730, 780, 100), (10, 20, 780, 100))
    assert app.watch_control.watch(region, 60_000) == Answer("Watching 780×100 at 1060,730")
    app.watch_control.watcher.frame.hide()
    assert app.handle_command("watch-toggle") == Answer("Paused watching 780×100 at 1060,730")
    assert app.handle_command("watch-toggle") == Answer("Watching 780×100 at 1060,730")
    assert app.handle_command("watch-stop") == Answer("Stopped watching 780×100 at 1060,730")
    assert app.handle_command("watch-stop") == nothing
    refused = app.handle_command("watch region=90000,0,100,100")
    assert not refused.ok and refused.text.startswith("Cannot watch that region: ")


def test_hayai_watch_prints_the_running_apps_answer(tmp_path):
    config = tmp_path / "cfg"
    # GIVEN a running app with its own command handler
    primary = Primary(config, "answers")
    primary.wait_for("STARTED")
    try:
        # WHEN `hayai watch --stop` and `--toggle` run with nothing watched THEN each says so
        for option in ("--stop", "--toggle"):
            done = hayai(config, "watch", option)
            assert (done.returncode, done.stdout, done.stderr) == (
                0,
                "Nothing is being watched\n",
                "",
            )
        # a region off every screen: why, on stderr, and exit 1
        done = hayai(config, "watch", "--region", "90000,0,100,100")
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.startswith("hayai: Cannot watch that region: "), done.stderr
    finally:
        assert primary.stop() == 0
