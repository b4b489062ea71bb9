"""`hayai ocr`, `hayai bench`, `hayai model`: JSON contract, broken files, stdin, folders, errors."""

import json
import os
import subprocess
import sys

import pytest
from PIL import Image

from app.cli import main
from model.tokenizer import one_line

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def images(tmp_path):
    paths = []
    for i, size in enumerate([(120, 40), (40, 120), (64, 64)]):
        p = tmp_path / f"crop{i}.png"
        Image.new("RGB", size, (255, 255 - 60 * i, 255)).save(p)
        paths.append(str(p))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    return paths, str(broken)


def run_json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, [json.loads(line) for line in out.out.splitlines()], out.err


def test_ocr_json_lines_in_input_order(tiny_v21, images, capsys):
    paths, _ = images
    code, rows, _ = run_json(
        capsys, ["ocr", "--model", str(tiny_v21), "--json", "--max-new-tokens", "5", *paths]
    )
    assert code == 0
    assert [r["image"] for r in rows] == paths
    for r in rows:
        assert set(r) == {"image", "text", "token_ids", "ms"}
        assert (
            isinstance(r["text"], str)
            and all(isinstance(t, int) for t in r["token_ids"])
            and r["ms"] > 0
        )
        assert 298 not in r["token_ids"] and 296 not in r["token_ids"]  # no eos/pad


def test_batching_does_not_change_results(tiny_v21, images, capsys):
    paths, _ = images
    _, batched, _ = run_json(
        capsys, ["ocr", "--model", str(tiny_v21), "--json", "--max-new-tokens", "6", *paths]
    )
    _, single, _ = run_json(
        capsys,
        [
            "ocr",
            "--model",
            str(tiny_v21),
            "--json",
            "--max-new-tokens",
            "6",
            "--batch-size",
            "1",
            *paths,
        ],
    )
    assert [r["token_ids"] for r in batched] == [r["token_ids"] for r in single]


def test_a_broken_file_is_an_error_line_and_the_rest_are_read(tiny_v21, images, capsys):
    paths, broken = images
    argv = [
        "ocr",
        "--model",
        str(tiny_v21),
        "--json",
        "--max-new-tokens",
        "3",
        paths[0],
        broken,
        "/no/such/file.png",
        paths[1],
    ]
    code, rows, err = run_json(capsys, argv)
    assert code == 1
    assert [r["image"] for r in rows] == argv[6:]
    assert set(rows[1]) == {"image", "error"} and set(rows[2]) == {"image", "error"}
    assert "text" in rows[0] and "text" in rows[3]
    assert "Traceback" not in err


