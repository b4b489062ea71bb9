"""Text out (WebSocket with a real client, a text file) and images in (clipboard, a folder):
app/reading/channels/ alone and wired into the app."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest
import wired_app
from PIL import Image
from PySide6.QtGui import QColor, QGuiApplication, QImage
from websockets.sync.client import connect

from app.cli import build_parser
from app.reading.address import parse_address
from app.reading.channels.clipboard import ClipboardImages
from app.reading.channels.folder import FolderImages
from app.reading.channels.image_decoder import open_image_file
from app.reading.channels.log_file import TextLogFile
from app.reading.channels.websocket import WebSocketServer
from app.settings import Settings, overrides_from_args

env, make_app = wired_app.env, wired_app.make_app

pytestmark = pytest.mark.gui


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_addresses_default_to_loopback_and_bad_ones_are_refused():
    assert parse_address("6677") == ("127.0.0.1", 6677)
    assert parse_address("0.0.0.0:9001") == ("0.0.0.0", 9001)
    assert parse_address("[::1]:6677") == ("::1", 6677)
    for bad in ("", "port", "1:2:x", "70000", "host:0"):
        with pytest.raises(ValueError):
            parse_address(bad)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--websocket", "nope"])


def test_hayai_websocket_turns_the_server_on_for_one_run(env):
    args = build_parser().parse_args(["--websocket", "7001"])
    overrides = overrides_from_args(args)
    assert overrides == {"reading/websocket_address": "127.0.0.1:7001", "reading/websocket": True}
    settings = Settings(overrides=overrides)
    assert settings.get("reading/websocket") is True
    assert settings.stored("reading/websocket") is False  # the saved setting is left alone
    assert Settings().get("reading/websocket_address") == "127.0.0.1:6677"


def test_every_client_receives_each_text_as_one_message():
    server = WebSocketServer("127.0.0.1", 0)
    server.start()
    try:
        with connect(server.url) as a, connect(server.url) as b:
            deadline = time.monotonic() + 5
            while server.client_count < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            for text in ("今日はいい天気ですね。", "二行目\n三行目"):
                server.send(text)
            for client in (a, b):
                assert [client.recv(timeout=5), client.recv(timeout=5)] == [
                    "今日はいい天気ですね。",
                    "二行目\n三行目",
                ]
    finally:
        server.stop()


def test_a_port_in_use_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(OSError, match="cannot listen on ws://127.0.0.1"):
            WebSocketServer("127.0.0.1", port).start()


def test_the_text_file_gets_one_line_per_text(tmp_path):
    log = TextLogFile(str(tmp_path / "sub" / "reads.txt"))
    log.append("一行目")
    log.append("二行目\nの続き")
    assert (tmp_path / "sub" / "reads.txt").read_text(encoding="utf-8") == "一行目\n二行目 の続き\n"


def solid(colour: str, w=120, h=40) -> QImage:
    image = QImage(w, h, QImage.Format.Format_RGB32)
    image.fill(QColor(colour))
    return image


def test_clipboard_images_are_read_once_and_text_is_ignored(qtbot):
    watcher = ClipboardImages()
    got = []
    watcher.image.connect(got.append)
    clipboard = QGuiApplication.clipboard()
    with qtbot.waitSignal(watcher.image, timeout=3000):
        clipboard.setImage(solid("red"))
    clipboard.setText("some text")
    qtbot.wait(100)
    clipboard.setImage(solid("red"))  # the same image again
    qtbot.wait(100)
    assert len(got) == 1 and got[0].size().width() == 120
    watcher.close()


def test_new_images_in_the_folder_are_read_and_old_ones_are_not(qtbot, tmp_path):
    Image.new("RGB", (50, 20), "white").save(tmp_path / "old.png")
    folder = FolderImages(str(tmp_path))
    got, failed = [], []
    folder.image.connect(lambda image, path: got.append((Path(path).name, image.width())))
    folder.image.connect(lambda *_: folder.read_done(True))  # read: the next one may come
    folder.failed.connect(lambda path, message: failed.append(Path(path).name))
    Image.new("RGB", (64, 32), "black").save(tmp_path / "shot.png")
    (tmp_path / "notes.txt").write_text("not an image")
    qtbot.waitUntil(lambda: got == [("shot.png", 64)], timeout=5000)
    (tmp_path / "broken.png").write_bytes(b"\x89PNG not really")
    qtbot.waitUntil(lambda: failed == ["broken.png"], timeout=10000)  # after MAX_ATTEMPTS tries
    assert got == [("shot.png", 64)]
    folder.close()
    with pytest.raises(ValueError, match="not a folder"):
        FolderImages(str(tmp_path / "missing"))


def test_open_image_file_says_what_is_wrong(tmp_path):
    from model.config import ImageCap

    (tmp_path / "x.png").write_bytes(b"nope")
    with pytest.raises(ValueError, match="x.png: not a supported image format"):
        open_image_file(tmp_path / "x.png", ImageCap())


# --- in the app --------------------------------------------------------------------------------


def test_the_app_sends_reads_to_websocket_clients_and_reads_clipboard_images(
    make_app, qtbot, tmp_path
):
    from appcore_fakes import FakeRecognizer, FakeSession, make_selection

    port = free_port()
    settings = Settings()
    settings.update(
        {
            "reading/websocket": True,
            "reading/websocket_address": f"127.0.0.1:{port}",
            "reading/clipboard_images": True,
            "reading/log_file": str(tmp_path / "reads.txt"),
            "output/auto_copy": False,
        }
    )
    recognizer = FakeRecognizer("一つ目")
    app = make_app(recognizer, settings=settings)
    assert app.channels.websocket is not None
    with connect(f"ws://127.0.0.1:{port}") as client:
        received = []  # the client listens on its own thread: this one runs the app's event loop
        threading.Thread(target=lambda: received.extend(client), daemon=True).start()
        qtbot.waitUntil(lambda: app.channels.websocket.client_count == 1, timeout=5000)
        app.reads.last_latency = None
        app.handle_command("capture")
        FakeSession.started[-1].select(make_selection())
        qtbot.waitUntil(lambda: received == ["一つ目"], timeout=10000)
        # an image on the clipboard (a screenshot tool's) is read; it stays there (auto-copy is off)
        recognizer.text = "二つ目"
        clipboard = QGuiApplication.clipboard()
        clipboard.setImage(solid("white", 200, 60))
        qtbot.waitUntil(lambda: received == ["一つ目", "二つ目"], timeout=10000)
        assert clipboard.mimeData().hasImage()
        qtbot.waitUntil(lambda: len(app.history.entries()) == 2, timeout=5000)
        assert [e.source for e in app.history.entries()] == ["clipboard", "box"]
        assert recognizer.reads[-1] == (200, 60)
    assert (tmp_path / "reads.txt").read_text(encoding="utf-8") == "一つ目\n二つ目\n"
    # turned off in Settings: the server goes away
    settings.update({"reading/websocket": False})
    assert app.channels.websocket is None
    app.channels.close()


# --- JSON frames for exSTATic and other JSON clients (`--websocket-format json`) ------------------


def test_frames_are_the_text_alone_by_default_and_json_objects_on_request():
    from datetime import datetime, timezone

    from app.reading.channels.websocket import websocket_frame

    assert websocket_frame("二行目\n三行目", "box", "text") == "二行目\n三行目"
    moment = datetime(2026, 12, 1, 21, 30, 5, 120000, tzinfo=timezone.utc)
    frame = json.loads(websocket_frame("今日は", "click", "json", moment))
    assert frame["sentence"] == "今日は" and frame["process_path"] == "hayai"
    assert frame["source"] == "capture"  # a boxed or clicked read is a capture
    assert datetime.fromisoformat(frame["time"]) == moment
    assert json.loads(websocket_frame("x", "watch", "json"))["source"] == "watch"
    assert json.loads(websocket_frame("x", "edit", "json"))["source"] == "edit"


def test_the_websocket_format_option_overrides_the_setting_for_one_run(env):
    args = build_parser().parse_args(["--websocket", "7001", "--websocket-format", "json"])
    settings = Settings(overrides=overrides_from_args(args))
    assert settings.get("reading/websocket_format") == "json"
    assert settings.stored("reading/websocket_format") == "text"  # plain text stays the default
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--websocket-format", "xml"])


def test_a_json_client_parses_every_read_sent_with_websocket_format_json(make_app, qtbot):
    from appcore_fakes import FakeRecognizer, FakeSession, make_selection

    port = free_port()
    args = build_parser().parse_args(["--websocket", str(port), "--websocket-format", "json"])
    settings = Settings(overrides=overrides_from_args(args))
    settings.update({"output/auto_copy": False})
    recognizer = FakeRecognizer("吾輩は猫である")
    app = make_app(recognizer, settings=settings)
    before = time.time()
    with connect(f"ws://127.0.0.1:{port}") as client:
        received = []
        threading.Thread(target=lambda: received.extend(client), daemon=True).start()
        qtbot.waitUntil(lambda: app.channels.websocket.client_count == 1, timeout=5000)
        app.handle_command("capture")
        FakeSession.started[-1].select(make_selection())
        qtbot.waitUntil(lambda: len(received) == 1, timeout=10000)
        # a texthooker parses each message as JSON (exSTATic: JSON.parse(event.data).sentence)
        frame = json.loads(received[0])
        assert set(frame) == {"sentence", "process_path", "source", "time"}
        assert frame["sentence"] == "吾輩は猫である"
        assert frame["process_path"] == "hayai" and frame["source"] == "capture"
        from datetime import datetime

        sent = datetime.fromisoformat(frame["time"])
        assert sent.tzinfo is not None and before - 1 <= sent.timestamp() <= time.time() + 1
        # switched to plain text in Settings (no override): the next read is the text alone
        settings.overrides.pop("reading/websocket_format")
        recognizer.text = "二つ目"
        app.handle_command("capture")
        FakeSession.started[-1].select(make_selection())
        qtbot.waitUntil(lambda: len(received) == 2, timeout=10000)
        assert received[1] == "二つ目"
    app.channels.close()


def test_apply_sets_up_again_only_the_channels_whose_settings_changed(env, qtbot, tmp_path):
    from app.reading.channels import Channels

    settings = Settings()
    settings.update(
        {
            "reading/websocket": True,
            "reading/websocket_address": f"127.0.0.1:{free_port()}",
            "reading/log_file": str(tmp_path / "a.txt"),
        }
    )
    channels = Channels(settings)
    channels.apply()
    try:
        server, log_file = channels.websocket, channels.log_file
        assert server is not None and log_file is not None and channels.folder is None
        settings.set("reading/log_file", str(tmp_path / "b.txt"))
        channels.apply(["reading/log_file"])
        assert channels.websocket is server  # untouched: its settings did not change
        assert channels.log_file is not None and channels.log_file.path == tmp_path / "b.txt"
        settings.set("reading/folder", str(tmp_path))
        channels.apply(["reading/folder_links"])  # any of a channel's settings sets it up again
        assert channels.folder is not None and channels.websocket is server
        channels.apply(["reading/websocket_origins"])
        assert channels.websocket is not server and channels.websocket is not None
    finally:
        channels.close()
