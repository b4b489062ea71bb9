"""The one place where the components are wired: triggers in, overlay/clipboard/history out.

    trigger (hotkey, tray click, `hayai capture`) → start_capture() → grab_screens() →
    SelectionSession → OcrWorker.submit() → overlay + auto-copy + history (+ --debug-dir)
    `hayai watch` → RegionWatcher (app/reading/watch.py) → the same read, whenever the region settles

Every component only declares signals; `_connect_signals()` connects them. Errors (no model, out of
memory, capture refused, hotkey unavailable) become a message and the app keeps running.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QImage

from app.hotkey.combo import combo_label
from app.settings import HOTKEY_RESTART_KEYS, Settings
from app.ui.details import split_message
from app.ui.overlay import Overlay
from app.ui.qimage import pil_to_qimage
from app.ui.tray import Toast, Tray
from app.ui.views import own_windows

log = logging.getLogger(__name__)

THUMBNAIL_SIDE = 160
ANKI_IMAGE_SIDE = 1280  # the crop on a card: sharp enough to read, small enough to sync
# Our windows hidden before a grab: this long for the X server to unmap them and for the windows
# below to repaint what they covered (without a compositor nothing keeps those pixels). 0: grab at
# once (the tests' stand-in grabbers have nothing to wait for).
REPAINT_MS = 150
NO_TRAY_QUIT = "Quit with Ctrl+C in its terminal, or `kill {pid}`."
# A capture that waits on the desktop (its portal) shows the waiting window after this long: the
# portal answers in under a second when it neither starts up nor asks, and then nothing flashes.
WAITING_DELAY_MS = 1000


@dataclass(frozen=True)
class Region:
    """The last boxed region, for re-scan."""

    screen_name: str
    box_image_px: tuple[int, int, int, int]
    box_desktop_px: tuple[int, int, int, int]
    logical_rect: tuple[int, int, int, int]


@dataclass
class PendingRead:
    region: Region
    released_at: float  # perf_counter() at mouse release (or at the re-scan trigger)
    screen_image: QImage | None = None  # the whole frozen screen, kept for --debug-dir at -vv
    source: str = "box"  # how the read came in: one of app.history.SOURCES
    origin: object = None  # the RegionWatcher of a watched read
    result: object = None
    edited: str | None = None  # the user's committed correction of the text, if any
    history_id: int | None = None  # its history row, once added
    submitted_at: float = 0.0  # perf_counter() when the crop went to the worker
    result_at: float = 0.0  # perf_counter() when the result reached the GUI thread


def _latency_breakdown(pending: PendingRead, shown_at: float) -> str:
    """Where the app's share of the felt latency went, for the log."""
    hops = {
        "release→submit": (pending.submitted_at - pending.released_at) * 1000,
        **pending.result.hops_ms(pending.submitted_at, pending.result_at, shown_at),
    }
    return ", ".join(f"{name} {ms:.1f} ms" for name, ms in hops.items())


