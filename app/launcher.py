"""`hayai`, `hayai capture [--repeat]` and `hayai --install-desktop-entry`.

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

log = logging.getLogger("app")

FORWARD_TIMEOUT_S = 15.0  # a primary that holds the lock may still be starting its socket


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )


def main(args) -> int:
    started = time.perf_counter()
    if getattr(args, "install_desktop_entry", False):
        from app.desktop_entry import main as install

        return install(args)
    _setup_logging(getattr(args, "verbose", False))
    command = getattr(args, "command", None)
    message = "rescan" if command == "capture" and getattr(args, "repeat", False) else "capture"

    from app.single_instance import lock_file, send

    lock = lock_file()
    deadline = time.monotonic() + FORWARD_TIMEOUT_S
    while not lock.tryLock(0):
        if send(message):
            log.info("forwarded %r to the running Hayai", message)
            return 0
        if time.monotonic() > deadline:
            print(
                f"hayai: another Hayai holds {lock.fileName()} but does not answer; "
                "if it hangs, end it and start again.",
                file=sys.stderr,
            )
            return 1
        time.sleep(0.1)
    try:
        return run_app(
            args, first_command=message if command == "capture" else None, started=started
        )
    finally:
        lock.unlock()


def _choose_qt_platform() -> None:
    """A Wayland session gets a native Wayland client (Qt's wayland plugin, xcb as the fallback):
    selection windows then sit on their own outputs at their own scales, and the clipboard is
    the compositor's. QT_QPA_PLATFORM set by the user wins."""
    import os

    from app.backends import session_type

    if session_type() == "wayland" and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "wayland;xcb"
        log.info("Qt platform: wayland (a Wayland session: WAYLAND_DISPLAY/XDG_SESSION_TYPE)")


def run_app(args, first_command: str | None = None, started: float | None = None) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.settings import Settings, overrides_from_args
    from app.single_instance import InstanceServer

    if QApplication.instance() is None:
        _choose_qt_platform()
    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    qapp.setApplicationName("hayai")
    qapp.setApplicationDisplayName("Hayai")
    qapp.setDesktopFileName("hayai")
    qapp.setQuitOnLastWindowClosed(
        False
    )  # closing the overlay or a dialog must not end the tray app
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

    from app.application import Application

    application = Application(
        settings,
        use_tray=not getattr(args, "no_tray", False),
        debug_dir=getattr(args, "debug_dir", None),
        verbose=getattr(args, "verbose", False),
        server=server,
    )
    application.start()
    if started is not None:
        log.info(
            "tray shown %.0f ms after start (model loading in the background)",
            (time.perf_counter() - started) * 1000,
        )
    if first_command:
        QTimer.singleShot(0, lambda: application.handle_command(first_command))

    # Ctrl+C / SIGTERM end the app cleanly; the timer lets Python run its signal handlers.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: application.quit())
    pulse = QTimer()
    pulse.timeout.connect(lambda: None)
    pulse.start(250)
    return int(qapp.exec())
