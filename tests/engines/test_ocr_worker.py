"""The OCR worker: load states, newest request wins, failures then recovery, a real tiny checkpoint."""

from __future__ import annotations

import threading

import pytest
from appcore_fakes import FakeRecognizer, factory_for, pattern_image
from PySide6.QtGui import QColor, QImage

from app.engines.worker import OcrWorker
from app.platform.qt_images import qimage_to_pil


@pytest.fixture
def make_worker(qtbot):
    workers = []

    def make(recognizer=None, factory=None):
        worker = OcrWorker(
            {"model_dir": None, "variant": "v2.1", "device": "cpu", "precision": "auto"},
            factory=factory or factory_for(recognizer or FakeRecognizer()),
        )
        workers.append(worker)
        return worker

    yield make
    for worker in workers:
        worker.stop()


def test_loads_in_the_background_then_reads(qtbot, make_worker):
    rec = FakeRecognizer("テスト")
    worker = make_worker(rec)
    with qtbot.waitSignal(worker.ready, timeout=5000) as ready:
        worker.start()
    assert ready.args == ["cpu", "v2.1"]
    assert rec.warmed, "the worker warms the model up before saying ready"
    with qtbot.waitSignal(worker.finished, timeout=5000) as done:
        request_id = worker.submit(pattern_image(40, 20))
    rid, result = done.args
    assert rid == request_id
    assert result.text == "テスト" and result.token_ids == [5, 6, 7]
    assert result.device == "cpu" and result.variant == "v2.1" and result.ocr_ms >= 0
    assert result.image.size == (40, 20)  # the PIL image exactly as given to the model


def test_a_newer_request_supersedes_one_not_yet_started(qtbot, make_worker):
    rec = FakeRecognizer()
    rec.gate = threading.Event()
    worker = make_worker(rec)
    with qtbot.waitSignal(worker.ready, timeout=5000):
        worker.start()
    finished, superseded = [], []
    worker.finished.connect(lambda rid, result: finished.append(rid))
    worker.superseded.connect(superseded.append)
    first = worker.submit(pattern_image(10, 10))
    assert rec.started.wait(5), "the first request should be running"
    # WHEN three more arrive while the first is still being read
    second = worker.submit(pattern_image(11, 10))
    third = worker.submit(pattern_image(12, 10))
    fourth = worker.submit(pattern_image(13, 10))
    rec.gate.set()
    qtbot.waitUntil(lambda: len(finished) == 2, timeout=5000)
    # THEN the running one finishes, the waiting ones are dropped, only the newest runs next
    assert finished == [first, fourth]
    assert superseded == [second, third]
    assert rec.reads == [(10, 10), (13, 10)]