def png_bytes(image: QImage, max_side: int = THUMBNAIL_SIDE) -> bytes:
    if image.isNull():
        return b""
    if max(image.width(), image.height()) > max_side:
        image = image.scaled(
            max_side,
            max_side,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


class Application(QObject):
    text_read = Signal(str, str)  # every new text read (text, source): the text outputs listen

    def __init__(
        self,
        settings: Settings,
        *,
        use_tray: bool = True,
        debug_dir: str | None = None,
        verbose: int = 0,
        worker=None,
        history=None,
        hotkeys=None,
        server=None,
        grab_screens=None,
        grab_region=None,
        grab_box=None,
        selection_factory=None,
        parent=None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.verbose = verbose  # 1 = -v, 2 = -vv / --debug (see app/launcher.py verbosity())
        self.debug_mode = verbose >= 2
        self._grab_screens = grab_screens
        self._grab_region = grab_region
        self._grab_box = grab_box
        self._selection_factory = selection_factory
        self.server = server
        self.hotkeys = hotkeys
        self.hotkey_error: str | None = None
        self._working_combos: dict[str, str] | None = None  # the last combos the backend took

        if worker is None:
            from app.ocr_worker import OcrWorker

            worker = OcrWorker(settings.engine_options())
        self.worker = worker

        if history is None and settings.get("history/enabled"):
            from app.history import History

            history = History(limit=settings.get("history/length"))
        self.history = history

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
        self._model_folder_to_confirm = ""  # a folder the user just chose: named once it loads
        self._quitting = False
        self.toast = Toast()
        self.overlay = Overlay()
        self.anki = self._make_anki() if settings.get("anki/enabled") else None
        self.overlay.set_mining(self.anki is not None)
        self.overlay.mine_requested.connect(self._mine_line)
        self._shown_read: PendingRead | None = None  # the read on screen: the crop for Anki
        self._mine_view = self.overlay  # where the last Mine came from: it shows what Anki did
        self.dictionary_popup = (
            None  # attached right after the tray shows (its imports take ~0.2 s)
        )
        self._configure_overlay()

        self.session = None  # the open SelectionSession, if any
        self._clearing_screen = False  # our windows are hidden, the grab follows in REPAINT_MS
        self._background = None  # the BackgroundGrab a capture waits on (the desktop portal)
        self._waiting = None  # its WaitingWindow, made when first needed
        self._offer_later = None  # a question kept back while a selection or capture is open
        self._hidden_while_waiting: list = []  # our windows hidden until the portal's picture comes
        self._captures: dict = {}  # the open session's screens, kept only for --debug-dir at -vv
        self.last_region: Region | None = None
        self.watcher = None  # the RegionWatcher of the watched region, if any
        self.session_started = time.time()  # the reading log lists the reads from here on
        self._dictionary_view = None  # the overlay or the reading log: where the popup's word is
        self._recording_hotkey = False  # Settings records a combo: hotkeys and commands wait
        self._watch_next_selection: int | None = None  # interval (ms) for the region being boxed
        self._pending: dict[int, PendingRead] = {}
        self._latest_request: int | None = None
        self.page_view = None  # "Read the whole screen" (app/ui/page_view.py) while it shows
        self._page_request: int | None = None
        self._page_block_id = 0  # the blocks clicked in it count down: never a worker request id
        self._painted_request: int | None = None
        self._pending_paint: PendingRead | None = None
        self.model_error = ("", "")
        self.model_state = "starting"
        self.model_device = ""
        self.model_variant = ""
        self.last_latency: dict | None = (
            None  # {"latency_ms", "ocr_ms", "overhead_ms"} of the last shown text
        )
        self._windows: dict[str, QObject] = {}
        self._overlay_aside = False  # hidden while a window of ours is open (_overlay_steps_aside)
        from app.reading.channels import Channels

        self.channels = Channels(settings)  # WebSocket, text file out; clipboard, folder in
        self._info_logged = False
        self._dictionary_prepared = False
        self._connect_signals()

    # --- wiring ----------------------------------------------------------------------------------

    def _connect_signals(self) -> None:
        w = self.worker
        w.loading.connect(self._on_model_loading)
        w.ready.connect(self._on_model_ready)
        w.error.connect(self._on_model_error)
        w.model_missing.connect(self.show_model_dialog)
        w.finished.connect(self._on_read_finished)
        w.failed.connect(self._on_read_failed)
        w.superseded.connect(self._on_superseded)
        w.page_progress.connect(self._on_page_progress)
        w.page_finished.connect(self._on_page_finished)

        for t in self.views:  # the tray, or the window that stands in for it
            t.capture_requested.connect(self.start_capture)
            t.page_requested.connect(self.read_whole_screen)
            t.rescan_requested.connect(self.rescan)
            t.history_requested.connect(self.show_history)
            t.settings_requested.connect(self.show_settings)
            t.model_requested.connect(self._on_model_line_clicked)
            t.about_requested.connect(self.show_about)
            t.quit_requested.connect(self.quit)
            t.log_requested.connect(self.show_log)
            t.watch_requested.connect(lambda: self.handle_command("watch"))
            t.watch_toggle_requested.connect(self.toggle_watching)
            t.watch_stop_requested.connect(self.stop_watching)
            w.busy.connect(t.set_busy)

        self.text_read.connect(self.channels.send)
        self.channels.image.connect(self._read_image)
        self.channels.problem.connect(lambda title, message: self.notify(title, message, True))
        for t in self.views:
            self.channels.folder_waiting.connect(t.set_folder_waiting)

        o = self.overlay
        o.rescan_requested.connect(self.rescan)
        o.text_painted.connect(self._on_text_painted)
        o.edit_committed.connect(self._keep_edit)

        if self.server is not None:
            self.server.command.connect(self.handle_command)
        if self.hotkeys is not None:
            self.hotkeys.triggered.connect(self.handle_command)

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
            self.window.show()
        if self.settings.moved_aside:
            self.notify(
                "Settings reset",
                f"The settings file could not be read; it was moved to "
                f"{self.settings.moved_aside} and the defaults are used.",
                error=True,
            )
        if self.history is not None and getattr(self.history, "moved_aside", None):
            self.notify(
                "History reset",
                f"The capture history could not be read; it was moved to "
                f"{self.history.moved_aside} and a new, empty history was started.",
                error=True,
            )
        self.worker.start()
        self._start_hotkeys()
        self.channels.apply()
        if self._grab_screens is None:
            QTimer.singleShot(0, self, self._note_capture_route)
        QTimer.singleShot(
            0, self.overlay.prepare
        )  # native window + CJK font ready before the first capture
        QTimer.singleShot(0, self, self._attach_dictionary)

    def _start_hotkeys(self) -> None:
        """Listen for the combos of the settings; when they cannot be (an invalid `--hotkey`, a
        combo the backend refuses), the last combos that worked are kept and the views say why."""
        if self.hotkeys is None:
            try:
                from app.hotkey import GlobalHotkeys
            except ImportError as exc:
                self.hotkey_error = f"hotkeys unavailable: {exc}"
                log.warning(self.hotkey_error)
                self._show_hotkeys({}, "Global hotkeys are unavailable here.")
                return
            self.hotkeys = GlobalHotkeys(self._combos(), self._backend_setting("hotkey/backend"))
            self.hotkeys.triggered.connect(self.handle_command)
        else:
            self.hotkeys.backend = self._backend_setting("hotkey/backend")
        wanted = self._combos()
        error = self._listen(wanted)
        self.hotkey_error = error and str(error)
        if error is None:
            self._working_combos = wanted
            self._show_hotkeys(wanted, "")
            return
        offer = getattr(error, "offer", None)
        if offer is not None:  # e.g. GNOME: desktop shortcuts run these combos for us, if added
            self._show_hotkeys(wanted, "")
            self._offer_shortcuts(*offer)
            return
        kept = self._working_combos
        if kept is None and wanted != self._combos(stored=True):
            kept = self._combos(stored=True)  # an invalid --hotkey: the saved combos
        if kept is not None and kept != wanted and self._listen(kept) is None:
            self._working_combos = kept
            label = combo_label(kept["capture"]) if kept.get("capture") else ""
            # what still works first: the tray elides the rest (shown whole on hover)
            kept_words = f"Capture hotkey stays {label}" if label else "Hotkeys unchanged"
            problem = f"{kept_words}: {error}"
            self._show_hotkeys(kept, problem)
        else:
            problem = str(error)
            self._show_hotkeys({}, problem)
        self.notify("Global hotkey unavailable", problem, error=True)

    def _listen(self, combos: dict[str, str]):
        """Start the hotkeys with `combos`; None, or the HotkeyError (or other error) it raised."""
        self.hotkeys.stop()  # so that set_combos does not start the old listener again first
        try:
            self.hotkeys.set_combos(combos)
            self.hotkeys.start()
        except Exception as exc:  # HotkeyError: Wayland, permission, invalid combo; in GUI words
            return exc
        return None

    def _show_hotkeys(self, combos: dict[str, str], problem: str) -> None:
        """The entries show the combos that work, and what is wrong with the wanted ones."""
        for view in self.views:
            view.set_hotkeys(combos.get("capture", ""), combos.get("rescan", ""))
            view.set_hotkey_problem(problem)

    def _note_capture_route(self) -> None:
        """Say which capture route runs (the log) and, before the desktop portal's first use on
        this machine, that the desktop may ask once for permission (a message)."""
        from app.backends import BackendError, pick
        from app.capture import REGISTRY
        from app.capture.backends.portal import FIRST_USE_NOTE
        from app.private_files import private_file
        from app.settings import config_dir

        try:
            choice = pick(REGISTRY, self._backend_setting("capture/backend"), capability="capture")
        except BackendError:
            return  # the first capture reports it, with what to install
        marker = config_dir() / "portal-note-shown"
        if choice.name == "portal" and not marker.exists():
            self.notify("Screen capture through your desktop", FIRST_USE_NOTE)
            try:
                private_file(marker)
            except OSError as exc:
                log.debug("cannot remember the portal note: %s", exc)

    def _offer_shortcuts(self, question: str, install) -> None:
        """The desktop's own shortcuts for Hayai (GNOME): added, left alone, or asked about, as the
        user answered before (`hotkey/desktop_shortcuts`). `install` returns what to say, or
        raises OSError."""
        answer = self.settings.get("hotkey/desktop_shortcuts")
        if answer == "leave":
            log.info("desktop shortcuts left alone (Settings: %s)", answer)
            return
        if answer == "add":  # updated in place each start: the combos may have changed
            try:
                log.info("%s", install())
            except OSError as exc:
                self.notify("Keyboard shortcuts not added", str(exc), error=True)
            return
        self._ask(
            "Hayai — keyboard shortcuts",
            question + " Hayai remembers your answer (Settings → Desktop shortcuts).",
            ("Add the shortcuts", "Don't add them"),
            lambda yes: self._shortcuts_answered(yes, install),
        )

    def _shortcuts_answered(self, yes: bool, install) -> None:
        self.settings.set("hotkey/desktop_shortcuts", "add" if yes else "leave")
        if not yes:
            return
        try:
            self.notify("Keyboard shortcuts added", install())
        except OSError as exc:
            self.notify("Keyboard shortcuts not added", str(exc), error=True)

    def _ask(self, title: str, question: str, buttons: tuple[str, str], answered) -> None:
        """A question in a window that blocks nothing (never application-modal: a selection or
        capture opened meanwhile must take its drag and Esc), shown once no selection or capture
        is open. `answered(True/False)` on a button (Esc or closing it = the second)."""
        if self._capture_open():
            self._offer_later = (title, question, buttons, answered)
            return
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(
            QMessageBox.Icon.Question,
            title,
            question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        )
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.button(QMessageBox.StandardButton.Yes).setText(buttons[0])
        box.button(QMessageBox.StandardButton.No).setText(buttons[1])
        box.buttonClicked.connect(
            lambda button: answered(box.standardButton(button) == QMessageBox.StandardButton.Yes)
        )
        self._show_window("shortcuts", lambda: box)

    def _capture_open(self) -> bool:
        return self._background is not None or (self.session is not None and self.session.is_open)

    def _ask_kept_question(self) -> None:
        kept, self._offer_later = self._offer_later, None
        if kept is not None:
            QTimer.singleShot(0, self, lambda: self._ask(*kept))

    def _combos(self, stored: bool = False) -> dict[str, str]:
        """The hotkeys by command; `stored`: as saved, without this run's `--hotkey`."""
        value = self.settings.stored if stored else self.settings.get
        return {
            "capture": value("hotkey/capture"),
            "rescan": value("hotkey/rescan"),
            "watch-toggle": value("reading/watch"),
        }

    def quit(self) -> None:
        if self._quitting:
            return
        self._quitting = True
        log.info("quitting")
        if self.session is not None:
            self.session.cancel()
        self.cancel_waiting()
        self.stop_watching()
        self.channels.close()
        if self.hotkeys is not None:
            self.hotkeys.stop()
        if self.server is not None:
            self.server.close()
        self.worker.stop()
        if self.tray is not None:
            self.tray.hide()
        if self.window is not None:
            self.window.close_for_quit()
        self.overlay.close()
        for window in list(self._windows.values()):
            window.close()
        if self.history is not None:
            self.history.close()
        app = QGuiApplication.instance()
        if app is not None:
            app.quit()

    # --- triggers --------------------------------------------------------------------------------

    def handle_command(self, command: str) -> None:
        """ "capture", "rescan", "watch …", "watch-stop" or "watch-toggle", from a hotkey or a
        second `hayai` process."""
        word, _, rest = command.partition(" ")
        if self._recording_hotkey:
            # Settings is recording a combo: on GNOME the desktop's shortcut runs `hayai capture`
            # for the keys being recorded, so the command is dropped like the hotkey itself.
            log.info("command %r dropped while a hotkey is being recorded", command)
            return
        if word == "capture":
            self.start_capture()
        elif word == "rescan":
            self.rescan()
        elif word == "watch":
            self._watch_command(rest)
        elif word == "watch-stop":
            self.stop_watching()
        elif word == "watch-toggle":
            self.toggle_watching()
        else:
            log.info("ignored unknown command %r", command)

    # --- watched regions -------------------------------------------------------------------------

    def _watch_command(self, rest: str) -> None:
        from app.reading.cli import parse_message

        try:
            options = parse_message(rest)
        except ValueError as exc:
            self.notify("Cannot watch", str(exc), error=True)
            return
        interval = options["interval_ms"] or self.settings.get("reading/watch_interval_ms")
        if options["region"] is not None:
            from app.capture import qt_screens
            from app.reading.watch import locate

            try:
                name, box, logical = locate(options["region"], qt_screens())
            except ValueError as exc:
                self.notify("Cannot watch that region", str(exc), error=True)
                return
            self.watch(Region(name, box, tuple(options["region"]), logical), interval)
        elif options["last"]:
            region = self.last_region or self._kept_region()
            if region is None:
                self.notify(
                    "Nothing to watch",
                    "No region has been boxed yet, so there is no last region to watch. "
                    "“Watch a region…” boxes one and watches it.",
                )
                return
            self.watch(region, interval)
        elif not self._watch_refused():  # box it now: the selection's region is watched, not read
            self._watch_next_selection = interval
            self.start_capture()

    def _kept_region(self) -> Region | None:
        """The last region boxed before a restart, on today's screens (None: none, or off them)."""
        from app.capture import qt_screens
        from app.reading.cli import load_last_region
        from app.reading.watch import locate

        box = load_last_region()
        if box is None:
            return None
        try:
            name, image_box, logical = locate(box, qt_screens())
        except ValueError as exc:  # the screens changed since
            log.info("the kept last region is not on a screen now: %s", exc)
            return None
        return Region(name, image_box, box, logical)

    def _remember_region(self, region: Region) -> None:
        self.last_region = region
        if not region.screen_name:  # a clipboard or folder image: not a region of the screen
            return
        from app.reading.cli import save_last_region

        try:
            save_last_region(region.box_desktop_px)
        except OSError as exc:  # StateDirError too: watching still works for this run
            log.warning("cannot keep the last region for `hayai watch --last`: %s", exc)

    def _watch_refused(self) -> bool:
        """True, with the user told why, when this desktop's capture cannot watch a region."""
        if self._grab_box is not None:
            return False
        from app.capture import watch_problem

        try:
            problem = watch_problem(self._backend_setting("capture/backend"))
        except Exception as exc:  # no capture backend at all: the same message as a capture
            problem = str(exc)
        if problem:
            log.warning("not watching: %s", problem)
            self.notify("Watching is not available here", problem, error=True)
        return bool(problem)

    def watch(self, region: Region, interval_ms: int | None = None) -> None:
        """Watch `region` (replacing any watched one): read it whenever its content settles."""
        from app.reading.watch import RegionWatcher, app_windows_over, move_out_of

        if self._watch_refused():
            return
        self.stop_watching()
        # Our own windows never in the region: moved beside it where there is room (else the
        # frame and the entries say which one covers it, and its ticks wait).
        move_out_of(region.logical_rect, own_windows(exclude=(self.overlay,)))
        self._remember_region(region)
        grab = self._grab_box
        if grab is None:
            from app.capture import grab_box as grab
        watcher = RegionWatcher(
            region,
            interval_ms or self.settings.get("reading/watch_interval_ms"),
            grab=lambda: grab(region.screen_name, region.box_image_px, region.box_desktop_px),
            covered=lambda: app_windows_over(region.logical_rect),
        )
        watcher.read_due.connect(lambda image: self._read_watched(watcher, image))
        for view in self.views:
            watcher.state_changed.connect(view.set_watch_state)
            watcher.covered_changed.connect(view.set_watch_note)
            view.set_rescan_enabled(True)
        self.watcher = watcher
        watcher.start()

    def _read_watched(self, watcher, image: QImage) -> None:
        if self._user_read_pending():
            # The worker keeps one waiting crop: a watched one must never push out the user's.
            watcher.read_failed()  # read again at the next settled tick
            return
        self._read(image, watcher.region, time.perf_counter(), source="watch", origin=watcher)

    def _user_read_pending(self) -> bool:
        return any(p.source != "watch" for p in self._pending.values())

    def toggle_watching(self) -> None:
        if self.watcher is None:
            self.notify("Nothing is watched", "Watch a region first (tray menu or `hayai watch`).")
            return
        self.watcher.toggle()

    def stop_watching(self) -> None:
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()
            watcher.deleteLater()

    def start_capture(self) -> None:
        if (self.session is not None and self.session.is_open) or self._clearing_screen:
            log.debug("a selection is already open; trigger ignored")
            return
        self._freeze(self._open_selection)

    def _freeze(self, then) -> None:
        """Freeze the screen, then `then(captures)`: a selection, or the whole-screen read."""
        if self._background is not None:  # still waiting on the desktop: show that again
            self._show_waiting(self._background)
            return
        if self._modal_dialog_up():
            return
        # Our windows are never part of the frozen screen: the overlay and the popup go (a new read
        # replaces them), every other one is hidden until the screen is grabbed, as snipping
        # tools do, and the windows below get a moment to repaint before the grab.
        self.overlay.hide()
        self._overlay_aside = False
        if self.dictionary_popup is not None:
            self.dictionary_popup.hide()
        hidden = self._hide_own_windows()
        if not hidden or not REPAINT_MS:
            self._freeze_screen(hidden, then)
            return
        self._clearing_screen = True
        QTimer.singleShot(REPAINT_MS, self, lambda: self._freeze_screen(hidden, then))

    def _freeze_screen(self, hidden: list, then) -> None:
        self._clearing_screen = False
        if self._quitting:
            return
        try:
            background = self._background_grab()
            captures = self._grab() if background is None else None
        except Exception as exc:  # CaptureError, BackendError, X errors: a message, not a crash
            self._restore_own_windows(hidden)
            log.warning("screen capture failed: %s", exc)
            self.notify("Screen capture failed", str(exc), error=True)
            return
        if background is not None:  # the desktop portal: the selection opens when it answers,
            self._hidden_while_waiting = hidden  # and our windows stay out of its picture till then
            self._wait_for(background, then, "Screen capture failed")
            return
        self._restore_own_windows(hidden)
        then(captures)

    def _open_selection(self, captures) -> None:
        if self._modal_dialog_up():
            return
        factory = self._selection_factory
        if factory is None:
            from app.ui.selection import SelectionSession as factory
        session = factory(captures, debug=True) if self.debug_mode else factory(captures)
        self._captures = captures if self.debug is not None and self.debug_mode else {}
        session.selected.connect(self._on_selected)
        session.cancelled.connect(self._on_selection_cancelled)
        self.session = session
        session.start()

    def _hide_own_windows(self, over: QRect | None = None) -> list:
        """Hide our visible windows (those overlapping `over`, if given); returns them."""
        hidden = [w for w in own_windows() if over is None or w.frameGeometry().intersects(over)]
        for window in hidden:
            window.hide()
        if hidden:
            QGuiApplication.sync()  # unmapped now, not at the next event loop pass
            log.debug("hid %d window(s) of ours for the capture", len(hidden))
        return hidden

    def _restore_own_windows(self, hidden: list) -> None:
        from PySide6.QtWidgets import QMenu

        for window in hidden:
            if not isinstance(window, QMenu):  # a menu closed by the capture stays closed
                window.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
                window.show()
                window.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, False)

    def _modal_dialog_up(self) -> bool:
        """True, with that dialog raised, while one of our modal dialogs is open: a fullscreen
        selection over it would get neither its drag nor Esc, and would hide the dialog."""
        from PySide6.QtWidgets import QApplication

        dialog = QApplication.activeModalWidget()
        if dialog is None:
            return False
        log.info("capture not started: the %r window is open", dialog.windowTitle())
        self._watch_next_selection = None  # "Watch a region…" asked for this selection: not now
        dialog.raise_()
        dialog.activateWindow()
        self.notify(
            "Capture not started",
            f"Close the “{dialog.windowTitle()}” window first, then capture again.",
        )
        return True

    def _background_grab(self):
        """A BackgroundGrab when the capture backend may wait on the desktop, else None."""
        if self._grab_screens is not None:
            return None
        from app.capture import background_grab

        return background_grab(self._backend_setting("capture/backend"))

    def _wait_for(self, background, then, failure_title: str, retake: bool = True) -> None:
        """Run `background` off the GUI thread; `then(captures)` when its picture arrives. Past
        WAITING_DELAY_MS the waiting window says what it waits for (Esc or Cancel cancels). A
        picture taken while that window was up shows it: it is then taken again, once, without."""
        self._background = background

        def arrived(captures) -> None:
            if self._background is not background:
                return
            shown = own_windows()  # the waiting window, or one that opened meanwhile
            if retake and shown:
                log.info("%d window(s) of ours in the picture: taking it again without", len(shown))
                self._hidden_while_waiting += [w for w in shown if w is not self._waiting]
                for window in shown:
                    window.hide()
                QGuiApplication.sync()
                try:
                    again = self._background_grab()
                except Exception as exc:  # the backend went away meanwhile: keep this picture
                    log.debug("no second picture: %s", exc)
                    again = None
                if again is not None:
                    self._wait_for(again, then, failure_title, retake=False)
                    return
            self._end_waiting()
            then(captures)

        def failed(message: str) -> None:
            if self._background is not background:
                return
            self._end_waiting()
            log.warning("%s: %s", failure_title, message)
            self.notify(failure_title, message, error=True)

        def show() -> None:
            if self._background is background:
                self._show_waiting(background)

        background.arrived.connect(arrived)
        background.failed.connect(failed)
        background.waiting.connect(lambda text: self._waiting_text(background, text))
        QTimer.singleShot(WAITING_DELAY_MS, self, show)
        background.start()

    def _waiting_window(self):
        if self._waiting is None:
            from app.ui.waiting import WaitingWindow

            self._waiting = WaitingWindow()
            self._waiting.rejected.connect(self.cancel_waiting)
        return self._waiting

    def _waiting_text(self, background, text: str) -> None:
        if self._background is background and self._waiting is not None:
            self._waiting.set_text(text)

    def _show_waiting(self, background) -> None:
        window = self._waiting_window()
        window.set_text(background.state)
        window.show()
        window.raise_()
        window.activateWindow()

    def cancel_waiting(self) -> None:
        """Esc or Cancel in the waiting window: the capture is dropped, the desktop's dialog closed."""
        background = self._background
        if background is None:
            return
        log.info("capture cancelled while waiting for the desktop")
        background.cancel()
        self._end_waiting()
        self._watch_next_selection = None

    def _end_waiting(self) -> None:
        self._background = None
        if self._waiting is not None:
            self._waiting.hide()
        hidden, self._hidden_while_waiting = self._hidden_while_waiting, []
        self._restore_own_windows(hidden)
        self._ask_kept_question()

    # --- the whole screen at once (app/ui/page_view.py; read in the worker by app/page.py) ----------

    def read_whole_screen(self) -> None:
        """Freeze the screen under the pointer, read every text block on it in the OCR worker, and
        show the blocks as boxes over it: hover for the dictionary, click for the overlay."""
        if self.page_view is not None:
            self.page_view.raise_()
            return
        if (self.session is not None and self.session.is_open) or self._clearing_screen:
            log.debug("a selection is open; whole-screen read ignored")
            return
        self._freeze(self._open_page_view)

    def _open_page_view(self, captures) -> None:
        if not captures:
            return
        from PySide6.QtGui import QCursor

        from app.ui.page_view import PageView

        cursor = QCursor.pos()
        capture = next(
            (c for c in captures.values() if QRect(*c.screen.logical).contains(cursor)),
            next(iter(captures.values())),
        )
        view = self.page_view = PageView(capture)
        view.block_chosen.connect(
            lambda block, rect, c=capture: self._show_page_block(c, block, rect)
        )
        view.closed.connect(self._on_page_view_closed)
        if self.dictionary_popup is not None:
            self._hook_dictionary(view)
        view.show_on_screen()
        self._page_request = self.worker.submit_page(capture.image)

    def _on_page_view_closed(self) -> None:
        self.page_view = None
        self._page_request = None

    def _on_page_progress(self, request_id: int, done: int, total: int) -> None:
        if self.page_view is not None and request_id == self._page_request:
            self.page_view.set_progress(done, total)

    def _on_page_finished(self, request_id: int, record: dict) -> None:
        if self.page_view is not None and request_id == self._page_request:
            self.page_view.set_record(record)

    def _show_page_block(self, capture, block: dict, logical: QRect) -> None:
        """A block of the page clicked: the overlay shows its text as it shows any read (copy,
        edit, Anki, history), beside the block."""
        from app.ocr_worker import OcrResult, qimage_to_pil

        x0, y0, x1, y1 = block["box"]
        box = (x0, y0, x1 - x0, y1 - y0)
        px, py = capture.screen.physical[:2]
        region = Region(
            capture.screen.name,
            box,
            (px + x0, py + y0, x1 - x0, y1 - y0),
            (logical.x(), logical.y(), logical.width(), logical.height()),
        )
        rec = self.worker.recognizer
        crop = capture.image.copy(QRect(*box))
        result = OcrResult(
            text=block["text"],
            token_ids=[],
            timings={},
            ocr_ms=float(block["ms"]),
            device=str(getattr(rec, "device", "")),
            variant=str(getattr(rec, "variant", "")),
            precision=str(getattr(rec, "precision", "")),
            image=qimage_to_pil(crop),
        )
        self._page_block_id -= 1  # ids of their own: never a worker request's
        request_id = self._page_block_id
        now = time.perf_counter()
        self._pending[request_id] = PendingRead(region, now, source="click", submitted_at=now)
        self._latest_request = request_id
        self._remember_region(region)
        for view in self.views:
            view.set_rescan_enabled(True)
        self._place_overlay(region)
        self._on_read_finished(request_id, result)

    def _grab(self):
        if self._grab_screens is not None:
            return self._grab_screens()
        from app.capture import grab_screens

        return grab_screens(self._backend_setting("capture/backend"))

    def _backend_setting(self, key: str) -> str | None:
        """A backend setting's value as an override for the picker; None for "auto"."""
        value = self.settings.get(key)
        return None if value == "auto" else value

    def rescan(self) -> None:
        region = self.last_region
        if region is None:
            self.notify(
                "Nothing to re-scan", "Capture a region first; re-scan reads that same box again."
            )
            return
        if self._background is not None:  # still waiting on the desktop: show that again
            self._show_waiting(self._background)
            return
        if (self.session is not None and self.session.is_open) or self._clearing_screen:
            log.debug("a selection is open; re-scan ignored")
            return
        started = time.perf_counter()
        grab = self._grab_region
        try:
            background = self._background_grab() if grab is None else None
        except Exception as exc:  # BackendError, CaptureError: no backend can grab here
            log.warning("re-scan capture failed: %s", exc)
            self.notify("Re-scan failed", str(exc), error=True)
            return
        self.overlay.hide()  # the new text replaces it; a window of ours over the box waits aside
        hidden = self._hide_own_windows(QRect(*region.logical_rect))
        if background is not None:  # the desktop portal: read the box once its picture arrives
            self._hidden_while_waiting = hidden
            read = lambda captures: self._rescan_read(captures, region, started)  # noqa: E731
            self._wait_for(background, read, "Re-scan failed")
            return
        if grab is None:
            from functools import partial

            from app.capture import grab_region

            grab = partial(grab_region, backend=self._backend_setting("capture/backend"))
        if hidden:
            QTimer.singleShot(
                REPAINT_MS, self, lambda: self._rescan_grab(grab, region, started, hidden)
            )
        else:
            self._rescan_grab(grab, region, started, hidden)

    def _rescan_grab(self, grab, region: Region, started: float, hidden: list) -> None:
        try:
            image = grab(region.screen_name, region.box_image_px)
        except Exception as exc:
            log.warning("re-scan capture failed: %s", exc)
            self.notify("Re-scan failed", str(exc), error=True)
            return
        finally:
            self._restore_own_windows(hidden)
        self._read(image, region, started)

    def _rescan_read(self, captures, region: Region, started: float) -> None:
        from app.capture import crop

        capture = captures.get(region.screen_name)
        try:
            if capture is None:
                raise ValueError(
                    f"screen {region.screen_name!r} is gone (screens now: {sorted(captures)}); "
                    "select a region again"
                )
            image = crop(capture.image, region.box_image_px)
        except Exception as exc:
            self.notify("Re-scan failed", str(exc), error=True)
            return
        self.overlay.hide()
        self._read(image, region, started)

    def _on_selected(self, selection) -> None:
        self.session = None
        self._ask_kept_question()
        region = Region(
            selection.screen_name,
            tuple(selection.box_image_px),
            tuple(selection.box_desktop_px),
            tuple(selection.logical_rect),
        )
        self._remember_region(region)
        for view in self.views:
            view.set_rescan_enabled(True)
        capture = self._captures.get(selection.screen_name)
        self._captures = {}
        interval, self._watch_next_selection = self._watch_next_selection, None
        if interval is not None:
            self.watch(region, interval)
            return
        self._read(
            selection.image,
            region,
            selection.released_at,
            getattr(selection, "how", "box"),
            screen_image=capture.image if capture is not None else None,
        )

    def _read_image(self, image: QImage, source: str) -> None:
        """An image from outside the screen (clipboard, folder): read it, the overlay at the top right."""
        screen = QGuiApplication.primaryScreen()
        area = screen.availableGeometry() if screen is not None else QRect(0, 0, 1920, 1080)
        anchor = (area.right() - 24, area.top() + 24, 1, 1)  # the card goes left of this point
        size = (0, 0, image.width(), image.height())
        self._read(image, Region("", size, size, anchor), time.perf_counter(), source)

    def _on_selection_cancelled(self) -> None:
        self.session = None
        self._ask_kept_question()
        self._captures = {}
        self._watch_next_selection = None

    def _read(
        self,
        image: QImage,
        region: Region,
        released_at: float,
        source: str = "box",
        origin: object = None,
        screen_image=None,
    ) -> None:
        # Submit first: the model starts at once, and the GUI work below overlaps with it.
        submitted_at = time.perf_counter()
        request_id = self.worker.submit(image)
        self._pending[request_id] = PendingRead(
            region,
            released_at,
            source=source,
            origin=origin,
            screen_image=screen_image,
            submitted_at=submitted_at,
        )
        if source == "watch":  # in the background: no "reading…" card over the game each time
            return
        self._latest_request = request_id
        self._place_overlay(region)
        self.overlay.show_reading()

    def _place_overlay(self, region: Region) -> None:
        self._overlay_aside = False  # a new read is shown where it belongs
        box = QRect(*region.logical_rect)
        screen = QGuiApplication.screenAt(box.center()) or QGuiApplication.primaryScreen()
        area = screen.availableGeometry() if screen is not None else QRect(0, 0, 1920, 1080)
        self.overlay.set_anchor(box, area)

    # --- results ---------------------------------------------------------------------------------

    def _on_read_finished(self, request_id: int, result) -> None:
        arrived = time.perf_counter()
        pending = self._pending.pop(request_id, None)
        self._image_read(pending, request_id == self._latest_request, superseded=True)
        watched = pending is not None and pending.source == "watch"
        if watched:
            if pending.origin is not self.watcher or not self.watcher.read_done(result.text):
                log.debug("watched region: no new text in request %d", request_id)
                return
            log.info("watched region: new text %r", result.text[:40])
        elif pending is None or request_id != self._latest_request:
            log.debug("dropped the stale result of request %d", request_id)
            return
        pending.result, pending.result_at = result, arrived
        status = f"{result.ocr_ms / 1000:.2f} s · {result.variant} · {result.device}"
        if watched and self._user_read_pending():
            # The overlay is the user's read's now: the watched text goes to the other outputs.
            self._add_to_history(pending)
        else:
            self._painted_request = request_id
            self._pending_paint = pending
            if watched:
                self._place_overlay(pending.region)
                self.overlay.show_result(result.text, status, activate=False)
                if self.overlay.frameGeometry().intersects(QRect(*pending.region.logical_rect)):
                    self.overlay.hide()  # no room beside the region: never cover (and read) it
            else:
                self.overlay.show_result(result.text, status)
            self._shown_read = pending  # the overlay's text is this read's now (edits, Anki)
        # If the overlay is not painted soon (hidden, minimised), count latency up to now.
        QTimer.singleShot(
            500, self, lambda rid=request_id: self._finish_read(rid, time.perf_counter())
        )
        if self.settings.get("output/auto_copy") and result.text:
            QGuiApplication.clipboard().setText(result.text)
        if result.text:
            self.text_read.emit(result.text, pending.source)

    def _on_text_painted(self, painted_at: float) -> None:
        if self._painted_request is not None:
            self._finish_read(self._painted_request, painted_at)

    def _finish_read(self, request_id: int, shown_at: float) -> None:
        """Latency bookkeeping once the text is on screen: log, and the --debug-dir record."""
        pending = self._pending_paint
        if pending is None or request_id != self._painted_request:
            return
        self._pending_paint = None
        self._painted_request = None
        result = pending.result
        latency_ms = (shown_at - pending.released_at) * 1000
        overhead_ms = latency_ms - result.ocr_ms
        self.last_latency = {
            "latency_ms": latency_ms,
            "ocr_ms": result.ocr_ms,
            "overhead_ms": overhead_ms,
        }
        log.info(
            "text shown %.0f ms after mouse release (model %.0f ms + app %.1f ms: %s)",
            latency_ms,
            result.ocr_ms,
            overhead_ms,
            _latency_breakdown(pending, shown_at),
        )
        self._shown_read = pending
        self._add_to_history(pending)
        if self.debug is not None:
            path = self.debug.save(
                result.image if result.image is not None else QImage(),
                pending.region.box_desktop_px,
                pending.region.screen_name,
                result.text,
                result.ocr_ms,
                latency_ms,
                screen_image=pending.screen_image,
            )
            log.debug("debug record %s", path)

    def _add_to_history(self, pending: PendingRead) -> None:
        """After the text is on screen: the SQLite write and the thumbnail never delay it."""
        result = pending.result
        if self.history is None or not result.text:
            return
        thumb = png_bytes(pil_to_qimage(result.image)) if result.image is not None else b""
        entry_id = pending.history_id = self.history.add(
            result.text if pending.edited is None else pending.edited,
            pending.region.screen_name,
            pending.region.box_desktop_px,
            thumb or None,
            source=pending.source,
            ocr_text=result.text,
        )
        window = self._windows.get("history")
        if window is not None and window.isVisible():
            window.refresh()
        log_window = self._windows.get("log")
        if log_window is not None and log_window.isVisible():
            log_window.add(self.history.get(entry_id))

    def _keep_edit(self, text: str) -> None:
        """A correction committed in the overlay (see Overlay.edit_committed): the history row and
        the reading log line get it (the model's own text stays in `ocr_text`), and the text
        outputs are sent it again, as source "edit"."""
        pending = self._shown_read
        if pending is None or pending.result is None:
            return
        pending.edited = text
        if self.history is not None and pending.history_id is not None:
            self.history.update_text(pending.history_id, text)
            window = self._windows.get("history")
            if window is not None and window.isVisible():
                window.refresh()
            log_window = self._windows.get("log")
            if log_window is not None:
                log_window.update_entry(self.history.get(pending.history_id))
        if text.strip():
            self.text_read.emit(text, "edit")

    def _on_superseded(self, request_id: int) -> None:
        pending = self._pending.pop(request_id, None)
        self._image_read(pending, False, superseded=True)
        if pending is not None and pending.origin is not None and pending.origin is self.watcher:
            self.watcher.read_failed()

    def _image_read(self, pending, ok: bool, message: str = "", superseded: bool = False) -> None:
        """Tell the channel an image it sent was read or not (the watched folder then sends its next)."""
        if pending is not None and pending.source in ("folder", "clipboard"):
            self.channels.image_read(pending.source, ok, message, superseded)

    def _on_read_failed(self, request_id: int, message: str) -> None:
        if request_id == self._page_request and self.page_view is not None:
            log.warning("reading the whole screen failed: %s", message)
            if self.model_state != "ready" and self.settings.get("engine/backend") != "server":
                message = "The model is not ready yet, so the screen was not read."
            self.page_view.set_failed(message)
            return
        pending = self._pending.pop(request_id, None)
        self._image_read(pending, False, message)
        if pending is not None and pending.source == "watch":
            log.warning("reading the watched region failed: %s", message)
            if pending.origin is self.watcher and self.watcher is not None:
                self.watcher.read_failed()
            return
        if pending is None or request_id != self._latest_request:
            return
        log.warning("reading failed: %s", message)
        if self.settings.get("engine/backend") == "server":
            pass  # the server's own sentence, already in GUI words (app/engines/server.py)
        elif self.model_state == "error":  # in GUI words: the model's own message is the log's
            message = (
                "No model is loaded, so this box was not read.\n"
                f"{split_message(self.model_error[0])[0]}\n{self._fix_model_hint()}"
            )
        elif self.model_state != "ready":
            message = "The model is still loading: press Re-scan in a moment."
        if self.overlay.isVisible():
            self.overlay.show_error(message)
        else:
            self.notify("Reading failed", message, error=True)

    # --- model state -----------------------------------------------------------------------------

    def _set_model_line(self, text: str, actionable: bool = False) -> None:
        for view in self.views:
            view.set_model_state(text, actionable)

    def model_folder_name(self) -> str:
        """The chosen model folder's name, quoted, or "" when the downloaded variant is used."""
        folder = self.settings.get("model/folder")
        return f"“{Path(folder).name or folder}”" if folder else ""

    def _fix_model_hint(self) -> str:
        where = "the tray menu" if self.tray is not None else "the Hayai window"
        if self.settings.get("model/folder"):  # a folder was asked for: never a download instead
            return f"Click “Model: not ready” in {where} to choose the folder that holds the model."
        return f"Click “Model: not ready” in {where} to download it or choose its folder."

    def _on_model_loading(self) -> None:
        self.model_state = "loading"
        source = self.model_folder_name() or self.settings.get("model/variant")
        self._set_model_line(f"Model: loading {source}…")

    def _on_model_ready(self, device: str, variant: str) -> None:
        self.model_state, self.model_device, self.model_variant = "ready", device, variant
        folder = self.model_folder_name()
        self._set_model_line(
            f"Model: ready · {device} · {variant}" + (f" from {folder}" if folder else "")
        )
        if self._model_folder_to_confirm and folder:
            self.notify(
                "Model folder loaded",
                f"Hayai now reads with the {variant} model in the folder {folder} ({device}).",
            )
        self._model_folder_to_confirm = ""
        self._log_system_info()
        self._prepare_dictionary()

    def _on_model_error(self, message: str, hint: str) -> None:
        self.model_state = "error"
        self.model_error = (message, hint)
        self._set_model_line("Model: not ready — click to fix", actionable=True)
        sentence = split_message(message)[0]
        if self.settings.get("engine/backend") == "server":
            # the server's error is already a sentence with its own hint (app/engines/server.py)
            self.notify("The Hayai server cannot be used", f"{message}\n{hint}", error=True)
        elif self._model_folder_to_confirm:
            self.notify(
                "Model folder not loaded",
                f"The folder {self.model_folder_name()} could not be used: {sentence}",
                error=True,
            )
        elif not self._windows.get("model"):  # the model dialog already explains a missing model
            self.notify(
                "The OCR model could not be loaded",
                f"{sentence} {self._fix_model_hint()}",
                error=True,
            )
        self._model_folder_to_confirm = ""
        self._log_system_info()

    def _on_model_line_clicked(self) -> None:
        if self.model_state == "error" and self.settings.get("engine/backend") == "server":
            self.show_settings()  # the server's address and key are there
        elif self.model_state == "error":
            self.show_model_dialog(self.model_error[0])

    def _log_system_info(self) -> None:
        if not self.verbose or self._info_logged:
            return
        self._info_logged = True
        from app.diagnostics import format_info, system_info

        backends = {}
        try:
            from app.backends import chosen, pick
            from app.capture import REGISTRY

            pick(REGISTRY, self._backend_setting("capture/backend"), capability="capture")
            backends = chosen()
        except Exception as exc:
            backends = {"capture": f"none ({exc})"}
        if self.hotkey_error:
            backends["hotkey"] = f"none ({self.hotkey_error.splitlines()[0]})"
        device = (
            f"{self.model_device} ({self.model_variant})"
            if self.model_state == "ready"
            else self.model_state
        )
        log.info(format_info(system_info(backends, device)))

    # --- settings --------------------------------------------------------------------------------

    def _configure_overlay(self) -> None:
        provider = None
        if self.dictionary_popup is not None:
            provider = getattr(self.dictionary_popup.dictionary, "furigana", None)
        s = self.settings
        self.overlay.configure(
            s.get("overlay/font_family"),
            s.get("overlay/font_size"),
            s.get("overlay/vertical"),
            s.get("dictionary/trigger"),
            provider,
        )

    def _on_settings_changed(self, keys) -> None:
        keys = set(keys)
        if keys & self.settings.engine_keys():
            if "model/folder" in keys:
                self._model_folder_to_confirm = self.settings.get("model/folder")
            self.worker.reload(self.settings.engine_options())
        if keys & HOTKEY_RESTART_KEYS:
            self._start_hotkeys()
        if any(k.startswith(("overlay/", "dictionary/")) for k in keys):
            self._configure_overlay()
            if "dictionary/han_language" in keys and self.dictionary_popup is not None:
                self.dictionary_popup.dictionary.han_language = self.settings.get(
                    "dictionary/han_language"
                )
        if any(k.startswith("reading/") for k in keys):
            self.channels.apply(keys)
        if "reading/watch_interval_ms" in keys and self.watcher is not None:
            self.watcher.set_interval(self.settings.get("reading/watch_interval_ms"))
        if "history/enabled" in keys or "history/length" in keys:
            if self.settings.get("history/enabled"):
                if self.history is None:
                    from app.history import History

                    self.history = History(limit=self.settings.get("history/length"))
                self.history.set_limit(self.settings.get("history/length"))
        if "app/start_at_login" in keys:
            from app.settings import apply_start_at_login

            try:
                apply_start_at_login(self.settings.get("app/start_at_login"))
            except OSError as exc:
                self.notify(
                    "Start at login", f"Could not write the autostart entry: {exc}", error=True
                )

    # --- windows ---------------------------------------------------------------------------------

    def _show_window(self, name: str, build):
        window = self._windows.get(name)
        if window is None or not window.isVisible():
            window = build()
            window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
            window.destroyed.connect(lambda *_, n=name: self._window_closed(n))
            self._windows[name] = window
        self._overlay_steps_aside()
        window.show()
        window.raise_()
        window.activateWindow()
        return window

    def _overlay_steps_aside(self) -> None:
        """The overlay stays on top of everything, so it would cover a window of ours (Settings,
        History, …): it steps aside while one is open and comes back, text and all, when the last
        one closes (unless a new read showed it meanwhile)."""
        if self.overlay.isVisible():
            self.overlay.hide()
            if self.dictionary_popup is not None:
                self.dictionary_popup.hide()
            self._overlay_aside = True

    def _window_closed(self, name: str) -> None:
        self._windows.pop(name, None)
        if self._overlay_aside and not self._quitting:
            if not any(w.isVisible() for w in self._windows.values()):
                self._overlay_aside = False
                self.overlay.restore()

    def show_settings(self):
        from app.ui.settings_dialog import SettingsDialog

        def build():
            dialog = SettingsDialog(self.settings)
            # The keys pressed in a hotkey field are a new combo, never a capture.
            dialog.hotkey_recording.connect(self._suspend_hotkeys)
            dialog.finished.connect(lambda *_: self._suspend_hotkeys(False))
            return dialog

        return self._show_window("settings", build)

    def _suspend_hotkeys(self, suspended: bool) -> None:
        self._recording_hotkey = suspended
        if self.hotkeys is not None:
            self.hotkeys.suspended = suspended

    def show_history(self):
        if self.history is None:
            self.notify(
                "History is off", "Turn on “Keep a history” in Settings to keep past captures."
            )
            return None
        from app.ui.history_window import HistoryWindow

        return self._show_window("history", lambda: HistoryWindow(self.history))

    def show_log(self):
        if self.history is None:
            self.notify(
                "History is off",
                "The reading log keeps its lines in the history: turn on “Keep a history” in Settings.",
            )
            return None
        from app.ui.reading_log import ReadingLog

        def build():
            window = ReadingLog(
                self.history,
                self.session_started,
                trigger=lambda: self.settings.get("dictionary/trigger"),
            )
            self._hook_dictionary(window)
            window.set_mining(self.anki is not None)
            window.mine_requested.connect(
                lambda line, selected, view=window: self._mine_line(line, selected, view)
            )
            return window

        return self._show_window("log", build)

    def show_about(self):
        from app.ui.about import AboutDialog

        return self._show_window("about", AboutDialog)

    def show_model_dialog(self, message: str = ""):
        from app.ui.model_dialog import ModelDialog

        def build():
            dialog = ModelDialog(
                self.settings.get("model/variant"),
                message,
                folder=self.settings.get("model/folder"),
            )
            dialog.downloaded.connect(
                lambda folder: self.worker.reload(self.settings.engine_options())
            )
            dialog.folder_chosen.connect(lambda folder: self._use_model_folder(folder))
            return dialog

        return self._show_window("model", build)

    def _use_model_folder(self, folder: str) -> None:
        self.settings.overrides.pop("model/folder", None)  # the user's choice now beats --model
        self._model_folder_to_confirm = folder
        self._set_model_line(f"Model: loading “{Path(folder).name or folder}”…")
        if not self.settings.update({"model/folder": folder}):
            self.worker.reload(self.settings.engine_options())  # same folder again: retry anyway

    # --- messages and the dictionary -------------------------------------------------------------

    def notify(self, title: str, message: str, error: bool = False) -> None:
        (log.warning if error else log.info)("%s: %s", title, message)
        if self.tray is not None:
            self.tray.notify(title, message, error)
        else:
            self.toast.show_message(title, message, error)

    def _attach_dictionary(self) -> None:
        """Wire the popup dictionary (app/ui/dictionary_popup.py) to the overlay: hover/click → lookup →
        highlight + popup; furigana for the overlay's toggle."""
        d = self.dictionary_popup = self._make_dictionary_controller()
        if d is None:
            return
        o = self.overlay
        self._hook_dictionary(o)
        o.closed.connect(d.hide)
        o.text_edited.connect(lambda _text: d.hide())  # the entry is about text that changed
        o.text_replaced.connect(d.hide)
        d.highlight.connect(self._highlight_word)
        d.watch(o)  # Esc closes the popup first, then the overlay
        if self.anki is not None:
            d.popup.attach_anki(self.anki)
            d.popup.mining_context = self._mining_context
        log_window = self._windows.get("log")
        if log_window is not None:
            self._hook_dictionary(log_window)
        self._configure_overlay()
        if self.model_state == "ready":
            self._prepare_dictionary()

    def _hook_dictionary(self, view) -> None:
        """One popup for every text view (the overlay, the reading log): hover → lookup there."""
        d = self.dictionary_popup
        if d is None:
            return
        view.word_hovered.connect(lambda text, i, pos, v=view: self._look_up(v, text, i, pos))
        view.word_left.connect(d.on_left)
        view.destroyed.connect(lambda *_, v=view: self._forget_dictionary_view(v))

    def _look_up(self, view, text: str, index: int, pos) -> None:
        if self._dictionary_view is not None and self._dictionary_view is not view:
            self._dictionary_view.highlight(0, 0)
        self._dictionary_view = view
        line, vertical = view.line_at(index)  # the popup goes beside this line, never over it
        self.dictionary_popup.on_hover(text, index, pos, line, vertical)

    def _highlight_word(self, start: int, length: int) -> None:
        if self._dictionary_view is not None:
            self._dictionary_view.highlight(start, length)

    def _forget_dictionary_view(self, view) -> None:
        if self._dictionary_view is view:
            self._dictionary_view = None

    def _prepare_dictionary(self) -> None:
        if self.dictionary_popup is not None and not self._dictionary_prepared:
            self._dictionary_prepared = True
            # After the model, not beside it: the first run builds the dictionary index (~20 s of CPU).
            QTimer.singleShot(1000, self.dictionary_popup.prepare_in_background)

    def _make_dictionary_controller(self):
        """The popup dictionary's controller; None when the dictionary part is not installed."""
        try:
            from app.dictionary import Dictionary
            from app.ui.dictionary_popup import DictionaryPopupController
        except ImportError as exc:
            log.info("no popup dictionary: %s", exc)
            return None
        try:
            return DictionaryPopupController(
                Dictionary(han_language=self.settings.get("dictionary/han_language"))
            )
        except Exception as exc:  # a broken dictionary must not stop the OCR app
            log.warning("popup dictionary unavailable: %s", exc)
            return None

    # --- Anki (app/anki/, app/ui/anki_action.py) ----------------------------------------------------

    def _make_anki(self):
        from app.dictionary.furigana import furigana
        from app.ui.anki_action import FAILED, AnkiActions

        actions = AnkiActions(self.settings, furigana=furigana, parent=self)
        actions.line_done.connect(
            lambda state, message: self._mine_view.show_note(message, error=state == FAILED)
        )
        return actions

    def _mining_context(self, view=None) -> tuple[bytes | None, str]:
        """The crop of the text the note is made from (PNG) and where it came from: the reading
        log's current line (its history thumbnail) when the word or line is from the log, else the
        read on screen in the overlay."""
        view = view or self._dictionary_view
        log_window = self._windows.get("log")
        if view is not None and view is log_window:
            entry = log_window.current_entry()
            if entry is None:
                return None, "Hayai · reading log"
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.created))
            return entry.thumbnail, f"Hayai · {entry.source or 'read'} · {when}"
        pending = self._shown_read
        if pending is None or pending.result.image is None:
            return None, "Hayai"
        png = png_bytes(pil_to_qimage(pending.result.image), max_side=ANKI_IMAGE_SIDE)
        return png or None, f"Hayai · {pending.source} · {pending.region.screen_name}"

    def _mine_line(self, line: str, selected: str, view=None) -> None:
        """Mine (overlay or reading log): a card for the selected word (looked up), else for the
        whole line."""
        from app.anki.note import Mined

        if self.anki is None or not line.strip():
            return
        self._mine_view = view or self.overlay
        image, source = self._mining_context(self._mine_view)
        extra = {"image_png": image, "source": source}
        mined = Mined(word=selected or line.strip(), sentence=line, match=selected, **extra)
        d = self.dictionary_popup
        if selected and d is not None and d.dictionary.is_ready():
            try:
                result = d.dictionary.lookup(selected, 0)
            except Exception:  # the note still gets the word and the line
                result = None
            if result and result.entries and result.match_len == len(selected):
                mined = Mined.from_entry(result.entries[0], line, **extra)
                mined.match = selected
        self._mine_view.show_note("Adding to Anki…")
        self.anki.mine_line(mined)
