"""`hayai watch --last` after a restart: the last boxed region is kept on disk; with none, the
command says so in words and starts nothing."""

from __future__ import annotations

import pytest
import wired_app
from appcore_fakes import FakeSession, make_selection
from PySide6.QtGui import QImage

from app.reading.last_region import last_region_file, load_last_region, save_last_region

env, make_app = wired_app.env, wired_app.make_app

pytestmark = pytest.mark.gui


def test_the_region_is_kept_privately_and_a_broken_file_is_no_region(env):
    assert load_last_region() is None
    save_last_region((10, 20, 300, 40))
    assert load_last_region() == (10, 20, 300, 40)
    assert last_region_file().stat().st_mode & 0o077 == 0
    for broken in ("", "{", '{"box": [1, 2]}', '{"box": "x"}', '{"box": [0, 0, 1, 1]}'):
        last_region_file().write_text(broken)
        assert load_last_region() is None


def test_after_a_restart_watch_last_watches_the_region_boxed_before(make_app, qtbot, monkeypatch):
    import app.reading.watch as watch_module

    monkeypatch.setattr(watch_module, "app_windows_over", lambda rect, exclude=None: False)
    first = make_app()
    first.reads.last_latency = None
    first.handle_command("capture")
    FakeSession.started[-1].select(make_selection(box=(10, 20, 60, 30)))
    qtbot.waitUntil(lambda: first.reads.last_latency is not None, timeout=5000)
    boxed = first.capture.last_region.box_desktop_px
    assert load_last_region() == boxed
    first.quit()

    again = make_app()  # a new app: nothing in memory
    assert again.capture.last_region is None
    grabbed = []
    again.capture.route.grab_box = lambda name, box, desktop: (
        grabbed.append(desktop) or QImage(60, 30, QImage.Format.Format_RGB32)
    )
    notes = []
    again.toast.show_message = lambda title, message, error=False: notes.append(title)
    again.handle_command("watch last")
    assert again.watch_control.watcher is not None and notes == []
    assert again.watch_control.watcher.region.box_desktop_px == boxed
    again.watch_control.watcher.frame.hide()
    again.watch_control.watcher.tick()
    assert grabbed == [boxed]
    again.watch_control.stop()


def test_with_no_region_kept_watch_last_says_so_and_starts_no_app(env, capsys, monkeypatch):
    import app.launcher as launcher
    from app.cli import main

    started = []
    monkeypatch.setattr(launcher, "run_app", lambda *a, **k: started.append(a) or 0)
    assert main(["watch", "--last"]) == 1
    err = capsys.readouterr().err
    assert "no region has been boxed yet, so there is no last region to watch" in err
    assert started == []
    save_last_region((10, 20, 300, 40))
    assert main(["watch", "--last"]) == 0 and len(started) == 1  # now the app starts and watches


def test_a_running_app_with_nothing_kept_says_it_in_words(make_app):
    app = make_app()
    notes = []
    app.toast.show_message = lambda title, message, error=False: notes.append((title, message))
    app.handle_command("watch last")
    assert notes == [
        (
            "Nothing to watch",
            "No region has been boxed yet, so there is no last region to watch. "
            "“Watch a region…” boxes one and watches it.",
        )
    ]
    assert app.watch_control.watcher is None