def test_a_failed_read_is_reported_and_the_worker_stays_usable(qtbot, make_worker):
    rec = FakeRecognizer("ok")
    rec.fail_next = [RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")]
    worker = make_worker(rec)
    with qtbot.waitSignal(worker.ready, timeout=5000):
        worker.start()
    with qtbot.waitSignal(worker.failed, timeout=5000) as failed:
        worker.submit(pattern_image(10, 10))
    assert "Out of memory" in failed.args[1]
    with qtbot.waitSignal(worker.finished, timeout=5000) as done:
        worker.submit(pattern_image(10, 10))
    assert done.args[1].text == "ok"


def test_missing_model_then_reload_recovers(qtbot, make_worker):
    factory = factory_for(
        FakeRecognizer("back"),
        missing_first="model folder /nowhere does not exist. Run `hayai model download`",
    )
    worker = make_worker(factory=factory)
    missing = []
    worker.model_missing.connect(missing.append)
    with qtbot.waitSignal(worker.error, timeout=5000) as error:
        worker.start()
    message, hint = error.args
    assert missing == [message]
    assert "/nowhere" in message and "hayai model download" in hint
    # a request meanwhile fails with a clear message instead of hanging
    with qtbot.waitSignal(worker.failed, timeout=5000) as failed:
        worker.submit(pattern_image(10, 10))
    assert "No model" in failed.args[1]
    # WHEN the model settings change THEN it loads again and reads
    with qtbot.waitSignal(worker.ready, timeout=5000):
        worker.reload(
            {"model_dir": "/somewhere", "variant": "v2.1", "device": "cpu", "precision": "auto"}
        )
    assert factory.calls[-1]["model_dir"] == "/somewhere"
    with qtbot.waitSignal(worker.finished, timeout=5000) as done:
        worker.submit(pattern_image(10, 10))
    assert done.args[1].text == "back"


def test_qimage_to_pil_keeps_every_pixel_with_odd_strides(qapp):
    image = pattern_image(13, 7)  # 13 px * 3 bytes is not a multiple of 4: padded rows
    pil = qimage_to_pil(image)
    assert pil.size == (13, 7) and pil.mode == "RGB"
    for x, y in ((0, 0), (12, 6), (5, 3)):
        c = QColor(image.pixel(x, y))
        assert pil.getpixel((x, y)) == (c.red(), c.green(), c.blue())
    argb = QImage(image).convertToFormat(QImage.Format.Format_ARGB32)
    assert qimage_to_pil(argb).tobytes() == pil.tobytes()


@pytest.mark.slow
def test_end_to_end_with_a_tiny_random_checkpoint(qtbot, tiny_v21):
    worker = OcrWorker(
        {"model_dir": str(tiny_v21), "variant": None, "device": "cpu", "precision": "exact"}
    )
    try:
        with qtbot.waitSignal(worker.ready, timeout=120_000) as ready:
            worker.start()
        assert ready.args[0] == "cpu"
        with qtbot.waitSignal(worker.finished, timeout=60_000) as done:
            worker.submit(pattern_image(64, 32), max_new_tokens=8)
        result = done.args[1]
        assert isinstance(result.text, str) and 0 < len(result.token_ids) <= 8
        assert set(result.timings) >= {"preprocess", "total"}
    finally:
        worker.stop()


def test_every_signal_is_emitted_on_the_gui_thread(qtbot, make_worker):
    """Listeners of any kind (lambdas, pytest-qt's waitSignal) run on the GUI thread, never beside the model:
    a direct call from the worker thread could quit a waiting event loop before it started, and hang it."""
    worker = make_worker(FakeRecognizer())
    threads = []
    for signal in (worker.loading, worker.ready, worker.busy, worker.finished):
        signal.connect(lambda *args: threads.append(threading.current_thread()))
    with qtbot.waitSignal(worker.ready, timeout=5000):
        worker.start()
    with qtbot.waitSignal(worker.finished, timeout=5000):
        worker.submit(pattern_image(20, 10))
    qtbot.waitUntil(lambda: len(threads) == 5, timeout=5000)  # loading, ready, busy ×2, finished
    assert set(threads) == {threading.main_thread()}


def test_load_errors_are_told_apart_by_class_not_by_name():
    from app.engines.worker import _error_hint
    from model.errors import ModelNotFoundError, TokenizerError

    # the engine's own classes (torch-free, model/errors.py)
    assert _error_hint(ModelNotFoundError("no weights"))[2] is True
    # a folder that was asked for (Settings, --model) is not "the download is missing"
    message, hint, missing = _error_hint(
        ModelNotFoundError("model folder /x does not exist."), "/x"
    )
    assert missing is False and "download" not in hint.lower()
    message, _, missing = _error_hint(TokenizerError("tokenizer.json lacks <eos>"))
    assert message.startswith("The model files cannot be used") and missing is False

    # a look-alike that merely shares the name is not the engine's "model missing"
    class ModelNotFoundError(Exception):  # the point is the name
        pass

    assert _error_hint(ModelNotFoundError("elsewhere"))[2] is False
