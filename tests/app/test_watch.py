"""Watched regions: change detection (app/reading/watch.py), `hayai watch`'s messages, and the
watcher wired into the app with a fake model and a scripted screen (ticks driven by hand)."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app.capture import ScreenInfo
from app.reading import cli as watch_cli
from app.reading.watch import MAX_UNSETTLED_S, ChangeTracker, differs, locate, signature

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_application  # noqa: E402  (its app fixtures, shared below)

env, make_app = test_application.env, test_application.make_app


def page(width=800, height=200, glyphs=0, noise=0, seed=0) -> np.ndarray:
    """A light dialogue line with `glyphs` dark 24×24 characters from the left (BGRA)."""
    bgra = np.full((height, width, 4), 235, dtype=np.uint8)
    for i in range(glyphs):
        x = 20 + i * 30
        bgra[80:104, x : x + 24, :3] = 20
    if noise:
        rng = np.random.default_rng(seed)
        jitter = rng.integers(-noise, noise + 1, bgra.shape[:2] + (3,))
        bgra[..., :3] = np.clip(bgra[..., :3].astype(int) + jitter, 0, 255).astype(np.uint8)
    return bgra


def test_one_more_character_is_a_change_and_noise_is_not():
    assert differs(signature(page(glyphs=3)), signature(page(glyphs=4)))
    assert not differs(signature(page(glyphs=3)), signature(page(glyphs=3, noise=3, seed=1)))
    assert signature(page()).shape[1] <= 48


def run(tracker: ChangeTracker, frames, start=0.0, step=0.5) -> list[int]:
    """Feed signatures one tick each; the indexes of the ticks that were due (and then read)."""
    due = []
    for i, frame in enumerate(frames):
        sig = signature(frame)
        if tracker.update(sig, start + i * step):
            tracker.reading(sig)
            due.append(i)
    return due


def test_a_still_region_is_read_once_after_one_quiet_tick():
    assert run(ChangeTracker(), [page(glyphs=5)] * 6) == [1]


def test_a_typewriter_reveal_is_read_once_when_it_stops():
    tracker = ChangeTracker()
    frames = [page(glyphs=0)] * 2 + [page(glyphs=n) for n in range(1, 9)] + [page(glyphs=8)] * 4
    assert run(tracker, frames) == [1, 10]  # the empty box, then the whole line once


def test_a_region_that_never_settles_is_still_read_every_few_seconds():
    frames = [page(glyphs=i % 2 + 1, noise=0) for i in range(20)]  # flickers every tick
    due = run(ChangeTracker(), frames, step=0.5)
    assert due, "never read"
    assert all(b - a >= MAX_UNSETTLED_S / 0.5 for a, b in zip(due, due[1:]))


def test_locate_maps_desktop_pixels_to_a_screen_on_mixed_dpi():
    screens = [
        ScreenInfo("left", (0, 0, 1920, 1080), (0, 0, 1920, 1080), 1.0),
        ScreenInfo("right", (1920, 0, 1280, 720), (1920, 0, 2560, 1440), 2.0),
    ]
    assert locate((100, 800, 1200, 200), screens) == (
        "left",
        (100, 800, 1200, 200),
        (100, 800, 1200, 200),
    )
    assert locate((2020, 100, 400, 200), screens) == (
        "right",
        (100, 100, 400, 200),
        (1970, 50, 200, 100),
    )
    with pytest.raises(ValueError, match="does not lie on one screen"):
        locate((1800, 0, 400, 100), screens)  # across the two
    with pytest.raises(ValueError, match="smaller"):
        locate((0, 0, 2, 2), screens)


def test_watch_messages_round_trip_and_bad_values_are_refused():
    parser = argparse.ArgumentParser()
    watch_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["watch", "--region", "10,20,300,40", "--interval", "0.25"])
    line = watch_cli.message(args)
    assert line == "watch region=10,20,300,40 interval=0.25"
    assert watch_cli.parse_message(line.partition(" ")[2]) == {
        "region": (10, 20, 300, 40),
        "last": False,
        "interval_ms": 250,
    }
    assert watch_cli.message(parser.parse_args(["watch", "--stop"])) == "watch-stop"
    assert watch_cli.message(parser.parse_args(["watch", "--last"])) == "watch last"
    for bad in (["--region", "1,2,3"], ["--region", "0,0,2,2"], ["--interval", "0"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["watch", *bad])
    with pytest.raises(ValueError):
        watch_cli.parse_message("region=1,2,x,4")
    with pytest.raises(ValueError):
        watch_cli.parse_message("rm=-rf")


# --- the watcher in the app --------------------------------------------------------------------


def qimage(bgra: np.ndarray) -> QImage:
    h, w = bgra.shape[:2]
    return QImage(bgra.tobytes(), w, h, w * 4, QImage.Format.Format_RGB32).copy()


@pytest.fixture
def watched_app(make_app, qtbot, monkeypatch):
    from appcore_fakes import FakeRecognizer

    import app.reading.watch as watch_module
    from app.application import Region

    # Offscreen, every window of the test session (the no-tray window, windows other tests left
    # open) sits at the origin over the region: "covered" is tested on its own, not here.
    monkeypatch.setattr(watch_module, "app_windows_over", lambda rect, exclude=None: False)

    screen = {"frame": page(glyphs=2)}
    recognizer = FakeRecognizer("一行目")
    app = make_app(recognizer)
    app.capture.route.grab_box = lambda name, box, desktop: qimage(screen["frame"])
    region = Region("fake-0", (10, 20, 800, 200), (10, 20, 800, 200), (10, 20, 800, 200))
    app.watch(region, interval_ms=60_000)  # ticks are driven by the test
    app.watcher.frame.hide()  # offscreen: the ring is not needed and is not a capture source here
    yield app, screen, recognizer
    app.stop_watching()


def settle(app, qtbot, ticks=1):
    for _ in range(ticks):
        app.watcher.tick()
    # read back, and its text on screen (history, outputs) or found not new
    qtbot.waitUntil(
        lambda: not app.watcher.in_flight and app.reads.pending_paint is None, timeout=5000
    )


def test_each_settled_change_is_read_once_and_repeated_text_is_not_emitted(watched_app, qtbot):
    app, screen, recognizer = watched_app
    app.watcher.tick()  # first sight: changing
    settle(app, qtbot)  # quiet: read
    assert [e.text for e in app.history.entries()] == ["一行目"]
    settle(app, qtbot, ticks=3)  # nothing changes: nothing is read
    assert len(recognizer.reads) == 1
    # a new line appears character by character, then stays
    recognizer.text = "二行目"
    for n in range(3, 7):
        screen["frame"] = page(glyphs=n)
        app.watcher.tick()
    settle(app, qtbot, ticks=2)
    assert len(recognizer.reads) == 2
    assert [e.text for e in app.history.entries()] == ["二行目", "一行目"]
    assert app.overlay.text() == "二行目"
    # the picture changes but the model reads the same text: read, but not emitted again
    screen["frame"] = page(glyphs=2)
    app.watcher.tick()
    settle(app, qtbot)
    assert len(recognizer.reads) == 3
    assert [e.text for e in app.history.entries()] == ["二行目", "一行目"]


def test_never_more_than_one_read_in_flight(watched_app, qtbot):
    app, screen, recognizer = watched_app
    recognizer.gate = threading.Event()
    app.watcher.tick()
    app.watcher.tick()  # due: read 1 starts and blocks in the model
    qtbot.waitUntil(recognizer.started.is_set, timeout=5000)
    for n in range(3, 8):  # the region changes and settles again and again meanwhile
        screen["frame"] = page(glyphs=n)
        app.watcher.tick()
        app.watcher.tick()
    assert app.watcher.reads == 1 and len(app.reads.pending) == 1
    recognizer.gate.set()
    qtbot.waitUntil(lambda: not app.watcher.in_flight, timeout=5000)
    settle(app, qtbot)  # the settled change is read after the first read came back
    assert app.watcher.reads == 2


def test_pause_resume_and_stop(watched_app, qtbot):
    app, screen, recognizer = watched_app
    app.toggle_watching()
    assert app.watcher.state == "paused" and app.watcher.frame.paused
    app.handle_command("watch-toggle")
    assert app.watcher.state == "watching"
    app.handle_command("watch-stop")
    assert app.watcher is None


def test_watch_commands_with_a_bad_or_missing_region_say_why(make_app, qtbot):
    app = make_app()
    messages = []
    app.notify = lambda title, message, error=False: messages.append((title, message))
    app.handle_command("watch last")
    assert messages[-1][0] == "Nothing to watch"
    app.handle_command("watch region=90000,0,100,100")
    assert messages[-1][0] == "Cannot watch that region"
    assert app.watcher is None


def test_the_frame_is_hidden_while_the_screen_is_frozen_for_a_selection(watched_app):
    from appcore_fakes import fake_captures

    app, _, _ = watched_app
    frame = app.watcher.frame
    frame.show()
    seen = []

    def grab():
        seen.append(frame.isVisible())
        return fake_captures()

    app.capture.route.grab_screens = grab
    app.handle_command("capture")
    assert seen == [False]  # not part of the frozen screen
    assert frame.isVisible()  # and back right after


def test_watch_stop_with_no_app_running_starts_nothing(env, capsys):
    from app.cli import build_parser
    from app.launcher import main

    assert main(build_parser().parse_args(["watch", "--stop"])) == 0
    assert "not running" in capsys.readouterr().err


def test_a_watched_read_never_pushes_out_the_users_own_read(watched_app, qtbot):
    from appcore_fakes import FakeSession, make_selection

    app, screen, recognizer = watched_app
    recognizer.gate = threading.Event()
    app.watcher._covered = lambda: False  # the overlay of the user's read lies over the region here
    # GIVEN the user's own read is waiting on the model
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection(box=(10, 20, 60, 30)))
    qtbot.waitUntil(recognizer.started.is_set, timeout=5000)
    # WHEN the watched region settles meanwhile
    app.watcher.tick()
    app.watcher.tick()
    # THEN nothing is queued behind it (the worker would drop the user's waiting crop for it)
    assert [p.source for p in app.reads.pending.values()] == ["box"]
    assert not app.watcher.in_flight
    recognizer.gate.set()
    qtbot.waitUntil(lambda: not app.reads.pending, timeout=5000)
    assert app.overlay.text() == "一行目"
    # AND the region is read at the next settled tick
    settle(app, qtbot)
    assert recognizer.reads == [(60, 30), (800, 200)]  # the user's crop, then the region


def test_a_region_under_one_of_our_windows_is_not_grabbed(qtbot):
    from PySide6.QtWidgets import QWidget

    from app.reading.watch import RegionWatcher, app_windows_over

    card = QWidget()
    qtbot.addWidget(card)
    card.setGeometry(2000, 1500, 200, 100)
    card.show()
    assert app_windows_over((2100, 1550, 50, 20))  # under the card
    assert not app_windows_over((2300, 1550, 50, 20))  # beside it
    assert not app_windows_over((2100, 1550, 50, 20), exclude=card)
    card.setObjectName("watch-frame")  # the watch's own frame never counts
    assert not app_windows_over((2100, 1550, 50, 20))
    card.setObjectName("")
    grabs = []
    from app.application import Region

    region = Region("fake-0", (2100, 1550, 50, 20), (2100, 1550, 50, 20), (2100, 1550, 50, 20))
    watcher = RegionWatcher(
        region,
        60_000,
        grab=lambda: grabs.append(1) or qimage(page(glyphs=2)),
        covered=lambda: app_windows_over((2100, 1550, 50, 20)),
    )
    notes = []
    watcher.covered_changed.connect(notes.append)
    card.setWindowTitle("Hayai")  # the no-tray window's title
    watcher.tick()
    assert grabs == [] and watcher.ticks == 1  # covered: skipped without a grab
    # AND it is said, not only logged: on the frame and to the tray/window entries
    assert notes == ["Covered by the Hayai window"]
    assert watcher.frame.note == "Covered by the Hayai window"
    assert watcher.frame.height() > 20 + 2 * 3  # the note's strip beside the ring
    watcher.tick()
    assert notes == ["Covered by the Hayai window"]  # said once, not every tick
    card.hide()
    watcher.tick()
    assert grabs == [1] and watcher.ticks == 3  # uncovered: grabbed
    assert notes[-1] == "" and watcher.frame.note == ""
    watcher.stop()


def test_the_entries_say_when_the_watched_region_is_covered(qtbot):
    from app.ui.main_window import MainWindow
    from app.ui.tray import Tray

    window, tray = MainWindow("test"), Tray()
    qtbot.addWidget(window)

    def shown(entry) -> bool:  # a button of a window not on screen is not hidden; an action visible
        return not entry.isHidden() if hasattr(entry, "isHidden") else entry.isVisible()

    for view in (window, tray):
        view.set_watch_state("watching")
        view.set_watch_note("Covered by the Reading log window")
        note = view.entries["watch_note"]
        assert note.text() == "Covered by the Reading log window" and shown(note)
        view.set_watch_note("")
        assert not shown(note)
        view.set_watch_note("Covered by the Hayai window")
        view.set_watch_state("stopped")  # stopping clears it
        assert note.text() == "" and not shown(note)


def test_watching_moves_our_window_off_the_region_where_there_is_room(make_app, qtbot):
    from PySide6.QtCore import QRect

    from app.application import Region

    app = make_app()  # --no-tray: its window is on screen
    app.window.setGeometry(100, 100, 300, 200)
    app.window.show()
    region = Region("fake-0", (150, 150, 120, 60), (150, 150, 120, 60), (150, 150, 120, 60))
    app.capture.route.grab_box = lambda name, box, desktop: qimage(page(glyphs=2))
    app.watch(region, interval_ms=60_000)
    try:
        assert not app.window.frameGeometry().intersects(QRect(150, 150, 120, 60))
        assert app.watcher.covered_note == ""
    finally:
        app.stop_watching()


def test_watching_where_only_the_portal_captures_is_refused_with_a_message(make_app, monkeypatch):
    import app.capture as capture

    monkeypatch.setattr(capture, "watch_problem", lambda backend=None: "no watching here")
    app = make_app()
    from app.application import Region

    region = Region("fake-0", (10, 20, 80, 20), (10, 20, 80, 20), (10, 20, 80, 20))
    app.watch(region)
    assert app.watcher is None
    assert "Watching is not available here" in app.toast.title.text()
    assert app.toast.body.text() == "no watching here"
    # `hayai watch` with nothing boxed yet: refused before the selection opens
    sessions = len(test_application.FakeSession.started)
    app.handle_command("watch")
    assert len(test_application.FakeSession.started) == sessions and app.watcher is None
