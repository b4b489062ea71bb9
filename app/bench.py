"""`hayai bench --app [--runs N] [--json]`: what the tray app adds to the model's own time.

Two things a user feels, measured on the real worker thread and the real overlay:
- start-up: the longest GUI-thread stall while the worker imports torch and loads the weights, in a
  fresh interpreter as when the tray starts (a 10 ms GUI timer; its longest gap is the stall);
- each read: from handing a crop to the worker to the text painted in the overlay, minus the model's
  time, hop by hop (queue, worker beside the model, hand-over to the GUI thread, paint).
The selection window's own hop (mouse release to crop submitted) is logged by the app on every real
capture (`hayai -v`); it needs a person or xdotool to drag a box, so it is not part of this bench.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import sys
import time

# Only `hayai bench --app` imports this module, so Qt is imported at the top as everywhere in app/ui.
from PySide6.QtCore import QEventLoop, QObject, QRect, QTimer, Slot, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from app.engines.worker import OcrWorker
from app.ui.overlay import Overlay

PROBE_S = 900  # how long the start-up probe may take (a model load on a slow machine)


def startup_stall(options: dict) -> dict:
    """The longest GUI stall during a model load in a fresh interpreter (torch not yet imported):
    a process started by multiprocessing's spawn, which works from the source and in the
    PyInstaller bundle alike (`sys.executable -c` does not there: sys.executable is hayai itself;
    packaging/entry.py calls `multiprocessing.freeze_support()`)."""
    from app.startup_stall import probe

    spawn = multiprocessing.get_context("spawn")
    answers, reply = spawn.Pipe(duplex=False)
    process = spawn.Process(target=probe, args=(options, reply), name="hayai-bench-startup")
    process.start()
    reply.close()  # the child's end: the pipe reads as closed once the child is gone
    try:
        if not answers.poll(PROBE_S):
            raise RuntimeError(f"the start-up probe did not answer in {PROBE_S} s")
        report = answers.recv()
    except EOFError:
        process.join()
        raise RuntimeError(
            f"the start-up probe ended (exit code {process.exitcode}) without a report"
        ) from None
    finally:
        if process.is_alive():
            process.join(10)
        if process.is_alive():
            process.kill()
            process.join()
    if not report["ready"]:
        raise RuntimeError(report["error"])
    return report


class Recorder(QObject):
    """Stamps each signal when it reaches the GUI thread; wait() runs the event loop until one came."""

    def __init__(self):
        super().__init__()
        self.events: dict[str, tuple[float, tuple]] = {}
        self.loop = QEventLoop()

    def _note(self, key: str, *values) -> None:
        self.events[key] = (time.perf_counter(), values)
        self.loop.quit()

    @Slot(str, str)
    def ready(self, device, variant):
        self._note("ready", device, variant)

    @Slot(str, str)
    def error(self, message, hint):
        self._note("error", message)

    @Slot(int, str)
    def failed(self, request_id, message):
        self._note("error", message)

    @Slot(int, object)
    def finished(self, request_id, result):
        self._note("finished", request_id, result)

    @Slot(float)
    def painted(self, at):
        self._note("painted", at)

    def wait(self, key: str, timeout_s: float = 600.0):
        deadline = time.perf_counter() + timeout_s
        while key not in self.events and "error" not in self.events:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"no '{key}' within {timeout_s:.0f} s")
            QTimer.singleShot(100, self.loop.quit)
            self.loop.exec()
        if "error" in self.events:
            raise RuntimeError(self.events["error"][1][0])
        return self.events.pop(key)


def _quiet_offscreen_warnings() -> None:
    """The offscreen platform warns on every show() that it cannot raise a window; that is noise here."""
    previous = None

    def handler(mode, context, message):
        if not message.startswith("This plugin does not support"):
            (previous or (lambda m, c, text: print(text, file=sys.stderr)))(mode, context, message)

    previous = qInstallMessageHandler(handler)


def read_overhead(options: dict, image_path: str, runs: int) -> dict:
    """Submit the crop `runs` times through OcrWorker and the Overlay; the app's share of each read."""
    _app = QApplication.instance() or QApplication([])  # kept alive for the whole measurement
    _quiet_offscreen_warnings()
    from app.platform.qt_images import pil_to_qimage
    from model.config import declared_cap
    from model.images import open_image

    cap = declared_cap(options.get("model_dir"), options.get("variant"))
    try:
        crop = pil_to_qimage(
            open_image(image_path, cap)
        )  # the one safe loader, as `hayai ocr` uses
    except ValueError as exc:  # ImageError: one sentence
        raise ValueError(f"cannot read {image_path}: {exc}") from None
    worker = OcrWorker(options)
    overlay = Overlay()
    overlay.set_anchor(QRect(100, 100, crop.width(), crop.height()), QRect(0, 0, 1920, 1080))
    overlay.prepare()
    recorder = Recorder()
    worker.ready.connect(recorder.ready)  # a QObject receiver: queued to this thread, as in the app
    worker.error.connect(recorder.error)
    worker.failed.connect(recorder.failed)
    worker.finished.connect(recorder.finished)
    overlay.text_painted.connect(recorder.painted)
    wait = recorder.wait
    samples: dict[str, list[float]] = {}  # ms per run: each hop, the app's whole share, the model
    try:
        worker.start()
        wait("ready")
        for _ in range(max(1, runs)):
            overlay.show_reading()
            submitted = time.perf_counter()
            worker.submit(crop)
            arrived, (_, result) = wait("finished")
            overlay.show_result(result.text, "bench")
            painted, _ = wait("painted", 10.0)
            hops = {
                **result.hops_ms(submitted, arrived, painted),
                "app total": (painted - submitted) * 1000 - result.ocr_ms,
                "model": result.ocr_ms,
            }
            for name, ms in hops.items():
                samples.setdefault(name, []).append(ms)
            overlay.hide()
    finally:
        worker.stop()
        overlay.close()
    return {name: round(statistics.median(values), 2) for name, values in samples.items()}


def run(options: dict, image_path: str, runs: int) -> dict:
    return {
        "startup": startup_stall(options),
        "read_ms": read_overhead(options, image_path, runs),
        "runs": runs,
        "qt_platform": os.environ.get("QT_QPA_PLATFORM", "native"),
    }


def main(args) -> int:
    """Engine options as for `hayai bench`; --random-weights writes a real-size random checkpoint first."""
    import resources
    from app.engines.local import bench_model_dir, recognizer_options

    options = recognizer_options(args)
    image = args.image or str(resources.path(resources.SAMPLE_HORIZONTAL))
    try:
        with bench_model_dir(args) as model_dir:
            report = run({**options, "model_dir": model_dir}, image, args.runs)
    except (RuntimeError, ValueError, OSError) as exc:
        print(f"hayai bench --app: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report))
        return 0
    start = report["startup"]
    print(
        f"start-up:  longest GUI stall {start['max_gap_ms']:.0f} ms while torch and the weights loaded "
        f"({start['load_s']:.1f} s, {start.get('device', '?')})"
    )
    reads = report["read_ms"]
    print(
        f"each read: the app adds {reads['app total']} ms to the model's {reads['model']} ms "
        f"(median of {report['runs']})"
    )
    for name in ("queue", "worker beside the model", "hand-over", "result→painted"):
        print(f"  {name:24} {reads[name]} ms")
    return 0
