"""Watched regions: change detection (app/reading/watch.py), `hayai watch`'s messages, and the
watcher wired into the app with a fake model and a scripted screen (ticks driven by hand)."""

from __future__ import annotations

import argparse
import itertools
import threading

import numpy as np
import pytest
import wired_app
from appcore_fakes import FakeSession
from PySide6.QtCore import QTimer
from PySide6.QtGui import QImage

from app.capture import ScreenInfo
from app.platform.qt_images import qimage_bgra
from app.reading import cli as watch_cli
from app.reading.watch import MAX_UNSETTLED_S, ChangeTracker, differs, locate, signature

env, make_app = wired_app.env, wired_app.make_app


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
    """Feed signatures one tick each; the indexes of the frames taken for a read."""
    return [
        i for i, frame in enumerate(frames) if tracker.update(signature(frame), start + i * step)
    ]


def test_a_still_region_is_read_once_after_one_quiet_tick():
    assert run(ChangeTracker(0.5), [page(glyphs=5)] * 6) == [1]


def test_a_typewriter_reveal_is_read_once_when_it_stops():
    tracker = ChangeTracker(0.5)
    frames = [page(glyphs=0)] * 2 + [page(glyphs=n) for n in range(1, 9)] + [page(glyphs=8)] * 4
    assert run(tracker, frames) == [1, 10]  # the empty box, then the whole line once


def test_a_region_that_never_settles_is_still_read_every_few_seconds():
    frames = [page(glyphs=i % 2 + 1, noise=0) for i in range(20)]  # flickers every tick
    due = run(ChangeTracker(0.5), frames, step=0.5)
    assert due, "never read"
    assert all(b - a >= MAX_UNSETTLED_S / 0.5 for a, b in zip(due, due[1:]))


# --- the watcher on its own: frames, a clock and reads driven by the test ------------------------


class Stage:
    """The watched region's picture (a labelled line of glyphs) and a clock the test moves."""

    def __init__(self, qtbot):
        from app.capture.region import Region
        from app.reading.watch import RegionWatcher

        self.qtbot = qtbot
        self.now = 0.0
        self.show("A", 2)
        self.sent: list[str] = []  # the pictures sent for a read, by label
        self.emitted: list[str] = []
        region = Region("fake-0", (10, 20, 800, 200), (10, 20, 800, 200), (10, 20, 800, 200))
        # The timer's interval is a minute (the test ticks by hand); the tracker's is 0.5 s.
        self.watcher = RegionWatcher(
            region, 60_000, grab=lambda: self.image, covered=lambda: None, clock=lambda: self.now
        )
        self.watcher.tracker.interval_s = 0.5
        self.watcher.read_due.connect(lambda image: self.sent.append(image.text("label")))
        self.watcher.start()
        self.watcher.frame.hide()

    def show(self, label: str, glyphs: int) -> None:
        self.image = qimage(page(glyphs=glyphs))
        self.image.setText("label", label)

    def tick(self, at: float) -> None:
        self.now = at
        self.watcher.tick()

    def done(self, text: str) -> None:
        """The read in flight comes back with `text`; the next waiting one is then sent."""
        assert self.watcher.in_flight
        if self.watcher.read_done(text):
            self.emitted.append(text)
        self.qtbot.wait(10)


@pytest.fixture
def stage(qtbot):
    stage = Stage(qtbot)
    yield stage
    stage.watcher.stop()


def test_changes_that_settle_during_a_slow_read_are_each_read_once_in_order(stage):
    stage.tick(0.0)
    stage.tick(0.5)  # A settled: read
    assert stage.sent == ["A"]
    # WHILE A's read takes long (a busy CPU), the line changes twice and settles each time
    stage.show("B", 5)
    for t in (1.0, 1.5, 2.0):
        stage.tick(t)
    stage.show("C", 9)
    for t in (2.5, 3.0, 3.5, 4.0):
        stage.tick(t)
    assert stage.sent == ["A"]  # one read at a time
    # THEN each is read after it, in order, once
    stage.done("A")
    assert stage.sent == ["A", "B"]
    stage.tick(4.5)
    assert stage.sent == ["A", "B"]
    stage.done("B")
    stage.done("C")
    assert stage.sent == ["A", "B", "C"] and stage.emitted == ["A", "B", "C"]
    # AND nothing while the picture stays, however late the ticks come
    for t in (5.0, 5.5, 9.0, 30.0, 30.01, 30.5):
        stage.tick(t)
    assert stage.sent == ["A", "B", "C"] and not stage.watcher.in_flight


