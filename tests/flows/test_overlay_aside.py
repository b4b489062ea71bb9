"""The always-on-top overlay never covers a window of ours: it steps aside while Settings, History,
the reading log, the model window or About is open, and comes back as it was when they close."""

from __future__ import annotations

import pytest
import wired_app
from appcore_fakes import FakeRecognizer, FakeSession, make_selection

env, make_app = wired_app.env, wired_app.make_app

pytestmark = pytest.mark.gui


def read(app, qtbot):
    app.reads.last_latency = None
    app.handle_command("capture")
    FakeSession.started[-1].select(make_selection())
    qtbot.waitUntil(lambda: app.reads.last_latency is not None, timeout=5000)


@pytest.mark.parametrize("opens", ["show_settings", "show_history", "show_log", "show_about"])
def test_the_overlay_steps_aside_for_our_windows_and_comes_back(make_app, qtbot, opens):
    app = make_app(FakeRecognizer("今日は天気"))
    read(app, qtbot)
    overlay = app.overlay
    assert overlay.isVisible()
    where = overlay.geometry()
    window = getattr(app.windows, opens)()
    qtbot.waitExposed(window)
    assert window.isVisible() and not overlay.isVisible()  # nothing of ours over the window
    second = app.windows.show_about() if opens != "show_about" else app.windows.show_settings()
    window.close()
    qtbot.wait(50)
    assert not overlay.isVisible()  # another window of ours is still open
    second.close()
    qtbot.waitUntil(overlay.isVisible, timeout=2000)
    assert overlay.text() == "今日は天気" and overlay.geometry() == where


def test_a_new_read_while_a_window_is_open_shows_and_stays(make_app, qtbot):
    app = make_app(FakeRecognizer("一つ目"))
    settings = app.windows.show_settings()  # nothing shown yet: nothing to bring back later
    qtbot.waitExposed(settings)
    read(app, qtbot)  # the user asked for this read: it is shown
    assert app.overlay.isVisible()
    app.overlay.close()
    settings.close()
    qtbot.wait(100)
    assert not app.overlay.isVisible()  # closed by the user: it stays closed
