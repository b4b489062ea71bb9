"""`--batch-size auto` / `--max-batch auto`: the choice logic with fake timing functions (nothing is
timed), the cache per device and model, and `hayai ocr --batch-size auto` end to end."""

import json
import os
import subprocess
import sys

import pytest

from app.engines import local
from model import calibrate


def seconds_like(per_crop: dict[int, float]):
    """A fake device: a batch of n crops takes n × per_crop[n] seconds; records the sizes asked."""
    asked = []

    def seconds_for(n):
        asked.append(n)
        return n * per_crop[n]

    return seconds_for, asked


def test_the_size_with_the_best_throughput_wins_and_larger_ones_are_not_tried():
    # a 2-core CPU: batching pays up to 8, then each crop costs more
    cpu, asked = seconds_like({1: 1.0, 2: 0.8, 4: 0.7, 8: 0.65, 16: 0.9, 32: 1.0, 64: 1.1})
    size, rates = calibrate.choose_batch_size(cpu)
    assert size == 8 and asked == [1, 2, 4, 8, 16]  # 32 and 64 never run
    assert rates[8] == pytest.approx(1 / 0.65)


def test_a_gpu_goes_on_to_the_largest_size():
    gpu, asked = seconds_like({n: 1.0 / n for n in calibrate.CANDIDATES})
    assert calibrate.choose_batch_size(gpu)[0] == 64 and asked == list(calibrate.CANDIDATES)


def test_patience_looks_past_one_noisy_size_and_a_tie_goes_to_the_smaller():
    noisy, _ = seconds_like({1: 1.0, 2: 0.5, 4: 0.6, 8: 0.4, 16: 0.9, 32: 1.0, 64: 1.0})
    assert calibrate.choose_batch_size(noisy, patience=1)[0] == 2
    assert calibrate.choose_batch_size(noisy, patience=2)[0] == 8
    flat, _ = seconds_like(dict.fromkeys(calibrate.CANDIDATES, 1.0))
    assert calibrate.choose_batch_size(flat)[0] == 1


def test_no_candidate_sizes_is_an_error_not_a_size_of_none():
    with pytest.raises(ValueError, match="no candidate batch sizes"):
        calibrate.choose_batch_size(lambda n: 1.0, candidates=())


def test_the_choice_is_remembered_per_device_and_model(tiny_recognizer, tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path))
    cpu, asked = seconds_like({1: 1.0, 2: 0.5, 4: 0.6, 8: 1, 16: 1, 32: 1, 64: 1})
    assert local.auto_batch_size(tiny_recognizer, measure=cpu) == 2
    assert local.auto_batch_size(tiny_recognizer, measure=cpu) == 2 and asked == [1, 2, 4]
    from app.platform.paths import user_dir

    cache = user_dir("cache") / local.CALIBRATION_FILE
    stored = json.loads(cache.read_text())
    key = calibrate.calibration_key(tiny_recognizer)
    assert stored == {key: 2} and "cpu" in key and "exact" in key
    assert cache.stat().st_mode & 0o077 == 0  # per-user state is private
    cache.write_text("not json")  # a damaged cache is measured again, not an error
    assert local.auto_batch_size(tiny_recognizer, measure=cpu) == 2 and len(asked) == 6


def test_the_same_network_in_a_new_folder_is_not_measured_again(
    tiny_recognizer, tiny_nova, tmp_path, monkeypatch
):
    """`hayai bench --serve --random-weights --max-batch auto` writes its checkpoint to a new scratch
    folder on every run: the key is the network's shapes, not the folder, so it is measured once and
    the cache keeps one entry, whatever the folder or the weights' values."""
    from model import load_recognizer
    from model.random_checkpoint import write_checkpoint

    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "state"))
    cpu, asked = seconds_like({1: 1.0, 2: 0.5, 4: 0.6, 8: 1, 16: 1, 32: 1, 64: 1})
    assert local.auto_batch_size(tiny_recognizer, measure=cpu) == 2 and asked == [1, 2, 4]
    # GIVEN the same shapes with other weights, in another folder (a scratch folder of another run)
    elsewhere = write_checkpoint(tmp_path / "scratch", size="tiny", variant="v2.1", seed=7)
    again = load_recognizer(elsewhere, device="cpu", precision="exact")
    assert again.model_dir != tiny_recognizer.model_dir
    # THEN the size is remembered, not measured again, and the cache holds one entry
    assert local.auto_batch_size(again, measure=cpu) == 2 and asked == [1, 2, 4]
    from app.platform.paths import user_dir

    stored = json.loads((user_dir("cache") / local.CALIBRATION_FILE).read_text())
    assert list(stored) == [calibrate.calibration_key(tiny_recognizer)]
    # the same network built in memory (`--random-weights` without a folder) has the same key
    in_memory = load_recognizer(random_weights=True, size="tiny", device="cpu", precision="exact")
    assert calibrate.calibration_key(in_memory) == calibrate.calibration_key(again)
    # while another network (nova's projector, other sizes) is another entry
    nova = load_recognizer(tiny_nova, device="cpu", precision="exact")
    assert calibrate.calibration_key(nova) != calibrate.calibration_key(again)
    assert local.auto_batch_size(nova, measure=cpu) == 2 and asked == [1, 2, 4] * 2


def test_a_compiled_decode_step_is_measured_apart(tiny_v21):
    """`hayai serve --compile --max-batch auto` must not reuse a size measured without compile."""
    from model import load_recognizer

    eager = load_recognizer(tiny_v21, device="cpu", precision="exact")
    compiled = load_recognizer(tiny_v21, device="cpu", precision="exact", compile=True)
    assert compiled.compiled and not eager.compiled
    assert calibrate.calibration_key(compiled) != calibrate.calibration_key(eager)


def test_ocr_batch_size_auto_measures_once_and_reads(tiny_v21, tmp_path):
    from PIL import Image

    images = []
    for i, size in enumerate([(80, 30), (200, 40), (60, 60)]):
        images.append(tmp_path / f"c{i}.png")
        Image.new("RGB", size, "white").save(images[-1])
    env = {**os.environ, "HAYAI_CONFIG_DIR": str(tmp_path / "state"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "app", "ocr", "--model", str(tiny_v21), "--json"]
    command += ["--precision", "exact", "--batch-size", "auto", "--max-new-tokens", "4"]
    first = subprocess.run(
        command + [str(p) for p in images], capture_output=True, text=True, env=env
    )
    assert first.returncode == 0, first.stderr
    assert "measuring the best batch size" in first.stderr
    assert len([json.loads(line) for line in first.stdout.splitlines()]) == 3
    second = subprocess.run(command + [str(images[0])], capture_output=True, text=True, env=env)
    assert second.returncode == 0 and "measuring" not in second.stderr  # remembered
    bad = subprocess.run(
        command[:-2] + ["--batch-size", "many", str(images[0])],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 2 and "not a whole number" in bad.stderr
