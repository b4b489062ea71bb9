"""`hayai model info`: what is installed, and which device and precision would run (`--model DIR`)."""

from __future__ import annotations

import pytest

from app.cli import main


def test_model_info_says_which_device_and_precision_would_run(capsys):
    assert main(["model", "info"]) == 0
    out = capsys.readouterr().out
    assert "v2.1:" in out and "nova:" in out  # what is installed, as before
    assert "would run:" in out
    assert (
        "device:    cpu (auto: no CUDA or MPS device here)" in out or "cuda" in out or "mps" in out
    )
    assert "precision: " in out and "(auto)" in out


def test_exact_on_the_cpu_is_float32(capsys):
    assert main(["model", "info", "--device", "cpu", "--precision", "exact"]) == 0
    out = capsys.readouterr().out
    assert "device:    cpu\n" in out
    assert "precision: exact: float32 everywhere" in out


def test_fast_on_the_cpu_names_this_cpus_path(capsys):
    from model.fast import cpu_recipes, describe

    assert main(["model", "info", "--device", "cpu", "--precision", "fast"]) == 0
    out = capsys.readouterr().out
    recipes = cpu_recipes()
    expected = describe(recipes) if recipes else "float32 (no faster faithful path"
    assert f"precision: fast: {expected}" in out


def test_model_info_describes_a_model_folder(tiny_nova, capsys):
    assert main(["model", "info", "--model", str(tiny_nova), "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert f"model folder: {tiny_nova.resolve()}" in out
    assert "variant:  nova (from the weights)" in out and "model.safetensors" in out
    assert "Hugging Face cache" not in out  # the folder, not the downloads
    assert "device:    cpu" in out


def test_model_info_on_a_folder_without_the_files_is_one_clear_line(tmp_path, capsys):
    assert main(["model", "info", "--model", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "has no config.json" in err and "Traceback" not in err


@pytest.mark.skipif(
    __import__("torch").cuda.is_available(), reason="this machine has CUDA, so cuda would run"
)
def test_a_device_that_is_not_there_is_said(capsys):
    assert main(["model", "info", "--device", "cuda"]) == 2
    assert "no CUDA device is available" in capsys.readouterr().err


def test_model_is_only_for_info(tiny_v21, capsys):
    assert main(["model", "path", "--model", str(tiny_v21)]) == 2
    assert "--model is for `hayai model info`" in capsys.readouterr().err
