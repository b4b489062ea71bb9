"""The one place where the components are wired: triggers in, overlay/clipboard/history out.

    hotkey, `hayai capture` → handle_command → CaptureFlow (app/flows/capture.py; the tray calls it
    directly): freeze, select → Reads (app/flows/reads.py): worker, overlay, auto-copy, history, outputs
    `hayai watch` → WatchControl (app/flows/watch.py) → the same reads, in the background
    "Read the whole screen" → PageFlow (app/flows/page.py); Mine → Mining (app/flows/mining.py)
    the "Model: …" line and its messages → ModelStatus (app/flows/model_status.py); the hotkeys →
    HotkeyControl (app/flows/hotkeys.py); our windows → Windows (app/flows/windows.py); the popup
    dictionary over every text view → DictionaryHook (app/flows/dictionary_hook.py); a key held over any
    text on the screen → HoverControl (app/flows/hover.py)

The parts are layers, made in this order: CaptureFlow, Windows, HotkeyControl, ModelStatus, Reads,
DictionaryHook, then PageFlow, WatchControl, HoverControl and Mining. Each is given, when made, only
the parts below it that it asks or commands; it tells the parts above it, the views and the user
(`notice`) only through its own signals, which `_connect_signals()` connects. This class makes and
connects them, and nothing calls a part through it. Errors (no model, out of memory, capture
refused, hotkey unavailable) become a message and the app keeps running.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication

from app.blocks import background
from app.flows.capture import CaptureFlow, CaptureRoute
from app.flows.dictionary_hook import DictionaryHook
from app.flows.hotkeys import HotkeyControl
from app.flows.hover import HoverControl
from app.flows.mining import Mining
from app.flows.model_status import ModelStatus
from app.flows.page import PageFlow
from app.flows.reads import Reads
from app.flows.watch import WatchControl
from app.flows.windows import Windows
from app.platform.single_instance import Answer
from app.settings import Settings
from app.settings.table import HOTKEY_RESTART_KEYS
from app.ui.overlay import Overlay
from app.ui.tray import Toast, Tray

__all__ = ["Application", "Parts"]

log = logging.getLogger(__name__)

NO_TRAY_QUIT = "Quit with Ctrl+C in its terminal, or `kill {pid}`."


@dataclass
class Parts:
    """The parts a caller may hand in (tests, the app bench, the launcher); None: the real one."""

    worker: Any = None  # OcrWorker
    history: Any = None  # History (made when history is on)
    hotkeys: Any = None  # GlobalHotkeys
    server: Any = None  # the InstanceServer a second `hayai` sends its commands to
    grab_screens: Callable | None = None  # () → {screen name: Capture}
    grab_region: Callable | None = None  # (screen name, box) → QImage
    grab_box: Callable | None = None  # (screen name, box, desktop box) → QImage
    selection_factory: Callable | None = None  # (captures) → a SelectionSession


class Application(QObject):
    def __init__(
        self,
        settings: Settings,
        parts: Parts | None = None,
        *,
        use_tray: bool = True,
        debug_dir: str | None = None,
        verbose: int = 0,
        parent=None,
    ):
        super().__init__(parent)
        parts = parts or Parts()
        self.settings = settings
        self.server = parts.server
        self.quitting = False

        self.worker = parts.worker
        if self.worker is None:
            from app import engines
            from app.engines.worker import OcrWorker

            self.worker = OcrWorker(engines.options(settings))
        self.history = parts.history
        if self.history is None and settings.get("history/enabled"):
            from app.history import History

            self.history = History(limit=settings.get("history/length"))
        self.debug = None
        if debug_dir:
            from app.diagnostics import DebugDir

            self.debug = DebugDir(debug_dir)

        self.tray = Tray() if use_tray and Tray.available() else None
        self.no_tray_reason = (
            "" if self.tray else ("--no-tray" if not use_tray else "this desktop has no tray")
        )
        self.window = None  # the tray's stand-in where there is no tray: every action as a button
        if self.tray is None:
            from app.ui.main_window import MainWindow

            self.window = MainWindow(
                "Hayai was started without a tray icon, so its actions are here."
                if not use_tray
                else "This desktop has no tray, so Hayai's actions are here."
            )
        self.views = [v for v in (self.tray, self.window) if v is not None]
        self.toast = Toast()
        self.overlay = Overlay(trigger=self.lookup_trigger)

        # The parts, each after those it is given (module docstring); -vv is verbose 2 (launcher.py)
        overlay, worker, debug = self.overlay, self.worker, self.debug
        vv, in_tray = verbose >= 2, self.tray is not None
        keep = vv and debug is not None  # --debug-dir at -vv: a read keeps its whole screen

        def history():  # the history now: made, or dropped, when its setting changes
            return self.history

        self.route = route = CaptureRoute(
            settings, parts.grab_screens, parts.grab_region, parts.grab_box
        )
        self.capture = capture = CaptureFlow(
            route, overlay, parts.selection_factory, debug=vv, keep_screens=keep, parent=self
        )
        self.windows = windows = Windows(
            settings,
            overlay,
            worker,
            capture,
            history=history,
            trigger=self.lookup_trigger,
            parent=self,
        )
        self.hotkey_control = hotkeys = HotkeyControl(settings, windows, parts.hotkeys, self)
        self.status = status = ModelStatus(
            settings, worker, route, windows, hotkeys, in_tray=in_tray, verbose=verbose, parent=self
        )
        self.reads = reads = Reads(
            settings, worker, overlay, windows, status, history=history, debug=debug, parent=self
        )
        self.dictionary_hook = hook = DictionaryHook(settings, overlay, windows, status, self)
        self.page = PageFlow(worker, capture, reads, status, hook)
        self.watch_control = WatchControl(settings, overlay, route, capture, reads, self)
        self.hover = HoverControl(
            settings, route, capture, hotkeys, reads, status, hook, parent=self
        )
        self.mining = Mining(settings, overlay, reads, hook, self.hover.view, windows, self)
        from app.reading.channels import Channels

        self.channels = Channels(settings)  # WebSocket, text file out; clipboard, folder in
        self.configure_overlay()
        self._connect_signals()

    # --- wiring ----------------------------------------------------------------------------------

    def _connect_signals(self) -> None:
        w = self.worker
        w.model_missing.connect(self.windows.show_model_dialog)
        for t in self.views:  # the tray, or the window that stands in for it
            t.capture_requested.connect(self.capture.start)
            t.page_requested.connect(self.page.start)
            t.rescan_requested.connect(self.capture.rescan)
            t.history_requested.connect(self.windows.show_history)
            t.settings_requested.connect(self.windows.show_settings)
            t.model_requested.connect(self.status.line_clicked)
            t.about_requested.connect(self.windows.show_about)
            t.quit_requested.connect(self.quit)
            t.log_requested.connect(self.windows.show_log)
            t.watch_requested.connect(lambda: self.handle_command("watch"))
            t.watch_toggle_requested.connect(self.watch_control.toggle)
            t.watch_stop_requested.connect(self.watch_control.stop)
            t.hover_toggled.connect(self.hover.set_enabled)
            w.busy.connect(t.set_busy)
            # the views' lines follow the parts
            self.capture.rescan_enabled.connect(t.set_rescan_enabled)
            self.hotkey_control.hotkeys_changed.connect(t.set_hotkeys)
            self.hotkey_control.problem_changed.connect(t.set_hotkey_problem)
            self.status.line_changed.connect(t.set_model_state)
            self.watch_control.state_changed.connect(t.set_watch_state)
            self.watch_control.note_changed.connect(t.set_watch_note)
            self.hover.hover_changed.connect(t.set_hover)

        # each part tells the parts above it what it did
        capture, windows, hook = self.capture, self.windows, self.dictionary_hook
        capture.clearing.connect(windows.overlay_back)
        capture.clearing.connect(hook.hide)
        capture.closed.connect(windows.ask_kept_question)
        capture.crop_ready.connect(self.reads.submit)
        capture.watch_boxed.connect(self.watch_control.watch)
        windows.stepped_aside.connect(hook.hide)
        windows.hotkey_recording.connect(self.hotkey_control.suspend)
        windows.log_opened.connect(hook.hook)
        windows.log_opened.connect(self.mining.offer_in)
        windows.folder_chosen.connect(self.status.use_folder)
        self.hotkey_control.command.connect(self.handle_command)
        self.status.loaded.connect(hook.prepare)
        hook.attached.connect(self.mining.attach_popup)
        hook.attached.connect(lambda _popup: self.configure_overlay())  # now with furigana
        notices = [capture.notice, windows.notice, self.hotkey_control.notice, self.status.notice]
        notices += [self.reads.notice, self.watch_control.notice, self.hover.notice]
        for notice in notices:
            notice.connect(self.notify)  # a message for the user

        self.reads.text_read.connect(self.channels.send)
        self.reads.image_done.connect(self.channels.image_read)
        self.channels.image.connect(self.reads.read_image)
        self.channels.problem.connect(lambda title, message: self.notify(title, message, True))
        for t in self.views:
            self.channels.folder_waiting.connect(t.set_folder_waiting)

        self.overlay.rescan_requested.connect(self.capture.rescan)
        if self.server is not None:
            self.server.command.connect(self.handle_command)
            # the watch commands run before their answer, which says what they did
            self.server.answer = self.handle_command
        self.settings.changed.connect(self._on_settings_changed)

    # --- start / stop ----------------------------------------------------------------------------

    def start(self) -> None:
        """Show the tray now; the model loads in the worker thread; hotkeys start listening."""
        if self.tray is not None:
            self.tray.show()
        else:
            import os

            log.warning(  # a warning: printed even without -v
                "Hayai runs without a tray icon (%s): its actions are in the Hayai window. %s",
                self.no_tray_reason,
                NO_TRAY_QUIT.format(pid=os.getpid()),
            )
            assert self.window is not None  # made above, where there is no tray
            self.window.show()
        if self.settings.moved_aside:
            self.notify(
                "Settings reset",
                f"The settings file could not be read; it was moved to "
                f"{self.settings.moved_aside} and the defaults are used.",
                error=True,
            )
        if self.history is not None:
            self._use_history(self.history)
        self.worker.start()
        self.hotkey_control.start()
        self.hover.apply()
        self.channels.apply()
        if self.route.grab_screens is None:
            QTimer.singleShot(0, self, self._note_capture_route)
        # native window + CJK font ready before the first capture
        QTimer.singleShot(0, self.overlay.prepare)
        QTimer.singleShot(0, self, self.dictionary_hook.attach)

    def _note_capture_route(self) -> None:
        """Before the desktop portal's first use on this machine, say that the desktop may ask
        once for permission."""
        from app.capture.backends.portal import FIRST_USE_NOTE
        from app.platform.backends import BackendError
        from app.platform.private_files import private_file
        from app.settings import config_dir

        try:
            name = self.route.name()
        except BackendError:
            return  # the first capture reports it, with what to install
        marker = config_dir() / "portal-note-shown"
        if name == "portal" and not marker.exists():
            self.notify("Screen capture through your desktop", FIRST_USE_NOTE)
            try:
                private_file(marker)
            except OSError as exc:
                log.debug("cannot remember the portal note: %s", exc)

    def quit(self) -> None:
        if self.quitting:
            return
        self.quitting = True
        log.info("quitting")
        self.capture.quit()
        self.watch_control.stop()
        self.channels.close()
        self.hotkey_control.stop()
        self.hover.stop()
        background.stop()  # the detector's thread (selection, hover) ends before the interpreter
        if self.server is not None:
            self.server.close()
        self.worker.stop()
        if self.tray is not None:
            self.tray.hide()
        if self.window is not None:
            self.window.close_for_quit()
        self.windows.close_all()  # first: none of them may bring the overlay back
        self.overlay.close()
        if self.history is not None:
            self.history.close()
        app = QGuiApplication.instance()
        if app is not None:
            app.quit()

    # --- triggers --------------------------------------------------------------------------------

    def handle_command(self, command: str) -> Answer:
        """ "capture", "rescan", "watch …", "watch-stop" or "watch-toggle", from a hotkey or a
        second `hayai` process (the tray and the overlay call their part directly); what was done,
        in words, for `hayai watch` to print (the watch commands say it)."""
        word, _, rest = command.partition(" ")
        if self.hotkey_control.recording:
            # Settings is recording a combo: on GNOME the desktop's shortcut runs `hayai capture`
            # for the keys being recorded, so the command is dropped like the hotkey itself.
            log.info("command %r dropped while a hotkey is being recorded", command)
            return Answer("Settings is recording a hotkey; try again once it is done", ok=False)
        if word == "capture":
            self.capture.start()
        elif word == "rescan":
            self.capture.rescan()
        elif word == "watch":
            return self.watch_control.command(rest)
        elif word == "watch-stop":
            return self.watch_control.stop()
        elif word == "watch-toggle":
            return self.watch_control.toggle()
        else:
            log.info("ignored unknown command %r", command)
        return Answer()

    # --- settings --------------------------------------------------------------------------------

    def lookup_trigger(self) -> str:
        """What looks a word up in the popup dictionary, "hover" or "click": the one reading of
        the setting, which every text view's WordPointer calls (so a change needs no push)."""
        return self.settings.get("dictionary/trigger")

    def configure_overlay(self) -> None:
        s = self.settings
        self.overlay.configure(
            s.get("overlay/font_family"),
            s.get("overlay/font_size"),
            s.get("overlay/vertical"),
            self.dictionary_hook.furigana(),
        )

    def _on_settings_changed(self, keys) -> None:
        from app import engines

        keys = set(keys)
        if keys & engines.option_keys(self.settings):
            self.status.settings_changed(keys)
            self.worker.reload(engines.options(self.settings))
        if keys & HOTKEY_RESTART_KEYS:
            self.hotkey_control.start()
        if any(k.startswith("hover/") for k in keys):
            self.hover.apply()
        if any(k.startswith(("overlay/", "dictionary/")) for k in keys):
            self.configure_overlay()
            if "dictionary/han_language" in keys:
                self.dictionary_hook.set_han_language(self.settings.get("dictionary/han_language"))
        if any(k.startswith("reading/") for k in keys):
            self.channels.apply(keys)
        if "reading/watch_interval_ms" in keys:
            self.watch_control.set_interval(self.settings.get("reading/watch_interval_ms"))
        if "history/enabled" in keys or "history/length" in keys:
            if self.settings.get("history/enabled"):
                if self.history is None:
                    from app.history import History

                    self.history = History(limit=self.settings.get("history/length"))
                    self._use_history(self.history)
                self.history.set_limit(self.settings.get("history/length"))
        if "app/start_at_login" in keys:
            from app.settings import apply_start_at_login

            try:
                apply_start_at_login(self.settings.get("app/start_at_login"))
            except OSError as exc:
                self.notify(
                    "Start at login", f"Could not write the autostart entry: {exc}", error=True
                )

    def _use_history(self, history) -> None:
        """Its thread starts once the user can be told what it says (a file moved aside, a
        history that cannot be saved now, and that it is saved again)."""
        history.notice.connect(self.notify)
        history.changed.connect(self.windows.history_changed)
        history.start()

    # --- messages -------------------------------------------------------------

    def notify(self, title: str, message: str, error: bool = False) -> None:
        (log.warning if error else log.info)("%s: %s", title, message)
        if self.tray is not None:
            self.tray.notify(title, message, error)
        else:
            self.toast.show_message(title, message, error)