def test_a_batch_that_fails_is_error_lines_and_the_next_batch_is_read(
    tiny_v21, images, capsys, monkeypatch
):
    from model.recognizer import Recognizer

    read_prepared, calls = Recognizer._read_prepared, []

    def out_of_memory_once(self, prepared, *args, **kwargs):
        calls.append(len(prepared))
        if len(calls) == 1:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return read_prepared(self, prepared, *args, **kwargs)

    monkeypatch.setattr(Recognizer, "_read_prepared", out_of_memory_once)
    paths, _ = images  # sorted by area: crop2 (64×64) and crop0 first, then crop1
    code, rows, err = run_json(
        capsys,
        [
            "ocr",
            "--model",
            str(tiny_v21),
            "--json",
            "--max-new-tokens",
            "3",
            "--batch-size",
            "2",
            *paths,
        ],
    )
    assert code == 1 and calls == [2, 1] and "Traceback" not in err
    assert [r["image"] for r in rows] == paths  # input order still
    assert (
        rows[0]["error"]
        == rows[2]["error"]
        == "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    )
    assert "text" in rows[1]


def test_folder_and_plain_output(tiny_v21, images, capsys):
    paths, _ = images
    folder = os.path.dirname(paths[0])
    code = main(["ocr", "--model", str(tiny_v21), "--max-new-tokens", "3", folder])
    out = capsys.readouterr()
    assert code == 1  # the folder also holds broken.png
    assert len(out.out.splitlines()) == 3 and "broken.png" in out.err
    assert "crops/s" in out.err


def test_plain_output_names_each_file_when_there_are_several(tiny_v21, images, capsys):
    paths, _ = images
    args = ["ocr", "--model", str(tiny_v21), "--max-new-tokens", "3", "--json"]
    assert main([*args, *paths]) == 0
    texts = [json.loads(line)["text"] for line in capsys.readouterr().out.splitlines()]
    assert main([a for a in args if a != "--json"] + paths) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{p}: {one_line(t)}" for p, t in zip(paths, texts)]
    assert main([a for a in args if a != "--json"] + paths[:1]) == 0  # one image: the text alone
    assert capsys.readouterr().out.splitlines() == [one_line(texts[0])]


def test_a_mistyped_option_is_the_sub_commands_error_with_its_usage(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["ocr", "--modle", "x.png"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("usage: hayai ocr ") and "--max-new-tokens N" in err
    assert err.rstrip().endswith("hayai ocr: error: unrecognized arguments: --modle")
    with pytest.raises(SystemExit):
        main(["dict", "list", "--nope"])
    assert "hayai dict list: error: unrecognized arguments: --nope" in capsys.readouterr().err


def test_stdin_dash(tiny_v21, images):
    paths, _ = images
    with open(paths[0], "rb") as f:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "app",
                "ocr",
                "--model",
                str(tiny_v21),
                "--json",
                "--max-new-tokens",
                "3",
                "-",
            ],
            stdin=f,
            capture_output=True,
            text=True,
            cwd=REPO,
        )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["image"] == "-"


def test_missing_model_is_one_clear_line(tmp_path, images, capsys):
    paths, _ = images
    code = main(["ocr", "--model", str(tmp_path / "nothing"), paths[0]])
    err = capsys.readouterr().err
    assert (
        code == 2
        and "does not exist" in err
        and "hayai model download" in err
        and "Traceback" not in err
    )


def test_contradicting_variant(tiny_v21, images, capsys):
    paths, _ = images
    assert main(["ocr", "--model", str(tiny_v21), "--variant", "nova", paths[0]]) == 2
    assert "contradicts" in capsys.readouterr().err


def test_no_downloaded_model_offline(images, capsys):
    paths, _ = images
    assert main(["ocr", paths[0]]) == 2
    err = capsys.readouterr().err
    assert "model.safetensors" in err and "--model" in err


def test_bench_json_reports_every_stage(tiny_v21, capsys):
    code = main(
        ["bench", "--model", str(tiny_v21), "--runs", "2", "--max-new-tokens", "4", "--json"]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    for key in (
        "preprocess_ms",
        "vision_ms",
        "prefill_ms",
        "decode_ms_per_token",
        "total_ms",
        "tokens",
        "device",
        "precision",
        "dtype",
        "threads",
        "peak_rss_mb",
    ):
        assert key in report
    assert (
        report["device"] == "cpu"
        and report["precision"] in ("exact", "fast")
        and report["peak_rss_mb"] > 0
    )
    assert report["pipelined_crops_per_s"] is None  # one crop per read: nothing to pipeline
    assert set(report["recipes"]) == {"vision", "prefill", "decode"}


def test_bench_reports_the_recipe_each_stage_ran(tiny_v21, capsys, monkeypatch):
    from model import fast

    recipes = {"vision": "bfloat16", "prefill": "int8+fp16-packed", "decode": "int8+fp16-packed"}
    monkeypatch.setattr(fast, "cpu_recipes", lambda: recipes)
    args = ["bench", "--model", str(tiny_v21), "--runs", "1", "--max-new-tokens", "3"]
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["recipes"] == recipes
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    stage = {line.split()[0]: line for line in lines if line.startswith("  ")}
    assert stage["vision"].endswith("bfloat16")
    assert stage["prefill"].endswith("int8+fp16-packed")
    assert stage["decode"].endswith("int8+fp16-packed")
    assert main([*args, "--precision", "exact", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["recipes"].values()) == {"float32"}


def test_bench_of_batches_reports_the_pipelined_rate(tiny_v21, capsys):
    code = main(
        [
            "bench",
            "--model",
            str(tiny_v21),
            "--runs",
            "2",
            "--max-new-tokens",
            "3",
            "--batch-size",
            "3",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "batch 3" in out
    rate = float(out.split("pipelined")[1].split()[0])
    assert rate > 0


def test_help_is_instant_and_imports_nothing_heavy():
    code = (
        "import sys; from app.cli import build_parser; build_parser().format_help(); "
        "print(sorted(m for m in ('torch', 'transformers', 'PySide6') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"
