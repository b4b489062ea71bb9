"""The OCR worker: one QThread that owns the recognizer, so the GUI thread never runs or waits on the model.

Life cycle, all inside the worker thread: import the engine → `load_recognizer(...)` → `warmup()` →
read requests. Requests carry ids; the worker keeps one crop waiting (a crop that has not started
when a newer one is submitted is replaced and reported as `superseded`): a mailbox, not a policy.
Which result is still wanted ("newest wins") is decided in one place, the app's read lifecycle
(`app.flows.reads.Reads.is_current`). Results and errors come back as signals, emitted on the GUI thread,
and the worker stays usable; `reload()` swaps the model when its settings change.

The GIL: loading torch in a Python thread still stalls the GUI thread where it holds the GIL for long
stretches; `_Engine.load` keeps the garbage collector off meanwhile and dlopens libtorch first with
the GIL released (app/engines/torch_preload.py says why and how; app/startup_stall.py measures it).
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal, Slot
from PySide6.QtGui import QImage

from app.engines import traits
from app.engines.torch_preload import preload_torch_libraries
from app.platform.qt_images import qimage_to_pil

# torch-free: the worker's module stays light
from model.errors import ModelNotFoundError, WeightsError

if TYPE_CHECKING:
    from app.engines.base import Recognizer

log = logging.getLogger(__name__)


@dataclass
class OcrResult:
    text: str
    token_ids: list[int]
    timings: dict[str, float]  # stage -> ms, from the recognizer
    ocr_ms: float  # model time for this request (wall clock around read)
    device: str
    variant: str
    precision: str
    image: object = field(repr=False, default=None)  # the PIL image exactly as given to the model
    picked_at: float = 0.0  # perf_counter() when the worker took the request (latency breakdown)
    done_at: float = 0.0  # perf_counter() when the worker sent the result

    def hops_ms(
        self, submitted_at: float, arrived_at: float, painted_at: float
    ) -> dict[str, float]:
        """The app's share of this read in ms, hop by hop, from the crop handed to the worker
        (`submitted_at`) to the result on the GUI thread (`arrived_at`) and the text painted."""
        return {
            "queue": (self.picked_at - submitted_at) * 1000,
            "worker beside the model": (self.done_at - self.picked_at) * 1000 - self.ocr_ms,
            "hand-over": (arrived_at - self.done_at) * 1000,
            "result→painted": (painted_at - arrived_at) * 1000,
        }


def default_factory(**options):
    """Load the recognizer of the chosen backend, this computer or a server (runs in the worker
    thread); see app/engines/."""
    from app.engines import load

    return load(**options)


def _error_hint(exc: BaseException, folder: str | None = None) -> tuple[str, str, bool]:
    """(message, what to do, is-the-download-missing) for a load failure; `folder` is the model
    folder that was asked for (None: the download)."""
    if hint := getattr(exc, "hint", None):  # a backend's own error, already in words (app/engines/)
        return (str(exc), hint, False)
    if isinstance(exc, ModelNotFoundError) and folder:  # never a download instead of the folder
        return (
            str(exc),
            "Choose the folder that holds the model: tray menu → Model…, or Settings → Model folder.",
            False,
        )
    if isinstance(exc, ModelNotFoundError):
        return (
            str(exc),
            "Download the model or choose a folder: tray menu → Model…, or run `hayai model download`.",
            True,
        )
    if isinstance(exc, WeightsError):
        return (
            f"The model files cannot be used: {exc}",
            "Run `hayai model download` again, or choose another folder in Settings.",
            False,
        )
    if isinstance(exc, ImportError):
        return (
            f"The OCR engine could not be imported: {exc}",
            "Reinstall hayai (pip install hayai-desktop).",
            False,
        )
    if _is_out_of_memory(exc):
        return (
            f"Out of memory while loading the model: {exc}",
            "Set Device to cpu in Settings.",
            False,
        )
    return (f"The model could not be loaded: {exc}", "Run `hayai -v` and read the log.", False)


def _is_out_of_memory(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


class Mailbox:
    """One request waiting for the worker: a newer one replaces it (newest wins). `put` is a direct
    call from the GUI thread under the lock, not a signal, so the slot is filled at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._request: tuple | None = None

    def put(self, request: tuple | None) -> int | None:
        """Make `request` the one to read next (None: nothing); the id of the one it replaced."""
        with self._lock:
            dropped, self._request = self._request, request
        return dropped[0] if dropped else None

    def take(self) -> tuple | None:
        with self._lock:
            request, self._request = self._request, None
        return request


