"""One image cap per model (issue #40, item 6): known from the model folder before it loads, the
same as the loaded model's, and the same refusal, in the same words, from `hayai ocr` and
`hayai page` before the model loads."""

from __future__ import annotations

import json
import shutil

import pytest
from hostile_files import png_bomb

from app.cli import main
from model.config import ImageCap, declared_cap
from model.weights import Checkpoint

# What every command and the app say of a PNG 1 px taller than the v2.1 cap (4096×4096 pixels)
OVER_V21 = (
    "the PNG image declares 4096×4097 pixels (16.8 megapixels); the model can use at most "
    "16.8 megapixels (256 patches of 16×16 px, shrunk at most 16× per side): shrink or crop it first"
)


def test_the_cap_follows_the_patch_budget_and_says_why():
    assert ImageCap(256).pixels == 4096 * 4096  # 16.8 MP: v2.1
    assert ImageCap(512).pixels == 512 * 256 * 256  # 33.5 MP: nova, an 8K screen fits
    assert ImageCap() == ImageCap(512)  # the largest released, for images no one model reads
    assert str(ImageCap(256)) == (
        "16.8 megapixels (256 patches of 16×16 px, shrunk at most 16× per side)"
    )


def test_a_folders_cap_is_known_before_it_loads_and_is_the_loaded_models(
    tiny_v21, tiny_nova, tmp_path
):
    budget64 = tmp_path / "budget64"
    shutil.copytree(tiny_v21, budget64)
    config = json.loads((budget64 / "config.json").read_text())
    (budget64 / "config.json").write_text(json.dumps({**config, "max_num_patches": 64}))
    for folder, budget in ((tiny_v21, 256), (tiny_nova, 512), (budget64, 64)):
        assert declared_cap(folder) == ImageCap(budget)
        assert declared_cap(folder) == Checkpoint(folder).config.image_cap
    # a download: its variant's (the released config.json sets no budget)
    assert declared_cap(None, "v2.1") == ImageCap(256)
    assert declared_cap(None, "nova") == ImageCap(512)
    # a folder that cannot load: the largest, until the load says what is wrong
    assert declared_cap(tmp_path / "missing") == ImageCap()
    (budget64 / "model.safetensors").write_bytes(b"\xff" * 16)
    assert declared_cap(budget64) == ImageCap(64)  # config.json's own budget needs no weights


def _errors(capsys, *argv) -> tuple[int, list[dict]]:
    code = main(list(argv))
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, rows


def test_ocr_and_page_refuse_an_image_over_the_cap_alike_before_the_model_loads(
    tiny_v21, tmp_path, capsys, monkeypatch
):
    import app.engines.local as local

    loads = []
    monkeypatch.setattr(local, "load", lambda **options: loads.append(options) or 1 / 0)
    # GIVEN a page 1 px taller than the v2.1 cap (4096×4096), as a small file
    over = tmp_path / "over.png"
    over.write_bytes(png_bomb(4096, 4097))
    model = ["--model", str(tiny_v21), "--json"]
    # WHEN hayai ocr and hayai page read it THEN both refuse it from its header, in one sentence
    ocr_code, ocr_rows = _errors(capsys, "ocr", str(over), *model)
    page_code, page_rows = _errors(capsys, "page", str(over), *model)
    assert ocr_code == page_code == 1
    assert ocr_rows == page_rows == [{"image": str(over), "error": ocr_rows[0]["error"]}]
    assert ocr_rows[0]["error"] == OVER_V21
    assert loads == []  # and the model never loaded


def test_the_page_bench_refuses_it_too_before_the_model_loads(
    tiny_v21, tmp_path, capsys, monkeypatch
):
    import app.engines.local as local

    loads = []
    monkeypatch.setattr(local, "load", lambda **options: loads.append(options) or 1 / 0)
    over = tmp_path / "over.png"
    over.write_bytes(png_bomb(4096, 4097))
    for weights in (["--model", str(tiny_v21)], ["--random-weights", "--variant", "v2.1"]):
        assert main(["bench", "--page", "--image", str(over), *weights]) == 2
        assert OVER_V21 in capsys.readouterr().err
    assert loads == []  # the model never loaded


def test_ocr_and_page_both_read_an_image_just_under_the_cap(tiny_v21, tmp_path, capsys):
    under = tmp_path / "under.png"
    under.write_bytes(png_bomb(4096, 4095))
    model = ["--model", str(tiny_v21), "--json", "--max-new-tokens", "2"]
    ocr_code, ocr_rows = _errors(capsys, "ocr", str(under), *model)
    page_code, page_rows = _errors(capsys, "page", str(under), *model)
    assert ocr_code == page_code == 0
    assert "text" in ocr_rows[0] and "error" not in ocr_rows[0]
    assert (page_rows[0]["img_width"], page_rows[0]["img_height"]) == (4096, 4095)


@pytest.mark.parametrize("variant, budget", [("v2.1", 256), ("nova", 512)])
def test_the_app_holds_outside_images_to_its_models_cap(variant, budget, tmp_path):
    from app.engines import image_cap_reader

    class Settings:
        overrides: dict = {}

        def get(self, key):
            return {"engine/backend": "local", "model/folder": "", "model/variant": variant}[key]

    assert image_cap_reader(Settings())() == ImageCap(budget)


def test_hayai_serve_refuses_it_in_the_same_words(tiny_v21, tmp_path, start_hayai_server):
    import http.client

    server = start_hayai_server(tiny_v21, "--max-new-tokens", "2", log_dir=tmp_path)
    try:
        boundary = "hayai-cap"
        body = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="over.png"\r\n'
            "Content-Type: image/png\r\n\r\n".encode()
            + png_bomb(4096, 4097)
            + f"\r\n--{boundary}--\r\n".encode()
        )
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request(
            "POST", "/v1/ocr", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        )
        response = conn.getresponse()
        error = json.loads(response.read())["error"]
        conn.close()
    finally:
        server.stop()
    # its own --max-image-pixels (25,000,000 by default) is more: the model's cap answers
    assert (response.status, error["code"]) == (413, "image_too_large")
    assert error["message"] == OVER_V21