def test_a_dropped_read_is_read_again_before_the_newer_picture(stage):
    stage.tick(0.0)
    stage.tick(0.5)
    # WHEN A's read is dropped (the user's own read took the worker's slot) and B appears
    stage.watcher.read_failed()
    stage.show("B", 5)
    stage.tick(1.0)
    stage.tick(1.5)
    # THEN A, the change that was dropped, is read again first, then B
    assert stage.sent == ["A", "A"]
    stage.done("A")
    stage.done("B")
    assert stage.sent == ["A", "A", "B"] and stage.emitted == ["A", "B"]


def test_a_slow_grab_followed_at_once_by_the_next_does_not_settle_a_typewriter(stage):
    stage.tick(0.0)
    stage.tick(0.5)
    stage.done("A")
    # a line typed a glyph every 0.2 s; a slow grab makes two frames 10 ms apart show the same
    for n, t in enumerate((1.0, 1.2, 1.4, 1.6), start=1):
        stage.show(f"typed {n}", n)
        stage.tick(t)
        stage.tick(t + 0.01)  # back to back: the picture has not stayed yet
    stage.tick(2.1)  # the whole line, still for an interval: read once
    stage.tick(2.6)
    assert stage.sent == ["A", "typed 4"]


def test_a_late_tick_does_not_read_a_picture_still_changing(stage):
    stage.tick(0.0)
    stage.tick(0.5)
    stage.done("A")
    # the line is being typed: each frame differs from the one before; one tick comes 9 s late
    for n, t in enumerate((1.0, 1.5, 10.5, 11.0), start=3):
        stage.show(f"typed {n}", n)
        stage.tick(t)
    assert stage.sent == ["A"]  # a moving picture is read only after MAX_UNSETTLED_S of frames
    stage.tick(11.5)
    assert stage.sent == ["A", "typed 6"]


