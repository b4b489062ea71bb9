"""Stand-ins for the server tests (imported by name: tests/ is on sys.path via conftest): a recognizer
whose reads can be held at a gate, and uvicorn serving an app in a thread on a socket of its own."""

from __future__ import annotations

import base64
import io
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from PIL import Image


@dataclass
class FakeResult:
    text: str
    token_ids: list[int]
    vision_tokens: int = 4
    timings: dict = field(default_factory=lambda: {"total": 1.0})

    @property
    def ms(self) -> float:
        return 1.0


class GatedRecognizer:
    """read() says "W×H" per crop, records each batch and its thread, and waits for `gate` while it is closed."""

    def __init__(self):
        self.gate = threading.Event()
        self.gate.set()
        self.batches: list[list[tuple[int, int]]] = []
        self.threads: set[str] = set()
        self.reading = threading.Event()
        self.fail_next: list[Exception] = []

    def read(self, images, max_new_tokens=128, num_beams=1):
        self.threads.add(threading.current_thread().name)
        self.batches.append([im.size for im in images])
        self.reading.set()
        assert self.gate.wait(30), "the test never opened the gate"
        if self.fail_next:
            raise self.fail_next.pop(0)
        return [
            FakeResult(f"{w}x{h}", list(range(min(w, max_new_tokens))))
            for w, h in (im.size for im in images)
        ]


def crop(width: int, height: int = 20) -> Image.Image:
    return Image.new("RGB", (width, height), "white")


@contextmanager
def serving(app, sock: socket.socket | None = None, **options):
    """uvicorn in a thread on `sock` (bound; default: a free loopback port), with `hayai serve`'s
    connection settings (or `options`); yields the base URL."""
    from app.serve.connections import uvicorn_options

    if sock is None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
    config = {"log_level": "warning", "lifespan": "off", **uvicorn_options(), **options}
    server = uvicorn.Server(uvicorn.Config(app, **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(300):
            if server.started:
                break
            threading.Event().wait(0.05)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def png_url(image: Image.Image) -> str:
    out = io.BytesIO()
    image.save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()
