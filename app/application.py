"""The one place where the components are wired: triggers in, overlay/clipboard/history out.

    trigger (hotkey, tray click, `hayai capture`) → start_capture() → grab_screens() →
    SelectionSession → OcrWorker.submit() → overlay + auto-copy + history (+ --debug-dir)

Every component only declares signals; `_connect_signals()` connects them. Errors (no model, out of
memory, capture refused, hotkey unavailable) become a message and the app keeps running.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QImage

from app.settings import HOTKEY_KEYS, MODEL_KEYS, Settings
from app.ui.overlay import Overlay
from app.ui.tray import Toast, Tray

log = logging.getLogger(__name__)

THUMBNAIL_SIDE = 160
NO_TRAY_QUIT = "Quit with Ctrl+C in its terminal, or `kill {pid}`."


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
    result: object = None
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
    def __init__(
        self,
        settings: Settings,
        *,
        use_tray: bool = True,
        debug_dir: str | None = None,
        verbose: bool = False,
        worker=None,
        history=None,
        hotkeys=None,
        server=None,
        grab_screens=None,
        grab_region=None,
        selection_factory=None,
        parent=None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.verbose = verbose
        self._grab_screens = grab_screens
        self._grab_region = grab_region
        self._selection_factory = selection_factory
        self.server = server
        self.hotkeys = hotkeys
        self.hotkey_error: str | None = None

        if worker is None:
            from app.ocr_worker import OcrWorker

            worker = OcrWorker(settings.model_options())
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
            "" if self.tray else ("--no-tray" if not use_tray else "no system tray on this desktop")
        )
        self.toast = Toast()
        self.overlay = Overlay()
        self.dictionary_popup = (
            None  # attached right after the tray shows (its imports take ~0.2 s)
        )
        self._configure_overlay()

        self.session = None  # the open SelectionSession, if any
        self.last_region: Region | None = None
        self._pending: dict[int, PendingRead] = {}
        self._latest_request: int | None = None
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

        if self.tray is not None:
            t = self.tray
            t.capture_requested.connect(self.start_capture)
            t.rescan_requested.connect(self.rescan)
            t.history_requested.connect(self.show_history)
            t.settings_requested.connect(self.show_settings)
            t.model_requested.connect(self._on_model_line_clicked)
            t.about_requested.connect(self.show_about)
            t.quit_requested.connect(self.quit)
            w.busy.connect(t.set_busy)

        o = self.overlay
        o.rescan_requested.connect(self.rescan)
        o.text_painted.connect(self._on_text_painted)

        if self.server is not None:
            self.server.command.connect(self.handle_command)
        if self.hotkeys is not None:
            self.hotkeys.triggered.connect(self.handle_command)

        self.settings.changed.connect(self._on_settings_changed)

    # --- start / stop ----------------------------------------------------------------------------

    def start(self) -> None:
        """Show the tray now; the model loads in the worker thread; hotkeys start listening."""
        if self.tray is not None:
            self.tray.set_hotkeys(
                self.settings.get("hotkey/capture"), self.settings.get("hotkey/rescan")
            )
            self.tray.show()
        else:
            import os

            message = (
                f"Hayai runs without a tray icon ({self.no_tray_reason}). "
                + NO_TRAY_QUIT.format(pid=os.getpid())
            )
            log.warning(message)  # a warning: printed even without -v
            self.toast.show_message("Hayai is running", message)
        if self.settings.moved_aside:
            self.notify(
                "Settings reset",
                f"The settings file could not be read; it was moved to "
                f"{self.settings.moved_aside} and the defaults are used.",
                error=True,
            )
        self.worker.start()
        self._start_hotkeys()
        if self._grab_screens is None:
            QTimer.singleShot(0, self, self._note_capture_route)
        QTimer.singleShot(
            0, self.overlay.prepare
        )  # native window + CJK font ready before the first capture
        QTimer.singleShot(0, self, self._attach_dictionary)

    def _start_hotkeys(self) -> None:
        if self.hotkeys is None:
            try:
                from app.hotkey import GlobalHotkeys
            except ImportError as exc:
                self.hotkey_error = f"hotkeys unavailable: {exc}"
                log.warning(self.hotkey_error)
                return
            self.hotkeys = GlobalHotkeys(self._combos(), self._backend_setting("hotkey/backend"))
            self.hotkeys.triggered.connect(self.handle_command)
        else:
            self.hotkeys.backend = self._backend_setting("hotkey/backend")
            self.hotkeys.set_combos(self._combos())
        try:
            self.hotkeys.start()
        except (
            Exception
        ) as exc:  # HotkeyError: Wayland, permission, invalid combo; the message says what to do
            self.hotkey_error = str(exc)
            offer = getattr(exc, "offer", None)
            if offer is not None:  # e.g. GNOME: add the desktop shortcuts for the user
                self._offer(*offer)
            else:
                self.notify("Global hotkey unavailable", str(exc), error=True)
        else:
            self.hotkey_error = None

    def _note_capture_route(self) -> None:
        """Say which capture route runs (the log) and, before the desktop portal's first use on
        this machine, that the desktop may ask once for permission (a message)."""
        from app.backends import BackendError, pick
        from app.capture import REGISTRY
        from app.capture.backends.portal import FIRST_USE_NOTE
        from app.settings import config_dir

        try:
            choice = pick(REGISTRY, self._backend_setting("capture/backend"), capability="capture")
        except BackendError:
            return  # the first capture reports it, with what to install
        marker = config_dir() / "portal-note-shown"
        if choice.name == "portal" and not marker.exists():
            self.notify("Screen capture through your desktop", FIRST_USE_NOTE)
            try:
                marker.touch()
            except OSError as exc:
                log.debug("cannot remember the portal note: %s", exc)

    def _offer(self, question: str, action) -> None:
        """Ask in a window whether to do `action` (it returns what to say, or raises OSError)."""
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Hayai — keyboard shortcuts",
            question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        )
        box.button(QMessageBox.StandardButton.Yes).setText("Add the shortcuts")
        box.button(QMessageBox.StandardButton.No).setText("Not now")

        def answered(button) -> None:
            if box.standardButton(button) != QMessageBox.StandardButton.Yes:
                return
            try:
                self.notify("Keyboard shortcuts added", action())
            except OSError as exc:
                self.notify("Keyboard shortcuts not added", str(exc), error=True)

        box.buttonClicked.connect(answered)
        self._show_window("shortcuts", lambda: box)

    def _combos(self) -> dict[str, str]:
        return {
            "capture": self.settings.get("hotkey/capture"),
            "rescan": self.settings.get("hotkey/rescan"),
        }

    def quit(self) -> None:
        log.info("quitting")
        if self.session is not None:
            self.session.cancel()
        if self.hotkeys is not None:
            self.hotkeys.stop()
        if self.server is not None:
            self.server.close()
        self.worker.stop()
        if self.tray is not None:
            self.tray.hide()
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
        """ "capture" or "rescan", from the hotkey or a second `hayai` process."""
        if command == "capture":
            self.start_capture()
        elif command == "rescan":
            self.rescan()
        else:
            log.info("ignored unknown command %r", command)

    def start_capture(self) -> None:
        if self.session is not None and self.session.is_open:
            log.debug("a selection is already open; trigger ignored")
            return
        self.overlay.hide()  # not part of the frozen screen
        if self.dictionary_popup is not None:
            self.dictionary_popup.hide()
        try:
            captures = self._grab()
        except Exception as exc:  # CaptureError, BackendError, X errors: a message, not a crash
            log.warning("screen capture failed: %s", exc)
            self.notify("Screen capture failed", str(exc), error=True)
            return
        factory = self._selection_factory
        if factory is None:
            from app.ui.selection import SelectionSession as factory
        session = factory(captures)
        session.selected.connect(self._on_selected)
        session.cancelled.connect(self._on_selection_cancelled)
        self.session = session
        session.start()

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
        started = time.perf_counter()
        grab = self._grab_region
        if grab is None:
            from functools import partial

            from app.capture import grab_region

            grab = partial(grab_region, backend=self._backend_setting("capture/backend"))
        hide_overlay = self.overlay.isVisible()
        if hide_overlay:
            self.overlay.hide()
        try:
            image = grab(region.screen_name, region.box_image_px)
        except Exception as exc:
            log.warning("re-scan capture failed: %s", exc)
            self.notify("Re-scan failed", str(exc), error=True)
            return
        self._read(image, region, started)

    def _on_selected(self, selection) -> None:
        self.session = None
        region = Region(
            selection.screen_name,
            tuple(selection.box_image_px),
            tuple(selection.box_desktop_px),
            tuple(selection.logical_rect),
        )
        self.last_region = region
        if self.tray is not None:
            self.tray.set_rescan_enabled(True)
        self._read(selection.image, region, selection.released_at)

    def _on_selection_cancelled(self) -> None:
        self.session = None

    def _read(self, image: QImage, region: Region, released_at: float) -> None:
        # Submit first: the model starts at once, and the GUI work below overlaps with it.
        submitted_at = time.perf_counter()
        request_id = self.worker.submit(image)
        self._pending[request_id] = PendingRead(region, released_at, submitted_at=submitted_at)
        self._latest_request = request_id
        self._place_overlay(region)
        self.overlay.show_reading()

    def _place_overlay(self, region: Region) -> None:
        box = QRect(*region.logical_rect)
        screen = QGuiApplication.screenAt(box.center()) or QGuiApplication.primaryScreen()
        area = screen.availableGeometry() if screen is not None else QRect(0, 0, 1920, 1080)
        self.overlay.set_anchor(box, area)

    # --- results ---------------------------------------------------------------------------------

    def _on_read_finished(self, request_id: int, result) -> None:
        arrived = time.perf_counter()
        pending = self._pending.pop(request_id, None)
        if pending is None or request_id != self._latest_request:
            log.debug("dropped the stale result of request %d", request_id)
            return
        pending.result, pending.result_at = result, arrived
        self._painted_request = request_id
        self._pending_paint = pending
        status = f"{result.ocr_ms / 1000:.2f} s · {result.variant} · {result.device}"
        self.overlay.show_result(result.text, status)
        # If the overlay is not painted soon (hidden, minimised), count latency up to now.
        QTimer.singleShot(
            500, self, lambda rid=request_id: self._finish_read(rid, time.perf_counter())
        )
        if self.settings.get("output/auto_copy") and result.text:
            QGuiApplication.clipboard().setText(result.text)

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
        self._add_to_history(pending)
        if self.debug is not None:
            path = self.debug.save(
                result.image if result.image is not None else QImage(),
                pending.region.box_desktop_px,
                pending.region.screen_name,
                result.text,
                result.ocr_ms,
                latency_ms,
            )
            log.debug("debug record %s", path)

    def _add_to_history(self, pending: PendingRead) -> None:
        """After the text is on screen: the SQLite write and the thumbnail never delay it."""
        result = pending.result
        if self.history is None or not result.text:
            return
        thumb = png_bytes(_pil_to_qimage(result.image)) if result.image is not None else b""
        self.history.add(
            result.text, pending.region.screen_name, pending.region.box_desktop_px, thumb or None
        )
        window = self._windows.get("history")
        if window is not None and window.isVisible():
            window.refresh()

    def _on_superseded(self, request_id: int) -> None:
        self._pending.pop(request_id, None)

    def _on_read_failed(self, request_id: int, message: str) -> None:
        pending = self._pending.pop(request_id, None)
        if pending is None or request_id != self._latest_request:
            return
        log.warning("reading failed: %s", message)
        if self.overlay.isVisible():
            self.overlay.show_error(message)
        else:
            self.notify("Reading failed", message, error=True)

    # --- model state -----------------------------------------------------------------------------

    def _on_model_loading(self) -> None:
        self.model_state = "loading"
        if self.tray is not None:
            self.tray.set_model_state("Model: loading…")

    def _on_model_ready(self, device: str, variant: str) -> None:
        self.model_state, self.model_device, self.model_variant = "ready", device, variant
        if self.tray is not None:
            self.tray.set_model_state(f"Model: ready · {device} · {variant}")
        self._log_system_info()
        self._prepare_dictionary()

    def _on_model_error(self, message: str, hint: str) -> None:
        self.model_state = "error"
        self.model_error = (message, hint)
        if self.tray is not None:
            self.tray.set_model_state("Model: not ready — click to fix", actionable=True)
        if not self._windows.get("model"):  # the model dialog already explains a missing model
            self.notify("The OCR model could not be loaded", f"{message}\n{hint}", error=True)
        self._log_system_info()

    def _on_model_line_clicked(self) -> None:
        if self.model_state == "error":
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
        if keys & MODEL_KEYS:
            self.worker.reload(self.settings.model_options())
        if keys & HOTKEY_KEYS:
            if self.tray is not None:
                self.tray.set_hotkeys(
                    self.settings.get("hotkey/capture"), self.settings.get("hotkey/rescan")
                )
            self._start_hotkeys()
        if any(k.startswith(("overlay/", "dictionary/")) for k in keys):
            self._configure_overlay()
            if "dictionary/han_language" in keys and self.dictionary_popup is not None:
                self.dictionary_popup.dictionary.han_language = self.settings.get(
                    "dictionary/han_language"
                )
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
            window.destroyed.connect(lambda *_, n=name: self._windows.pop(n, None))
            self._windows[name] = window
        window.show()
        window.raise_()
        window.activateWindow()
        return window

    def show_settings(self):
        from app.ui.settings_dialog import SettingsDialog

        return self._show_window("settings", lambda: SettingsDialog(self.settings))

    def show_history(self):
        if self.history is None:
            self.notify(
                "History is off", "Turn on “Keep a history” in Settings to keep past captures."
            )
            return None
        from app.ui.history_window import HistoryWindow

        return self._show_window("history", lambda: HistoryWindow(self.history))

    def show_about(self):
        from app.ui.about import AboutDialog

        return self._show_window("about", AboutDialog)

    def show_model_dialog(self, message: str = ""):
        from app.ui.model_dialog import ModelDialog

        def build():
            dialog = ModelDialog(self.settings.get("model/variant"), message)
            dialog.downloaded.connect(
                lambda folder: self.worker.reload(self.settings.model_options())
            )
            dialog.folder_chosen.connect(lambda folder: self._use_model_folder(folder))
            return dialog

        return self._show_window("model", build)

    def _use_model_folder(self, folder: str) -> None:
        self.settings.overrides.pop("model/folder", None)  # the user's choice now beats --model
        if not self.settings.update({"model/folder": folder}):
            self.worker.reload(self.settings.model_options())  # same folder again: retry anyway

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
        o.word_hovered.connect(d.on_hover)
        o.word_left.connect(d.on_left)
        o.closed.connect(d.hide)
        d.highlight.connect(o.highlight)
        d.watch(o)  # Esc closes the popup first, then the overlay
        self._configure_overlay()
        if self.model_state == "ready":
            self._prepare_dictionary()

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


def _pil_to_qimage(pil) -> QImage:
    rgb = pil.convert("RGB")
    data = rgb.tobytes()
    image = QImage(data, rgb.width, rgb.height, rgb.width * 3, QImage.Format.Format_RGB888)
    return image.copy()  # own the pixels: `data` goes away
