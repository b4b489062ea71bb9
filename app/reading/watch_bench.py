"""`hayai bench --watch [--runs N] [--load N] [engine options]`: what a watched region costs, on a
real screen.

A small window of its own (a dialogue line drawn with Qt) is put on the screen and watched at the
default interval through the real capture (`grab_box`), change detection and OCR worker:
- idle: the region stays the same for 10 s; the process's CPU time over that wall time is the
  share of one core watching costs (the event loop included);
- change → text: the line is redrawn `--runs` times; each time from the redraw to the new text
  arriving on the GUI thread (at most two intervals of detection + settling, plus the model), and
  how many reads the changes took (one each: no change missed or read twice);
- the same under load: `--load` busy processes (default 2) keep the cores busy, as a game does;
  the report says how much CPU they took meanwhile, and the bench fails if one ended early.
Needs a desktop the capture can read (X11, Windows, macOS; under Xvfb in CI), not Qt's offscreen.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import statistics
import sys
import time

IDLE_S = 10.0
REGION = (40, 40, 720, 120)  # where the bench's line window goes (logical px of the first screen)


def main(args) -> int:
    from app.engines.local import bench_model_dir, recognizer_options

    options = recognizer_options(args)
    try:
        with bench_model_dir(args) as model_dir:
            report = run({**options, "model_dir": model_dir}, max(1, args.runs), args.load)
    except (RuntimeError, ValueError, OSError) as exc:
        print(f"hayai bench --watch: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report))
        return 0
    idle = report["idle"]
    print(
        f"watched region {report['region']} every {report['interval_ms']} ms "
        f"({report['qt_platform']}, {report['device']})"
    )
    print(
        f"  idle: {idle['cpu_percent_of_one_core']:.2f} % of one core over {idle['wall_s']:.0f} s "
        f"({idle['ticks']} ticks, {idle['tick_ms']:.2f} ms each, {idle['reads']} reads)"
    )
    for name, changes in (("unloaded", report["changes"]), ("loaded", report.get("loaded"))):
        if changes is None:
            continue
        lat, share = changes["change_to_text_ms"], changes["watch_share_ms"]
        busy = (
            f" ({changes['busy_processes']} busy processes, each "
            f"{changes['busy_cpu_percent']:.0f} % of a core meanwhile)"
            if name == "loaded"
            else ""
        )
        print(
            f"  change → text, {name}{busy}: median {lat['median']:.0f} ms, max {lat['max']:.0f} ms "
            f"over {changes['runs']} changes in {changes['reads']} reads; of it the model median "
            f"{changes['model_ms']['median']:.0f} ms, detection + settling median "
            f"{share['median']:.0f} ms, max {share['max']:.0f} ms"
        )
    return 0


def run(options: dict, runs: int, load: int = 0) -> dict:
    """Watch the bench's line window through the real capture and worker: the idle cost, then
    `runs` changes from redraw to text, then `runs` more with `load` busy processes (0: none)."""
    from PySide6.QtWidgets import QApplication

    from app.engines.worker import OcrWorker
    from app.settings.table import BY_KEY

    _app = QApplication.instance() or QApplication([])  # kept alive for the whole measurement
    if QApplication.platformName() in ("offscreen", "minimal"):
        raise RuntimeError("needs a real screen to capture (run it on the desktop or under Xvfb)")
    interval_ms = BY_KEY["reading/watch_interval_ms"].default
    assert isinstance(interval_ms, int)
    line = _line_window()
    worker = OcrWorker(options)
    sink = _sink(worker)
    worker.start()
    watcher = None
    loaded = None
    try:
        _, device = sink.wait(1)
        _pump(0.5)  # the window is mapped and painted
        desktop = _desktop_box(line.geometry())
        watcher = _watch(desktop, worker, interval_ms)
        sink.wait(2)  # the first read of the line
        _pump(interval_ms / 1000 * 2)
        idle = _idle(watcher)
        changes = _changes(line, sink, watcher, range(runs), interval_ms)
        if load:
            with cpu_load(load) as busy:
                _pump(1.0)  # the cores are taken
                cpu, wall = busy.cpu_s(), time.perf_counter()
                measured = _changes(line, sink, watcher, range(runs, 2 * runs), interval_ms)
                busy.check()  # they ran through it
                share = (busy.cpu_s() - cpu) / (time.perf_counter() - wall) / load
                loaded = {
                    "busy_processes": load,
                    "busy_cpu_percent": round(100 * share, 1),  # each, of one core
                    **measured,
                }
    finally:
        if watcher is not None:
            watcher.stop()
        worker.stop()
        line.close()
    return {
        "region": list(desktop),
        "interval_ms": interval_ms,
        "device": device,
        "qt_platform": QApplication.platformName(),
        "display": os.environ.get("DISPLAY", ""),
        "idle": idle,
        "changes": changes,
        "loaded": loaded,
    }


STARTED_S = 60.0  # how long busy processes may take to start spinning (a loaded CPU is slow)


def _spin(cpu_s) -> None:
    """A busy process: spins on the CPU, noting its CPU time in `cpu_s` as it goes."""
    while True:
        for _ in range(100_000):
            pass
        cpu_s.value = time.process_time()


class CpuLoad:
    """Busy processes, started by multiprocessing's spawn (as `sys.executable -c` cannot be in the
    PyInstaller bundle, where sys.executable is hayai itself; packaging/entry.py calls
    `multiprocessing.freeze_support()`), each telling the CPU time it has taken."""

    def __init__(self, processes: int):
        spawn = multiprocessing.get_context("spawn")
        self._cpu = [spawn.RawValue("d", 0.0) for _ in range(processes)]
        self._processes = [
            spawn.Process(target=_spin, args=(cpu,), name="hayai-bench-load", daemon=True)
            for cpu in self._cpu
        ]
        for process in self._processes:
            process.start()

    def cpu_s(self) -> float:
        """The CPU seconds they have taken so far, together."""
        return sum(cpu.value for cpu in self._cpu)

    def check(self) -> None:
        """RuntimeError unless every one is still running."""
        for process in self._processes:
            if not process.is_alive():
                raise RuntimeError(
                    f"a busy process ended (exit code {process.exitcode}): the load was not there"
                )

    def wait_started(self) -> None:
        """Until each one spins (RuntimeError if one ends or does not start in STARTED_S)."""
        deadline = time.monotonic() + STARTED_S
        while not all(cpu.value > 0 for cpu in self._cpu):
            self.check()
            if time.monotonic() > deadline:
                raise RuntimeError(f"the busy processes did not start in {STARTED_S:.0f} s")
            time.sleep(0.05)

    def stop(self) -> None:
        for process in self._processes:
            process.kill()
            process.join()


@contextlib.contextmanager
def cpu_load(processes: int):
    """`processes` other programs spinning on the CPU (as a game keeps the cores busy) meanwhile,
    spinning by the time this is entered: a `CpuLoad`."""
    busy = CpuLoad(processes)
    try:
        busy.wait_started()
        yield busy
    finally:
        busy.stop()


def _line_window():
    """The bench's own window: one dialogue line drawn with Qt (`.text`, then `repaint()`)."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QColor, QFont, QPainter
    from PySide6.QtWidgets import QWidget

    from app.ui.guard import qt_override

    class Line(QWidget):
        def __init__(self):
            super().__init__(None, Qt.WindowType.FramelessWindowHint | Qt.WindowType.Tool)
            self.text = "…"
            self.setGeometry(QRect(*REGION))

        @qt_override
        def paintEvent(self, event):
            p = QPainter(self)
            p.fillRect(self.rect(), QColor(250, 250, 250))
            p.setPen(QColor(10, 10, 10))
            p.setFont(QFont("Noto Sans CJK JP", 28))
            p.drawText(self.rect().adjusted(16, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, self.text)
            p.end()

    line = Line()
    line.show()
    return line


def _sink(worker):
    """What the worker reports, collected on the GUI thread: `wait(n)` runs the event loop until
    the n-th result (("ready", device) first, then (arrival time, result)) or an error."""
    from PySide6.QtCore import QEventLoop, QObject, QTimer, Slot

    class Sink(QObject):
        def __init__(self):
            super().__init__()
            self.loop = QEventLoop()
            self.results: list = []
            self.errors: list = []

        @Slot(str, str)
        def ready(self, device, variant):
            self.results.append(("ready", device))
            self.loop.quit()

        @Slot(str, str)
        def error(self, message, hint):
            self.errors.append(message)
            self.loop.quit()

        @Slot(int, object)
        def finished(self, request_id, result):
            self.results.append((time.perf_counter(), result))
            self.loop.quit()

        @Slot(int, str)
        def failed(self, request_id, message):
            self.errors.append(message)
            self.loop.quit()

        def wait(self, count: int, timeout_s: float = 300.0):
            deadline = time.perf_counter() + timeout_s
            while len(self.results) < count and not self.errors:
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"no result within {timeout_s:.0f} s")
                QTimer.singleShot(50, self.loop.quit)
                self.loop.exec()
            if self.errors:
                raise RuntimeError(self.errors[0])
            return self.results[count - 1]

    sink = Sink()
    worker.ready.connect(sink.ready)
    worker.error.connect(sink.error)
    worker.finished.connect(sink.finished)
    worker.failed.connect(sink.failed)
    return sink


