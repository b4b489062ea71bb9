"""Images from outside the screen (issue #21, items 6, 8, 10): the watched folder queues every new
file in order, waits for a file to be complete, retries a failed read and refuses links out of the
folder; the clipboard's images go through model/images.py, checked from the header and decoded off
the GUI thread."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
import wired_app
from hostile_files import png_bomb, rle_bmp
from PIL import Image
from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication

from app.reading.channels import folder as watched_folder
from app.reading.channels.clipboard import ClipboardImages
from app.reading.channels.folder import MAX_ATTEMPTS, FolderImages

env, make_app = wired_app.env, wired_app.make_app

pytestmark = pytest.mark.gui


def png_bytes(width: int, height: int, colour="white") -> bytes:
    import io

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "PNG")
    return buffer.getvalue()


class Reader:
    """Stands in for the app: takes each image the folder sends and answers once it is 'read'."""

    def __init__(self, folder: FolderImages, ok=lambda name: True):
        self.names: list[str] = []
        self.widths: list[int] = []
        self.failed: list[tuple[str, str]] = []
        self.counts: list[int] = []
        folder.image.connect(self._on_image)
        folder.failed.connect(lambda path, message: self.failed.append((Path(path).name, message)))
        folder.waiting.connect(self.counts.append)
        self.folder, self.ok = folder, ok

    def _on_image(self, image, path: str) -> None:
        name = Path(path).name
        self.names.append(name)
        self.widths.append(image.width())
        self.folder.read_done(self.ok(name))


def test_five_files_moved_in_together_give_five_reads_in_order(qtbot, tmp_path):
    folder_path = tmp_path / "shots"
    folder_path.mkdir()
    outside = tmp_path / "staging"
    outside.mkdir()
    for i in range(5):
        (outside / f"page{i}.png").write_bytes(png_bytes(40 + i, 20))
    folder = FolderImages(str(folder_path))
    reader = Reader(folder)
    # one image at a time: the reader answers after the first only once all five are queued
    first = []
    folder.image.disconnect()
    folder.image.connect(lambda image, path: first.append((image, path)))
    for i in range(5):
        os.rename(outside / f"page{i}.png", folder_path / f"page{i}.png")
    qtbot.waitUntil(lambda: len(first) == 1, timeout=5000)
    qtbot.waitUntil(lambda: folder.queued == 5, timeout=5000)
    assert 5 in reader.counts  # the count the tray and the window show
    qtbot.wait(300)
    assert len(first) == 1  # the next waits for the first to be read (the worker keeps one)
    folder.image.disconnect()
    folder.image.connect(reader._on_image)
    reader._on_image(*first[0])
    qtbot.waitUntil(lambda: len(reader.names) == 5, timeout=10000)
    assert reader.names == [f"page{i}.png" for i in range(5)]
    assert reader.widths == [40 + i for i in range(5)]
    qtbot.waitUntil(lambda: reader.counts[-1] == 0, timeout=3000)
    assert not reader.failed
    folder.close()


def test_a_file_written_slowly_is_read_once_complete(qtbot, tmp_path):
    folder = FolderImages(str(tmp_path))
    reader = Reader(folder)
    import io

    import numpy as np

    noise = np.random.default_rng(0).integers(0, 256, (200, 300, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noise).save(buffer, "PNG")
    data = buffer.getvalue()  # ~180 kB: eight writes 0.15 s apart

    def write_slowly():
        with open(tmp_path / "slow.png", "wb") as f:
            for i in range(0, len(data), len(data) // 8 + 1):
                f.write(data[i : i + len(data) // 8 + 1])
                f.flush()
                time.sleep(0.15)  # under the settle time: the size keeps changing

    writer = threading.Thread(target=write_slowly)
    writer.start()
    qtbot.waitUntil(lambda: not writer.is_alive(), timeout=10000)
    qtbot.waitUntil(lambda: reader.names == ["slow.png"], timeout=5000)
    qtbot.wait(500)
    assert reader.names == ["slow.png"] and reader.widths == [300]  # once, and whole
    assert not reader.failed
    folder.close()


def test_a_failed_read_is_tried_again_not_taken_as_seen(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(watched_folder, "RETRY_MS", 200)
    folder = FolderImages(str(tmp_path))
    reader = Reader(folder)
    data = png_bytes(120, 80, "gray")
    # a writer that stops half way for longer than the settle time: the first read is truncated
    (tmp_path / "paused.png").write_bytes(data[: len(data) // 2])
    qtbot.wait(watched_folder.SETTLE_MS * 3)
    (tmp_path / "paused.png").write_bytes(data)
    qtbot.waitUntil(lambda: reader.names == ["paused.png"], timeout=8000)
    assert reader.widths == [120] and not reader.failed
    # a read the model could not do is retried too; after MAX_ATTEMPTS it is reported once
    failing = FolderImages(str(tmp_path))
    reader2 = Reader(failing, ok=lambda name: False)
    (tmp_path / "again.png").write_bytes(png_bytes(50, 20))
    qtbot.waitUntil(lambda: len(reader2.failed) == 1, timeout=10000)
    assert reader2.names == ["again.png"] * MAX_ATTEMPTS
    qtbot.wait(500)
    assert len(reader2.failed) == 1
    folder.close()
    failing.close()


def test_an_empty_file_gets_the_message_every_unreadable_file_gets(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(watched_folder, "RETRY_MS", 50)
    folder = FolderImages(str(tmp_path))
    reader = Reader(folder)
    (tmp_path / "blank.png").write_bytes(b"")  # a screenshot tool that wrote nothing
    (tmp_path / "text.png").write_bytes(b"not an image")
    qtbot.waitUntil(lambda: len(reader.failed) == 2, timeout=10000)
    # the app's title says "Cannot read an image": the message names the file and what is wrong
    assert sorted(reader.failed) == [
        ("blank.png", f"{tmp_path / 'blank.png'}: the file is empty"),
        (
            "text.png",
            f"{tmp_path / 'text.png'}: not a supported image format (supported: "
            "PNG, JPEG, WebP, BMP, GIF, TIFF)",
        ),
    ]
    assert reader.names == []
    folder.close()


def test_the_queue_is_bounded_and_the_rest_waits_on_disk(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(watched_folder, "MAX_QUEUE", 2)
    folder = FolderImages(str(tmp_path))
    held = []
    folder.image.connect(lambda image, path: held.append(Path(path).name))
    for i in range(5):
        (tmp_path / f"n{i}.png").write_bytes(png_bytes(30, 10))
    qtbot.waitUntil(lambda: held == ["n0.png"], timeout=5000)
    qtbot.wait(600)
    assert folder.queued == 3  # the one being read and two queued; the others are still on disk
    for _ in range(4):
        count = len(held)
        folder.read_done(True)
        qtbot.waitUntil(lambda c=count: len(held) == c + 1, timeout=5000)
    assert held == [f"n{i}.png" for i in range(5)]
    folder.close()


def test_a_link_to_a_file_outside_the_folder_is_refused(qtbot, tmp_path):
    watched = tmp_path / "watched"
    watched.mkdir()
    secret = tmp_path / "secret.png"
    secret.write_bytes(png_bytes(64, 64))
    (watched / "inside.png").write_bytes(png_bytes(33, 10))
    folder = FolderImages(str(watched))
    reader = Reader(folder)
    os.symlink(secret, watched / "link.png")
    os.symlink(watched / "inside.png", watched / "alias.png")  # a link that stays inside: read
    qtbot.waitUntil(lambda: bool(reader.failed and reader.names), timeout=5000)
    qtbot.wait(500)
    assert reader.names == ["alias.png"]
    assert [name for name, _ in reader.failed] == ["link.png"]
    assert "outside the watched folder" in reader.failed[0][1]
    folder.close()
    # the setting "Follow links out of the folder" reads it
    following = FolderImages(str(watched), follow_links=True)
    reader = Reader(following)
    os.symlink(secret, watched / "link2.png")
    qtbot.waitUntil(lambda: reader.names == ["link2.png"], timeout=5000)
    assert reader.widths == [64] and not reader.failed
    following.close()


# --- the clipboard ---------------------------------------------------------------------------------


def put_on_clipboard(fmt: str, data: bytes) -> None:
    mime = QMimeData()
    mime.setData(fmt, data)
    QGuiApplication.clipboard().setMimeData(mime)


def test_a_49_megapixel_clipboard_png_is_refused_from_its_header(qtbot, monkeypatch):
    from PIL import ImageFile

    decoded = []  # pixels decoded
    real = ImageFile.ImageFile.load
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda *a: decoded.append(1) or real(*a))
    watcher = ClipboardImages()
    images, failed = [], []
    watcher.image.connect(images.append)
    watcher.failed.connect(failed.append)
    with qtbot.waitSignal(watcher.failed, timeout=3000):
        put_on_clipboard("image/png", png_bomb(7000, 7000))
    assert "7000×7000" in failed[0] and "megapixels" in failed[0]
    assert not images and not decoded  # refused before any pixel was decoded
    watcher.close()


def test_clipboard_bytes_over_the_file_limit_are_refused(qtbot, monkeypatch):
    import model.images

    monkeypatch.setattr(model.images, "MAX_FILE_BYTES", 1000)
    watcher = ClipboardImages()
    failed = []
    watcher.failed.connect(failed.append)
    with qtbot.waitSignal(watcher.failed, timeout=3000):
        put_on_clipboard("image/png", png_bytes(64, 64) + b"\0" * 2000)
    assert "are not read" in failed[0]
    watcher.close()


def test_an_rle_bmp_on_the_clipboard_is_capped(qtbot):
    watcher = ClipboardImages()
    failed = []
    watcher.failed.connect(failed.append)
    with qtbot.waitSignal(watcher.failed, timeout=3000):
        put_on_clipboard("image/bmp", rle_bmp())
    assert "RLE-compressed BMP" in failed[0]
    watcher.close()


def test_a_clipboard_png_is_decoded_off_the_gui_thread_through_the_loader(qtbot, monkeypatch):
    import model.images

    threads = []
    real = model.images.open_image

    def spy(source, *args, **kwargs):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(source, *args, **kwargs)

    monkeypatch.setattr(model.images, "open_image", spy)
    watcher = ClipboardImages()
    images = []
    watcher.image.connect(images.append)
    with qtbot.waitSignal(watcher.image, timeout=5000):
        put_on_clipboard("image/png", png_bytes(321, 77, "red"))
    assert images[0].width() == 321 and images[0].height() == 77
    assert threads == [False]
    put_on_clipboard("image/png", png_bytes(321, 77, "red"))  # the same bytes again: once
    qtbot.wait(200)
    assert len(images) == 1
    watcher.close()


# --- in the app --------------------------------------------------------------------------------


def test_the_app_reads_every_image_moved_into_the_folder_in_order(make_app, qtbot, tmp_path):
    from appcore_fakes import FakeRecognizer

    from app.settings import Settings

    watched = tmp_path / "watched"
    watched.mkdir()
    staging = tmp_path / "staging"
    staging.mkdir()
    for i in range(5):
        (staging / f"p{i}.png").write_bytes(png_bytes(100 + 10 * i, 30))
    settings = Settings()
    settings.update({"reading/folder": str(watched), "output/auto_copy": False})
    recognizer = FakeRecognizer("読んだ", delay_s=0.2)  # slower than the files arrive
    app = make_app(recognizer, settings=settings)
    counts = []
    app.channels.folder_waiting.connect(counts.append)
    for i in range(5):
        os.rename(staging / f"p{i}.png", watched / f"p{i}.png")
    qtbot.waitUntil(lambda: len(recognizer.reads) == 5, timeout=20000)
    assert [w for w, _ in recognizer.reads] == [100 + 10 * i for i in range(5)]
    qtbot.waitUntil(lambda: len(app.history.entries()) == 5, timeout=5000)
    assert {e.source for e in app.history.entries()} == {"folder"}
    qtbot.waitUntil(lambda: counts[-1] == 0, timeout=3000)
    assert max(counts) >= 4
    line = app.window.entries["folder_waiting"]  # the no-tray window's line follows the count
    assert line.isHidden()
    app.channels.folder_waiting.emit(3)
    assert not line.isHidden() and line.text() == "Watched folder: 3 images to read"


def test_the_app_holds_a_folder_image_to_its_models_cap_in_the_words_of_hayai_ocr(
    make_app, qtbot, tmp_path, tiny_v21, monkeypatch
):
    from app.settings import Settings

    monkeypatch.setattr(watched_folder, "RETRY_MS", 50)
    watched = tmp_path / "watched"
    watched.mkdir()
    settings = Settings()
    settings.update({"reading/folder": str(watched), "model/folder": str(tiny_v21)})
    app = make_app(settings=settings)
    told = []
    app.toast.show_message = lambda title, message, error=False: told.append((title, message))
    # GIVEN a page 1 px taller than the v2.1 model's cap (4096×4096) WHEN it lands in the folder
    over = watched / "over.png"
    over.write_bytes(png_bomb(4096, 4097))
    qtbot.waitUntil(lambda: bool(told), timeout=10000)
    # THEN the app refuses it as `hayai ocr` and `hayai page` do (tests/model/test_image_cap.py)
    assert told == [
        (
            "Cannot read an image",
            f"{over}: the PNG image declares 4096×4097 pixels (16.8 megapixels); the model can "
            "use at most 16.8 megapixels (256 patches of 16×16 px, shrunk at most 16× per side): "
            "shrink or crop it first",
        )
    ]


def test_the_models_cap_is_read_off_the_gui_thread_for_every_image_in(
    make_app, qtbot, tmp_path, tiny_v21, monkeypatch
):
    from appcore_fakes import FakeRecognizer

    import app.engines.choice
    from app.settings import Settings

    # the cap of a model folder comes from its config.json and its weights' header: disk
    real, on_gui = app.engines.choice.declared_cap, []

    def spy(*args):
        on_gui.append(threading.current_thread() is threading.main_thread())
        return real(*args)

    monkeypatch.setattr(app.engines.choice, "declared_cap", spy)
    watched = tmp_path / "watched"
    watched.mkdir()
    settings = Settings()
    settings.update(
        {
            "reading/folder": str(watched),
            "reading/clipboard_images": True,
            "model/folder": str(tiny_v21),
            "output/auto_copy": False,
        }
    )
    recognizer = FakeRecognizer("読んだ")
    app = make_app(recognizer, settings=settings)
    # WHEN an image comes from the folder, as a PNG on the clipboard and as pixels put there
    (watched / "p.png").write_bytes(png_bytes(110, 30))
    qtbot.waitUntil(lambda: len(recognizer.reads) == 1, timeout=10000)
    put_on_clipboard("image/png", png_bytes(120, 30))
    qtbot.waitUntil(lambda: len(recognizer.reads) == 2, timeout=10000)
    QGuiApplication.clipboard().setImage(white_qimage(130, 30))
    qtbot.waitUntil(lambda: len(recognizer.reads) == 3, timeout=10000)
    # THEN each was held to the model's cap, read on the decoder's thread, never the GUI's
    assert [w for w, _ in recognizer.reads] == [110, 120, 130]
    assert on_gui == [False, False, False]
    app.channels.close()


def white_qimage(width: int, height: int):
    from PySide6.QtGui import QColor, QImage

    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    return image


def test_clipboard_images_in_quick_succession_are_decoded_one_at_a_time(qtbot, monkeypatch):
    import model.images

    real = model.images.open_image
    running, most = [0], [0]

    def slow(source, *args, **kwargs):
        running[0] += 1
        most[0] = max(most[0], running[0])
        time.sleep(0.3)
        try:
            return real(source, *args, **kwargs)
        finally:
            running[0] -= 1

    monkeypatch.setattr(model.images, "open_image", slow)
    watcher = ClipboardImages()
    widths = []
    watcher.image.connect(lambda image: widths.append(image.width()))
    for width in (101, 102, 103, 104):
        put_on_clipboard("image/png", png_bytes(width, 20))
        qtbot.wait(20)
    qtbot.waitUntil(lambda: bool(widths) and widths[-1] == 104, timeout=5000)
    qtbot.wait(400)
    assert most[0] == 1  # never two large decodes at once
    assert (
        widths[0] == 101 and widths[-1] == 104 and len(widths) <= 3
    )  # the newest waits, others drop
    watcher.close()


def test_a_read_superseded_by_the_users_own_is_tried_again_without_counting(
    qtbot, tmp_path, monkeypatch
):
    monkeypatch.setattr(watched_folder, "RETRY_MS", 50)
    folder = FolderImages(str(tmp_path))
    sent, failed = [], []
    folder.failed.connect(lambda path, message: failed.append(message))

    def answer(image, path):
        sent.append(Path(path).name)
        if len(sent) <= MAX_ATTEMPTS + 1:
            folder.read_done(False, superseded=True)  # the user boxed a region meanwhile
        else:
            folder.read_done(True)

    folder.image.connect(answer)
    (tmp_path / "wait.png").write_bytes(png_bytes(20, 20))
    qtbot.waitUntil(lambda: len(sent) == MAX_ATTEMPTS + 2, timeout=15000)
    qtbot.wait(400)
    assert not failed and len(sent) == MAX_ATTEMPTS + 2  # read in the end, then never again
    folder.close()
