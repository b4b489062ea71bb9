"""The engine interface (app/engines/): both backends' recognizers meet the one `Recognizer`
protocol with string attributes, their traits answer what the rest of the app asks, and the
command line reaches every sub-command through its dispatch table."""

from __future__ import annotations

import argparse
import importlib
import typing

import pytest

from app import engines
from app.engines import local, server
from app.engines.base import Recognizer, Traits

ATTRIBUTES = {
    name: kind
    for name, kind in typing.get_type_hints(Recognizer).items()
    if not name.startswith("_")
}


def meets_protocol(recognizer) -> None:
    assert ATTRIBUTES == {
        "traits": Traits,
        "device": str,
        "variant": str,
        "precision": str,
        "reads_batches": bool,
    }
    for name, kind in ATTRIBUTES.items():
        value = getattr(recognizer, name)
        assert isinstance(value, kind), (name, value)
    assert callable(recognizer.read) and callable(recognizer.warmup)


def test_the_local_recognizer_meets_the_protocol(tiny_v21):
    rec = engines.load("local", model_dir=str(tiny_v21), device="cpu", precision="exact")
    meets_protocol(rec)
    assert rec.traits is local.TRAITS and not rec.traits.remote
    assert rec.reads_batches and callable(rec.read_batches)  # the page reader's batches
    assert (rec.device, rec.variant, rec.precision) == ("cpu", "v2.1", "exact")
    assert rec.torch_device.type == "cpu"  # the tensors' device stays a torch.device


def test_the_server_recognizer_meets_the_protocol_before_and_after_warmup(hayai_server):
    rec = engines.load("server", url=hayai_server.url, key=hayai_server.key)
    meets_protocol(rec)
    assert rec.traits is server.TRAITS and rec.traits.remote
    assert not rec.reads_batches  # a batch's crops go as requests at once
    rec.warmup()
    meets_protocol(rec)
    assert rec.device == f"cpu @ 127.0.0.1:{hayai_server.port}" and rec.variant == "v2.1"


def test_the_traits_name_the_settings_each_backend_uses(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path))
    from app.settings import Settings
    from app.settings.table import BY_KEY

    for name in engines.REGISTRY:
        assert engines.traits(name).settings_keys <= BY_KEY.keys()  # real rows of the table
    settings = Settings()
    assert engines.option_keys(settings) == local.TRAITS.settings_keys | {"engine/backend"}
    assert engines.options(settings)["backend"] == "local"
    settings.update({"engine/backend": "server", "engine/server_url": "10.0.0.2:8000"})
    assert engines.option_keys(settings) == {
        "engine/backend",
        "engine/server_url",
        "engine/server_key",
    }
    assert engines.options(settings) == {"backend": "server", "url": "10.0.0.2:8000", "key": ""}


def test_settings_problems_come_from_the_chosen_backend():
    assert engines.settings_problem({"engine/backend": "local", "engine/server_url": ""}) == ""
    problem = engines.settings_problem({"engine/backend": "server", "engine/server_url": ""})
    assert problem.startswith("No server address is set.") and "Settings → Engine" in problem
    assert engines.settings_problem({"engine/backend": "server", "engine/server_url": "h:1"}) == ""


def test_every_command_of_the_dispatch_table_exists():
    from app import cli

    for target in [*cli.COMMANDS.values(), *cli.BENCH_TARGETS.values(), cli.LAUNCHER]:
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), target
    parser = cli.build_parser()
    bench = parser.parse_args(["bench"])
    assert set(cli.BENCH_TARGETS) <= vars(bench).keys()  # each target is a `hayai bench` option
    assert cli.command_function(bench).__qualname__ == "bench"
    assert cli.command_function(parser.parse_args(["bench", "--page"])).__module__ == (
        "app.page.bench"
    )
    assert cli.command_function(argparse.Namespace(command=None)).__module__ == "app.launcher"


def test_a_server_answering_errors_or_no_json_gets_the_same_words(tmp_path):
    import http.server
    import threading

    answers = {
        "/v1/models": (503, b'{"error": {"message": "the queue is full"}}'),
        "/health": (500, b"oops"),
        "/v1/ocr": (200, b"<html>not a hayai server</html>"),
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self):
            code, body = answers[self.path]
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = answer

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.answer()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        rec = server.load(url=f"127.0.0.1:{httpd.server_port}")
        where = f"The Hayai server at http://127.0.0.1:{httpd.server_port}"
        with pytest.raises(server.ServerError) as busy:
            rec.warmup()
        assert str(busy.value) == f"{where} is busy: the queue is full"
        assert busy.value.hint == "Try again in a moment."
        answers["/v1/models"] = (200, b"[]")
        with pytest.raises(server.ServerError) as failed:
            rec.warmup()
        assert str(failed.value) == f"{where} answered 500: Internal Server Error"
        from PIL import Image

        with pytest.raises(server.ServerError) as odd:
            rec.read([Image.new("RGB", (8, 8))])
        assert str(odd.value) == f"{where} does not answer like a Hayai server."
        assert odd.value.hint == server.SETTINGS_HINT
    finally:
        httpd.shutdown()
        httpd.server_close()