def _pump(seconds: float) -> None:
    """Run the event loop for `seconds`, idle as the app's own (no polling of ours)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(round(seconds * 1000), loop.quit)
    loop.exec()


def _desktop_box(g) -> tuple[int, int, int, int]:
    """The window's geometry `g` (logical px of the first screen) in desktop pixels."""
    from app.capture import qt_screens

    first = qt_screens()[0]
    scale = first.physical[2] / max(1, first.logical[2])
    return (
        round(first.physical[0] + (g.x() - first.logical[0]) * scale),
        round(first.physical[1] + (g.y() - first.logical[1]) * scale),
        round(g.width() * scale),
        round(g.height() * scale),
    )


def _watch(desktop: tuple[int, int, int, int], worker, interval_ms: int):
    """A started RegionWatcher on `desktop` (its frame hidden) whose reads go to `worker`."""
    from app.capture import grab_box, qt_screens
    from app.reading.watch import RegionWatcher, locate

    name, box, logical = locate(desktop, qt_screens())

    class Region:
        screen_name, box_image_px, box_desktop_px, logical_rect = name, box, desktop, logical

    watcher = RegionWatcher(
        Region, interval_ms, grab=lambda: grab_box(name, box, desktop), covered=lambda: False
    )
    watcher.frame.hide()
    watcher.read_due.connect(lambda image: worker.submit(image))
    worker.finished.connect(lambda rid, result: watcher.read_done(result.text))
    watcher.start()
    watcher.frame.hide()
    return watcher


