"""`hayai serve` under a low file limit, flooded with connections that never send a request (as
half-open ones from a vanished client look): they are closed after the header timeout, so the
server answers again while they are still open on the client's side, and its log stays short."""

from __future__ import annotations

import socket
import time
import urllib.request

import pytest
from conftest import start_server

from app.serve.connections import HEADER_TIMEOUT_S

FILE_LIMIT = 160  # the server's own files (model, logs, sockets) plus ~100 connections
SILENT = 220


@pytest.mark.slow
def test_silent_connections_cannot_take_the_server_down(tiny_v21, tmp_path):
    server = start_server(tiny_v21, log_dir=tmp_path, file_limit=FILE_LIMIT)
    silent = []
    try:
        for i in range(SILENT):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            if i % 2:  # half of them start a request and never finish its headers
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            silent.append(sock)
        # every file the server may open is taken now: it can only answer once it closes some
        deadline = time.monotonic() + 6 * HEADER_TIMEOUT_S + 60
        answered = False
        while not answered and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(server.url + "/health", timeout=30) as response:
                    answered = response.status == 200
            except OSError:
                time.sleep(1)
        assert answered, "the server never answered while the silent connections stayed open"
        closed = sum(1 for sock in silent if closed_by_server(sock))
        assert closed > FILE_LIMIT // 2  # the server closed them; the client never did
        assert server.process.poll() is None
    finally:
        for sock in silent:
            sock.close()
        server.stop()
    log = server.log.read_text()
    assert log.count("Traceback") <= 2, log[-3000:]
    assert len(log.splitlines()) < 100, log[-3000:]


def closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(0.05)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True