@pytest.mark.slow
def test_under_real_cpu_load_each_change_is_read_once_in_order(qtbot):
    """Two busy processes keep both cores busy (as a game does) while the real timer ticks. The
    screen and the model keep time in frames grabbed, not by the clock, so the load slows the test
    but never changes what it sees: B and C each settle while the read before them is running."""
    from app.capture.region import Region
    from app.reading.watch import RegionWatcher
    from app.reading.watch_bench import cpu_load

    pictures = []
    for label, glyphs in (("A", 2), ("B", 5), ("C", 9)):
        pictures.append(qimage(page(glyphs=glyphs)))
        pictures[-1].setText("label", label)
    shown_for = 16  # frames each of A and B is on screen (0.8 s at 50 ms); C stays
    read_for = 40  # frames a read takes: longer than A and B are on screen
    frames = itertools.count()
    now = 0  # the frames grabbed so far
    reading: list[tuple[int, str]] = []  # (the frame its read comes back at, label)
    sent, emitted = [], []

    def grab():
        nonlocal now
        now = next(frames)
        if reading and now >= reading[0][0]:
            label = reading.pop(0)[1]
            QTimer.singleShot(0, lambda: watcher.read_done(label) and emitted.append(label))
        return pictures[min(2, now // shown_for)]

    def read(image):
        sent.append(image.text("label"))
        reading.append((now + read_for, sent[-1]))

    region = Region("fake-0", (10, 20, 800, 200), (10, 20, 800, 200), (10, 20, 800, 200))
    with cpu_load(2):
        watcher = RegionWatcher(region, 50, grab=grab, covered=lambda: None)
        watcher.read_due.connect(read)
        watcher.start()
        watcher.frame.hide()
        try:
            qtbot.waitUntil(lambda: "C" in emitted, timeout=120_000)
            still_from = watcher.ticks  # C stays: nothing more for 20 ticks
            qtbot.waitUntil(lambda: watcher.ticks >= still_from + 20, timeout=60_000)
        finally:
            watcher.stop()
    assert sent == ["A", "B", "C"] and emitted == ["A", "B", "C"]


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
    from app.capture.region import Region

    # Offscreen, every window of the test session (the no-tray window, windows other tests left
    # open) sits at the origin over the region: "covered" is tested on its own, not here.
    monkeypatch.setattr(watch_module, "app_windows_over", lambda rect, exclude=None: False)

    screen = {"frame": page(glyphs=2)}
    recognizer = FakeRecognizer("一行目")
    app = make_app(recognizer)
    app.capture.route.grab_box = lambda name, box, desktop: qimage(screen["frame"])
    region = Region("fake-0", (10, 20, 800, 200), (10, 20, 800, 200), (10, 20, 800, 200))
    app.watch_control.watch(region, interval_ms=60_000)  # ticks are driven by the test
    app.watch_control.watcher.frame.hide()  # offscreen: the ring is not needed and is not a capture source here
    # each tick's frame half a second after the last, the tracker's interval
    app.watch_control.watcher.tracker.interval_s = 0.5
    app.watch_control.watcher._clock = itertools.count(0.0, 0.5).__next__
    yield app, screen, recognizer
    app.watch_control.stop()


def settle(app, qtbot, ticks=1):
    for _ in range(ticks):
        app.watch_control.watcher.tick()
    # read back, and its text on screen (history, outputs) or found not new
    qtbot.waitUntil(
        lambda: (
            not (
                app.watch_control.watcher.in_flight
                or app.watch_control.watcher.waiting
                or app.reads.pending_paint
            )
        ),
        timeout=5000,
    )


def test_each_settled_change_is_read_once_and_repeated_text_is_not_emitted(watched_app, qtbot):
    app, screen, recognizer = watched_app
    app.watch_control.watcher.tick()  # first sight: changing
    settle(app, qtbot)  # quiet: read
    assert [e.text for e in app.history.entries()] == ["一行目"]
    settle(app, qtbot, ticks=3)  # nothing changes: nothing is read
    assert len(recognizer.reads) == 1
    # a new line appears character by character, then stays
    recognizer.text = "二行目"
    for n in range(3, 7):
        screen["frame"] = page(glyphs=n)
        app.watch_control.watcher.tick()
    settle(app, qtbot, ticks=2)
    assert len(recognizer.reads) == 2
    assert [e.text for e in app.history.entries()] == ["二行目", "一行目"]
    assert app.overlay.text() == "二行目"
    # the picture changes but the model reads the same text: read, but not emitted again
    screen["frame"] = page(glyphs=2)
    app.watch_control.watcher.tick()
    settle(app, qtbot)
    assert len(recognizer.reads) == 3
    assert [e.text for e in app.history.entries()] == ["二行目", "一行目"]


def glyphs_in(image: QImage) -> int:
    """How many of page()'s dark glyphs a crop shows (along their middle row)."""
    row = qimage_bgra(image)[92, :, 1] < 128
    return int(np.count_nonzero(row[1:] & ~row[:-1]) + row[0])


def test_one_read_in_flight_and_every_change_meanwhile_read_after_it_in_order(watched_app, qtbot):
    app, screen, recognizer = watched_app
    crops = []
    app.watch_control.watcher.read_due.connect(lambda image: crops.append(glyphs_in(image)))
    recognizer.gate = threading.Event()
    app.watch_control.watcher.tick()
    app.watch_control.watcher.tick()  # due: read 1 starts and blocks in the model
    qtbot.waitUntil(recognizer.started.is_set, timeout=5000)
    for n in range(3, 8):  # the region changes and settles again and again meanwhile
        screen["frame"] = page(glyphs=n)
        app.watch_control.watcher.tick()
        app.watch_control.watcher.tick()
    assert app.watch_control.watcher.reads == 1 and len(app.reads.pending) == 1
    recognizer.gate.set()
    settle(app, qtbot)  # each settled change is read after the first read came back, in order
    assert crops == [2, 3, 4, 5, 6, 7] and len(recognizer.reads) == 6
    settle(app, qtbot, ticks=3)  # and nothing more while it stays
    assert app.watch_control.watcher.reads == 6


def test_pause_resume_and_stop(watched_app, qtbot):
    app, screen, recognizer = watched_app
    app.watch_control.toggle()
    assert app.watch_control.watcher.state == "paused" and app.watch_control.watcher.frame.paused
    app.handle_command("watch-toggle")
    assert app.watch_control.watcher.state == "watching"
    app.handle_command("watch-stop")
    assert app.watch_control.watcher is None


def test_watch_commands_with_a_bad_or_missing_region_say_why(make_app, qtbot):
    app = make_app()
    messages = []
    app.toast.show_message = lambda title, message, error=False: messages.append((title, message))
    app.handle_command("watch last")
    assert messages[-1][0] == "Nothing to watch"
    app.handle_command("watch region=90000,0,100,100")
    assert messages[-1][0] == "Cannot watch that region"
    assert app.watch_control.watcher is None


def test_the_frame_is_hidden_while_the_screen_is_frozen_for_a_selection(watched_app):
    from appcore_fakes import fake_captures

    app, _, _ = watched_app
    frame = app.watch_control.watcher.frame
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
    assert capsys.readouterr().out == "Nothing is being watched (Hayai is not running)\n"


def test_a_watched_read_never_pushes_out_the_users_own_read(watched_app, qtbot):
    from appcore_fakes import FakeSession, make_selection

    app, screen, recognizer = watched_app
    recognizer.gate = threading.Event()
    app.watch_control.watcher._covered = lambda: (
        False
    )  # the overlay of the user's read lies over the region here
    # GIVEN the user's own read is waiting on the model
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection(box=(10, 20, 60, 30)))
    qtbot.waitUntil(recognizer.started.is_set, timeout=5000)
    # WHEN the watched region settles meanwhile
    app.watch_control.watcher.tick()
    app.watch_control.watcher.tick()
    # THEN nothing is queued behind it (the worker would drop the user's waiting crop for it)
    assert [p.source for p in app.reads.pending.values()] == ["box"]
    assert not app.watch_control.watcher.in_flight
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
    from app.capture.region import Region

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

    from app.capture.region import Region

    app = make_app()  # --no-tray: its window is on screen
    app.window.setGeometry(100, 100, 300, 200)
    app.window.show()
    region = Region("fake-0", (150, 150, 120, 60), (150, 150, 120, 60), (150, 150, 120, 60))
    app.capture.route.grab_box = lambda name, box, desktop: qimage(page(glyphs=2))
    app.watch_control.watch(region, interval_ms=60_000)
    try:
        assert not app.window.frameGeometry().intersects(QRect(150, 150, 120, 60))
        assert app.watch_control.watcher.covered_note == ""
    finally:
        app.watch_control.stop()


def test_watch_with_no_region_answers_before_the_screen_is_grabbed(make_app, qtbot):
    app = make_app()
    sessions = len(FakeSession.started)
    answer = app.handle_command("watch")
    # `hayai watch` has its answer at once (it waits for it); the grab and the selection come after
    assert answer.ok and answer.text == "Box the region to watch on the screen (Esc cancels)"
    assert len(FakeSession.started) == sessions
    qtbot.waitUntil(lambda: len(FakeSession.started) == sessions + 1)


def test_watching_where_only_the_portal_captures_is_refused_with_a_message(make_app, monkeypatch):
    import app.capture as capture

    monkeypatch.setattr(capture, "watch_problem", lambda backend=None: "no watching here")
    app = make_app()
    from app.capture.region import Region

    region = Region("fake-0", (10, 20, 80, 20), (10, 20, 80, 20), (10, 20, 80, 20))
    app.watch_control.watch(region)
    assert app.watch_control.watcher is None
    assert "Watching is not available here" in app.toast.title.text()
    assert app.toast.body.text() == "no watching here"
    # `hayai watch` with nothing boxed yet: refused before the selection opens
    sessions = len(FakeSession.started)
    app.handle_command("watch")
    assert len(FakeSession.started) == sessions and app.watch_control.watcher is None
