"""Stand-ins for the app-core tests: a recognizer with the engine's API, fake captures and sessions."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from app.engines.base import Traits
from app.engines.local import TRAITS as LOCAL
from model.errors import ModelNotFoundError


@dataclass
class FakeResult:
    text: str
    token_ids: list[int]
    timings: dict[str, float] = field(default_factory=lambda: {"total": 1.0})


class FakeRecognizer:
    """`read()` returns "<text> WxH" so a test can see which crop was read; can block or fail on demand."""

    traits: Traits = LOCAL
    reads_batches = False  # read() only: a page's crops come batch by batch
    device = "cpu"
    variant = "v2.1"
    precision = "exact"
    model_dir = Path(".")

    def __init__(self, text: str = "今日はいい天気ですね。", delay_s: float = 0.0):
        self.text = text
        self.delay_s = delay_s
        self.gate: threading.Event | None = None  # when set: read() waits for it
        self.fail_next: list[BaseException] = []
        self.reads: list[tuple[int, int]] = []
        self.started = threading.Event()
        self.warmed = False

    def warmup(self) -> None:
        self.warmed = True

    def read(self, images, max_new_tokens: int = 128, num_beams: int = 1):
        self.started.set()
        if self.gate is not None:
            self.gate.wait(10)
        if self.delay_s:
            time.sleep(self.delay_s)
        size = images[0].size
        self.reads.append(size)
        if self.fail_next:
            raise self.fail_next.pop(0)
        return [FakeResult(self.text, [5, 6, 7])]


def factory_for(recognizer, missing_first: str | None = None):
    """A worker factory giving `recognizer`; with `missing_first`, the first load fails with
    ModelNotFoundError(missing_first). `factory.calls` holds the options of every load."""
    calls = []

    def factory(**options):
        calls.append(options)
        if missing_first is not None and len(calls) == 1:
            raise ModelNotFoundError(missing_first)
        return recognizer

    factory.calls = calls
    return factory


def pattern_image(width: int, height: int) -> QImage:
    """An RGB image where every pixel is different, so crops can be compared exactly."""
    # Built from bytes: tens of thousands of setPixelColor() calls trip a PySide6 refcount bug on None
    # (Python 3.11's None is not immortal) and abort the interpreter.
    data = bytearray(width * height * 4)
    for y in range(height):
        for x in range(width):
            i = (y * width + x) * 4
            data[i : i + 4] = bytes(
                ((x + y) % 256, (y * 5) % 256, (x * 7) % 256, 255)
            )  # B, G, R, A
    return QImage(bytes(data), width, height, width * 4, QImage.Format.Format_RGB32).copy()


def fake_captures(width: int = 320, height: int = 200, name: str = "fake-0"):
    from app.capture import Capture, ScreenInfo

    screen = ScreenInfo(name, (0, 0, width, height), (0, 0, width, height), 1.0)
    return {name: Capture(screen, pattern_image(width, height))}


def make_selection(image: QImage | None = None, box=(10, 20, 60, 30), screen="fake-0"):
    from app.capture import crop
    from app.ui.selection_window import Selection

    source = image or pattern_image(320, 200)
    return Selection(screen, box, box, box, crop(source, box), time.perf_counter())


class FakeSession(QObject):
    """Records that a selection was started; the test emits `selected`/`cancelled` itself."""

    selected = Signal(object)
    cancelled = Signal()
    started: list[FakeSession] = []

    def __init__(self, captures, debug: bool = False):
        super().__init__()
        self.captures = captures
        self.debug = debug  # the geometry overlay, at -vv
        self.is_open = False

    def start(self):
        self.is_open = True
        FakeSession.started.append(self)

    def cancel(self):
        self.is_open = False
        self.cancelled.emit()

    def select(self, selection):
        self.is_open = False
        self.selected.emit(selection)