class _Engine(QObject):
    """The worker-thread half of `OcrWorker`: loads the recognizer and reads the newest request."""

    loading = Signal()
    ready = Signal(str, str)
    error = Signal(str, str)
    model_missing = Signal(str)
    busy = Signal(bool)
    finished = Signal(int, object)
    failed = Signal(int, str)
    page_progress = Signal(int, int, int)
    page_finished = Signal(int, object)

    def __init__(self, factory, warmup: bool):
        super().__init__()
        self._factory, self._warmup = factory, warmup
        self.recognizer: Recognizer | None = None
        self._load_error: str | None = "the model is still loading"
        self._retry_options: dict | None = None  # a failed load worth trying again at the next read
        self.crops = Mailbox()  # (request id, crop, max new tokens)
        self.pages = Mailbox()  # (request id, the whole screen)

    @Slot()
    def _model_ready(self, request_id: int) -> bool:
        """True once a model is loaded (a failed load is tried again first); else the request fails."""
        if self.recognizer is None and self._retry_options is not None:
            self.load(self._retry_options)
        if self.recognizer is None:
            assert self._load_error is not None  # it is None only while a recognizer is loaded
            self.failed.emit(request_id, f"No model: {self._load_error.rstrip('.')}.")
            return False
        return True

    def process_page(self) -> None:
        """A whole page (app/page/read.py): its blocks found and read in batches, here in the worker."""
        pending = self.pages.take()
        if pending is None:
            return
        request_id, image = pending
        if not self._model_ready(request_id):
            return
        from app.page.read import read_page

        self.busy.emit(True)
        try:
            record = read_page(
                self.recognizer,
                qimage_to_pil(image),
                progress=lambda what, done, total: self.page_progress.emit(request_id, done, total),
            )
        except Exception as exc:
            self.failed.emit(request_id, self._read_error(exc))
        else:
            log.info(
                "page %d: %d blocks in %.0f ms", request_id, len(record["blocks"]), record["ms"]
            )
            self.page_finished.emit(request_id, record)
        finally:
            self.busy.emit(False)

    @Slot(object)
    def load(self, options: dict) -> None:
        self.loading.emit()
        self.recognizer = None
        self._load_error = "the model is still loading"
        self._retry_options = None
        started = time.perf_counter()
        gc.collect()  # drop a previous model now, while the collector may still run
        gc.disable()  # full collections during the import stall the GUI (app/engines/torch_preload.py)
        try:
            if not traits(options.get("backend", "local")).remote:  # a remote engine: no torch
                preload_torch_libraries()
            recognizer = self._factory(**options)
            if self._warmup:
                recognizer.warmup()
        except Exception as exc:  # any failure is shown; the worker keeps running
            message, hint, missing = _error_hint(exc, options.get("model_dir"))
            self._load_error = message
            if getattr(exc, "retry_load", False):  # a server that may be back by the next read
                self._retry_options = options
            log.warning("model load failed: %s", message)
            if missing:
                self.model_missing.emit(message)
            self.error.emit(message, hint)
            return
        finally:
            gc.freeze()  # the engine's objects stay; later collections need not walk them
            gc.enable()
        self.recognizer = recognizer
        self._load_error = None
        log.info(
            "model ready in %.2f s: %s · %s · %s",
            time.perf_counter() - started,
            recognizer.variant,
            recognizer.device,
            recognizer.precision,
        )
        self.ready.emit(recognizer.device, recognizer.variant)

    @Slot()
    def process(self) -> None:
        pending = self.crops.take()
        if pending is None:
            return  # its newer twin already ran, or stop() cleared it
        request_id, image, max_new_tokens = pending
        picked_at = time.perf_counter()
        if not self._model_ready(request_id):
            return
        assert self.recognizer is not None  # _model_ready just said so (this thread alone sets it)
        self.busy.emit(True)
        try:
            pil = qimage_to_pil(image)
            started = time.perf_counter()
            results = self.recognizer.read([pil], max_new_tokens=max_new_tokens)
            ocr_ms = (time.perf_counter() - started) * 1000
            first = results[0]
            rec = self.recognizer
            result = OcrResult(
                text=first.text,
                token_ids=list(first.token_ids),
                timings=dict(first.timings),
                ocr_ms=ocr_ms,
                device=rec.device,
                variant=rec.variant,
                precision=rec.precision,
                image=pil,
                picked_at=picked_at,
            )
        except Exception as exc:
            self.failed.emit(request_id, self._read_error(exc))
        else:
            log.info(
                "request %d read in %.0f ms (%d tokens)", request_id, ocr_ms, len(result.token_ids)
            )
            result.done_at = time.perf_counter()
            self.finished.emit(request_id, result)
        finally:
            self.busy.emit(False)

    def _read_error(self, exc: BaseException) -> str:
        # A backend's own error, already in words (app/engines/).
        if hint := getattr(exc, "hint", None):
            log.warning("reading failed: %s", exc)
            return f"{exc} {hint}"
        if _is_out_of_memory(exc):
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_available():
                torch.cuda.empty_cache()
            return "Out of memory while reading this box. Try a smaller box, or set Device to cpu in Settings."
        log.exception("OCR request failed")
        return f"Reading failed: {exc}"


