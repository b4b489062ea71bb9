"""`hayai`, `hayai capture [--repeat]`, `hayai watch …` and `hayai --install-desktop-entry`.

Start-up order matters for "the tray appears within a second": only Qt and our own light modules
are imported here; torch and the weights load later, in the OCR worker thread.

One app per user: whoever takes the instance lock runs the app; everyone else forwards its command
("capture", or "rescan" for `capture --repeat`) over the local socket and exits 0. A plain second
`hayai` forwards "capture" too. The lock is held for the app's lifetime, so two racing starts end up
as one app and one forwarded command.
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from app.platform.single_instance import Answer

log = logging.getLogger("app")

FORWARD_TIMEOUT_S = 15.0  # a primary that holds the lock may still be starting its socket


QUIET_LIBRARIES = ("PIL", "urllib3", "httpx", "httpcore", "filelock", "fsspec", "asyncio")


def verbosity(args) -> int:
    """0 = warnings, 1 = `-v` (INFO), 2 = `-vv` or `--debug` (DEBUG, geometry overlay, full screens saved)."""
    level = int(getattr(args, "verbose", 0) or 0)
    return max(level, 2) if getattr(args, "debug", False) else level


def _setup_logging(level: int) -> None:
    logging.basicConfig(
        level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(level, 2)],
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    if level >= 2:  # our DEBUG lines, not every library's
        for name in QUIET_LIBRARIES:
            logging.getLogger(name).setLevel(logging.INFO)


def main(args) -> int:
    started = time.perf_counter()
    if getattr(args, "install_desktop_entry", False):
        from app.platform.desktop_entry import main as install

        return install(args)
    _setup_logging(verbosity(args))
    command = getattr(args, "command", None)
    message = "rescan" if command == "capture" and getattr(args, "repeat", False) else "capture"
    if command == "watch":
        from app.reading.cli import message as watch_message

        message = watch_message(args)

    from app.platform.single_instance import Answer, lock_file, send, take_lock

    lock = lock_file()
    deadline = time.monotonic() + FORWARD_TIMEOUT_S
    while not take_lock(lock):  # StateDirError (an unwritable folder) ends `hayai` with its cause
        # sent again only when it was not delivered; a busy app's answer is waited for
        answer = send(message, answer_ms=int(max(deadline - time.monotonic(), 2.0) * 1000))
        if answer is not None:
            log.info("forwarded %r to the running Hayai", message)
            return say(answer)
        if time.monotonic() > deadline:
            print(
                f"hayai: another Hayai holds {lock.fileName()} but does not answer; "
                "if it hangs, end it and start again.",
                file=sys.stderr,
            )
            return 1
        time.sleep(0.1)
    if message in (
        "watch-stop",
        "watch-toggle",
    ):  # nothing runs, so nothing is watched: no app to start for that
        lock.unlock()
        return say(Answer("Nothing is being watched (Hayai is not running)"))
    if message.startswith("watch last"):  # a new app knows only the region kept on disk
        from app.reading.last_region import NO_LAST_REGION, load_last_region

        if load_last_region() is None:
            lock.unlock()
            print(f"hayai: {NO_LAST_REGION}.", file=sys.stderr)
            return 1
    from pathlib import Path

    from app.platform.private_files import tighten_file

    tighten_file(Path(lock.fileName()))  # Qt writes it with the umask's mode
    try:
        return run_app(
            args,
            first_command=message if command in ("capture", "watch") else None,
            started=started,
        )
    finally:
        lock.unlock()


def say(answer: Answer | None) -> int:
    """Print what the app did with a command (`hayai watch`: "Watching 780×100 at 1060,730"), or
    why it could not; the exit status for it."""
    if answer is not None and answer.text:
        if answer.ok:
            print(answer.text, flush=True)
        else:
            print(f"hayai: {answer.text}", file=sys.stderr, flush=True)
    return 0 if answer is None or answer.ok else 1


def _choose_qt_platform() -> None:
    """A Wayland session gets a native Wayland client (Qt's wayland plugin, xcb as the fallback):
    selection windows then sit on their own outputs at their own scales, and the clipboard is
    the compositor's. QT_QPA_PLATFORM set by the user wins."""
    import os

    from app.platform.backends import session_type

    if session_type() == "wayland" and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "wayland;xcb"
        log.info("Qt platform: wayland (a Wayland session: WAYLAND_DISPLAY/XDG_SESSION_TYPE)")


def run_app(args, first_command: str | None = None, started: float | None = None) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.platform.single_instance import InstanceServer
    from app.settings import Settings, overrides_from_args

    # PySide6 types instance() as the QCoreApplication base; this process only makes a QApplication.
    qapp = cast("QApplication | None", QApplication.instance())
    if qapp is None:
        _choose_qt_platform()
        from app.platform.display import display_checked

        with display_checked() as problem:
            if problem:
                print(f"hayai: {problem}", file=sys.stderr)
                return 1
            qapp = QApplication(sys.argv[:1])
    qapp.setApplicationName("hayai")
    from app.ui.theme import APP_TITLE

    qapp.setApplicationDisplayName(APP_TITLE)
    qapp.setDesktopFileName("hayai")
    # closing the overlay or a dialog must not end the tray app
    qapp.setQuitOnLastWindowClosed(False)
    try:
        settings = Settings(overrides=overrides_from_args(args))
    except (KeyError, ValueError) as exc:
        print(f"hayai: {exc}", file=sys.stderr)
        return 2
    server = InstanceServer()
    try:
        server.listen()
    except OSError as exc:
        print(f"hayai: {exc}", file=sys.stderr)
        return 1

    from app.application import Application, Parts

    application = Application(
        settings,
        Parts(server=server),
        use_tray=not getattr(args, "no_tray", False),
        debug_dir=getattr(args, "debug_dir", None),
        verbose=verbosity(args),
    )
    application.start()
    if started is not None:
        log.info(
            "tray shown %.0f ms after start (model loading in the background)",
            (time.perf_counter() - started) * 1000,
        )
    if first_command:
        QTimer.singleShot(0, lambda: say(application.handle_command(first_command)))

    # Ctrl+C / SIGTERM end the app cleanly; the timer lets Python run its signal handlers. The quit
    # is posted: one that came before the event loop runs would be dropped by Qt, leaving the app
    # running with its parts shut down.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: QTimer.singleShot(0, application.quit))
    pulse = QTimer()
    pulse.timeout.connect(lambda: None)
    pulse.start(250)
    return int(qapp.exec())
