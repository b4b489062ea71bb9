"""The WebSocket text-out server answers only this computer's pages: a real Chromium (headless) on a
file:// page and on a localhost page receives the text; a page from another origin, and a raw client
sending `Origin: http://evil.example`, get 403."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from app.reading.channels import websocket
from app.reading.channels.websocket import WebSocketServer, origin_allowed

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_which_origins_may_connect():
    for origin in (
        None,  # not a browser (texthooker apps, scripts)
        "null",  # a file:// page
        "http://localhost:5500",
        "https://localhost",
        "http://127.0.0.1:8080",
        "http://[::1]:3000",
        "HTTP://LOCALHOST:1",
    ):
        assert origin_allowed(origin), origin
    for origin in (
        "http://evil.example",
        "https://localhost.evil.example",
        "http://127.0.0.1.evil.example",
        "http://evil.example:80@127.0.0.1",  # no userinfo in an Origin: not an origin at all
        "file://",
        "chrome-extension://abc",
        "http://[::1",
        "",
        "localhost",
    ):
        assert not origin_allowed(origin), origin
    allowed = ("https://texthooker.example", "http://reader.example:8000/")
    assert origin_allowed("https://texthooker.example:443", allowed)
    assert origin_allowed("http://reader.example:8000", allowed)
    assert not origin_allowed("http://texthooker.example", allowed)  # another scheme
    assert not origin_allowed("http://reader.example", allowed)  # another port


def test_a_raw_client_from_another_origin_gets_403_and_no_text():
    server = WebSocketServer("127.0.0.1", 0, allowed_origins=("https://reader.example",))
    server.start()
    try:
        with pytest.raises(InvalidStatus) as info:
            connect(server.url, origin="http://evil.example", open_timeout=5)
        assert info.value.response.status_code == 403
        assert server.client_count == 0
        for origin in (None, "null", "http://localhost:5500", "https://reader.example"):
            with connect(server.url, origin=origin, open_timeout=5) as client:
                _wait(lambda: server.client_count == 1)
                server.send("猫")
                assert client.recv(timeout=5) == "猫"
            _wait(lambda: server.client_count == 0)
    finally:
        server.stop()


def _wait(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


PAGE = """<!doctype html><meta charset="utf-8"><title>reader</title><script>
function report(kind, text) {  // an image request reaches the test's server from any page
  new Image().src = "REPORT/got?kind=" + kind + "&text=" + encodeURIComponent(text);
}
const ws = new WebSocket("SOCKET");
ws.onmessage = (e) => report("text", e.data);
ws.onerror = () => report("error", "");
</script>"""


class Reports(BaseHTTPRequestHandler):
    """Serves the page at /page.html (any Host name) and records /got?kind=&text= reports."""

    page = ""
    got: list[tuple[str, str]] = []

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/page.html":
            body = self.page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
        else:
            query = parse_qs(url.query)
            self.got.append((query.get("kind", [""])[0], query.get("text", [""])[0]))
            body = b""
            self.send_response(204)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.slow
# CI installs chromium (.ci/run): there a missing browser fails instead of skipping the real client
@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"), reason="chromium is not installed"
)
def test_chromium_pages_on_this_computer_receive_the_text_and_others_are_refused(
    tmp_path, monkeypatch
):
    origins: list[str | None] = []
    real_check = websocket.origin_allowed

    def recording(origin, allowed=()):
        origins.append(origin)
        return real_check(origin, allowed)

    monkeypatch.setattr(websocket, "origin_allowed", recording)
    server = WebSocketServer("127.0.0.1", 0)
    server.start()
    Reports.got = []
    http = ThreadingHTTPServer(("127.0.0.1", 0), Reports)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    report = f"http://127.0.0.1:{http.server_address[1]}"
    Reports.page = PAGE.replace("REPORT", report).replace("SOCKET", server.url)
    page_file = tmp_path / "page.html"
    page_file.write_text(Reports.page, encoding="utf-8")
    http_port = http.server_address[1]
    try:
        pages = [
            (page_file.as_uri(), "null"),
            (f"http://localhost:{http_port}/page.html", f"http://localhost:{http_port}"),
            (f"http://127.0.0.1:{http_port}/page.html", f"http://127.0.0.1:{http_port}"),
        ]
        for n, (url, origin) in enumerate(pages):
            with chromium(tmp_path / f"profile{n}", url):
                _wait(lambda: server.client_count == 1, 60)
                text = f"吾輩は猫である {n}"
                server.send(text)
                _wait(lambda t=text: ("text", t) in Reports.got, 30)
            assert origins[-1] == origin
            _wait(lambda: server.client_count == 0)
        # a page from another site (its name mapped to this computer by Chromium itself)
        evil = f"http://evil.example:{http_port}/page.html"
        rules = "--host-resolver-rules=MAP evil.example 127.0.0.1"
        with chromium(tmp_path / "profile-evil", evil, rules):
            _wait(lambda: ("error", "") in Reports.got, 60)
        assert origins[-1] == f"http://evil.example:{http_port}"
        assert server.client_count == 0
        assert [kind for kind, _ in Reports.got].count("text") == len(pages)
    finally:
        http.shutdown()
        server.stop()


class chromium:
    """Chromium headless showing `url` until the block ends."""

    def __init__(self, profile, url: str, *options: str):
        self.command = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # tests may run as root (CI containers)
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            f"--user-data-dir={profile}",
            *options,
            url,
        ]

    def __enter__(self):
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