def _idle(watcher) -> dict:
    """IDLE_S of an unchanged region: the process's CPU time over the wall time, and the ticks."""
    ticks0, tick_ms0, reads0 = watcher.ticks, watcher.tick_ms, watcher.reads
    cpu0, wall0 = time.process_time(), time.perf_counter()
    _pump(IDLE_S)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    idle_ticks = watcher.ticks - ticks0
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 3),
        "cpu_percent_of_one_core": round(100 * cpu / wall, 2),
        "ticks": idle_ticks,
        "tick_ms": round((watcher.tick_ms - tick_ms0) / max(1, idle_ticks), 3),
        "reads": watcher.reads - reads0,
    }


def _changes(line, sink, watcher, numbers: range, interval_ms: int) -> dict:
    """The line redrawn once for each of `numbers`: per change, ms from the redraw to the text on
    the GUI thread, the model's share of it and the rest (detection and settling); and the reads
    they took (as many as changes: none missed, none read twice)."""
    latencies, model_ms, watch_ms = [], [], []
    reads = watcher.reads
    for i in numbers:
        count = len(sink.results)
        line.text = f"第{i + 1}行：今日はいい天気ですね。" if i % 2 else f"{i + 1}番目の台詞です。"
        line.repaint()
        changed = time.perf_counter()
        at, result = sink.wait(count + 1)
        latencies.append((at - changed) * 1000)
        model_ms.append(result.ocr_ms)
        watch_ms.append((at - changed) * 1000 - result.ocr_ms)
        _pump(interval_ms / 1000 * 2)
    return {
        "runs": len(numbers),
        "reads": watcher.reads - reads,
        "change_to_text_ms": {"median": statistics.median(latencies), "max": max(latencies)},
        "model_ms": {"median": statistics.median(model_ms)},
        "watch_share_ms": {"median": statistics.median(watch_ms), "max": max(watch_ms)},
    }