class OcrWorker(QObject):
    """Owns one recognizer in its own QThread. Call `start()`, then `submit()` from the GUI thread.

    This object lives in the GUI thread and the model work in `_Engine`, moved to the worker thread;
    the engine's signals are relayed through queued connections, so every signal here is emitted on
    the GUI thread and any listener (a lambda, a test's waitSignal) runs there."""

    loading = Signal()
    ready = Signal(str, str)  # device, variant
    error = Signal(str, str)  # message, hint (load failed; requests fail until a reload works)
    model_missing = Signal(str)  # ModelNotFoundError's message: the app offers the model dialog
    busy = Signal(bool)  # a request is being read
    finished = Signal(int, object)  # request id, OcrResult
    failed = Signal(int, str)  # request id, message
    superseded = Signal(int)  # request id dropped before it started
    page_progress = Signal(int, int, int)  # page request id, blocks read, blocks found
    page_finished = Signal(int, object)  # page request id, the page record (app/page/read.py)

    _wake = Signal()
    _wake_page = Signal()
    _load_requested = Signal(object)

    def __init__(self, options: dict | None = None, factory=None, warmup: bool = True):
        super().__init__()
        self._options = dict(options or {})
        self._next_id = 1
        self._thread = QThread()
        self._thread.setObjectName("hayai-ocr")
        self._engine = _Engine(factory or default_factory, warmup)
        self._engine.moveToThread(self._thread)
        for name in (
            "loading",
            "ready",
            "error",
            "model_missing",
            "busy",
            "finished",
            "failed",
            "page_progress",
            "page_finished",
        ):
            # receiver here: queued to this thread
            getattr(self._engine, name).connect(getattr(self, name))
        self._wake.connect(self._engine.process)
        self._wake_page.connect(self._engine.process_page)
        self._load_requested.connect(self._engine.load)

    def start(self) -> None:
        """Start the thread and load the model in it (the caller returns at once)."""
        self._thread.start()
        self._load_requested.emit(self._options)

    def reload(self, options: dict) -> None:
        self._options = dict(options)
        self._load_requested.emit(self._options)

    def submit(self, image: QImage, max_new_tokens: int = 128) -> int:
        """Queue a crop; returns its request id. A waiting older request is dropped."""
        request_id = self._next_id
        self._next_id += 1
        dropped = self._engine.crops.put((request_id, image.copy(), max_new_tokens))
        if dropped is not None:
            self.superseded.emit(dropped)
        self._wake.emit()
        return request_id

    def submit_page(self, image: QImage) -> int:
        """Queue a whole page (every text block read); returns its request id. Its progress and
        record come as `page_progress` and `page_finished`, a failure as `failed`."""
        request_id = self._next_id
        self._next_id += 1
        dropped = self._engine.pages.put((request_id, image.copy()))
        if dropped is not None:
            self.superseded.emit(dropped)
        self._wake_page.emit()
        return request_id

    def stop(self, timeout_ms: int = 10_000) -> None:
        self._engine.crops.put(None)
        self._engine.pages.put(None)
        self._thread.quit()
        if not self._thread.wait(timeout_ms):
            log.warning("the OCR thread did not stop within %d ms", timeout_ms)

    @property
    def recognizer(self):
        return self._engine.recognizer
