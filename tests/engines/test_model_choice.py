"""One answer to "which model" (app/engines/choice.py) for every caller: the tray app, `hayai ocr`,
`hayai model info|path` and `hayai serve`; and a folder that was asked for is never replaced by an
offer to download."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from app import engines
from app.cli import main
from app.engines import local
from app.engines.choice import resolve_model
from app.settings import Settings

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))  # test_dialogs' wording check


@pytest.fixture
def config(tmp_path, monkeypatch):
    """A settings file of this test's own (the user's settings, as the CLI reads them)."""
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    return tmp_path


@pytest.fixture
def crop(tmp_path) -> str:
    path = tmp_path / "line.png"
    Image.new("RGB", (96, 32), "white").save(path)
    return str(path)


def test_the_order_is_this_runs_folder_then_variant_then_settings_folder_then_download(
    config, tiny_v21
):
    settings = Settings()
    assert resolve_model(settings=settings) == resolve_model()  # the user's settings by default
    choice = resolve_model(settings=settings)
    assert (choice.folder, choice.variant, choice.origin) == (None, "v2.1", "download")
    settings.set("model/variant", "nova")
    assert resolve_model(settings=settings).variant == "nova"
    settings.set("model/folder", str(tiny_v21))
    choice = resolve_model(settings=settings)
    assert (choice.folder, choice.variant, choice.origin) == (str(tiny_v21), None, "settings")
    # for one run: --variant asks for that download, --model for that folder
    assert resolve_model(variant="v2.1", settings=settings).folder is None
    choice = resolve_model("~/weights", "nova", settings)
    assert choice.folder == str(Path.home() / "weights") and choice.variant == "nova"
    # the app's --model is an override of the setting: named as such
    app_run = Settings(overrides={"model/folder": "/elsewhere"})
    assert resolve_model(settings=app_run).origin == "--model"


def test_the_app_loads_the_folder_chosen_in_settings_and_lets_its_weights_decide(config, tiny_nova):
    settings = Settings()
    settings.update({"model/folder": str(tiny_nova), "model/variant": "v2.1"})
    options = local.options(settings)
    # the Settings variant is for the download: it must not contradict the folder's own weights
    assert options["model_dir"] == str(tiny_nova) and options["variant"] is None


def test_hayai_ocr_reads_with_the_folder_chosen_in_settings(config, tiny_v21, crop, capsys):
    assert main(["ocr", crop, "--max-new-tokens", "3"]) == 2  # nothing downloaded, nothing chosen
    assert "not installed" in capsys.readouterr().err
    Settings().set("model/folder", str(tiny_v21))
    assert main(["ocr", crop, "--max-new-tokens", "3", "--json", "--device", "cpu"]) == 0
    assert '"text"' in capsys.readouterr().out


def test_model_info_and_path_name_the_folder_chosen_in_settings(config, tiny_v21, capsys):
    assert main(["model", "info", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "in use: v2.1, the download of the model variant in Settings" in out
    assert "v2.1: not installed" in out
    Settings().set("model/folder", str(tiny_v21))
    assert main(["model", "info", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert f"model folder: {tiny_v21.resolve()}" in out
    assert "variant:  v2.1 (from the weights)" in out
    assert "in use:   the model folder chosen in Settings" in out
    assert main(["model", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(tiny_v21)
    assert main(["model", "path", "--variant", "v2.1"]) == 1  # the download itself: not there
    Settings().set("model/folder", str(config / "unplugged"))
    assert main(["model", "info"]) == 1
    err = capsys.readouterr().err
    assert "the model folder chosen in Settings" in err and "does not exist" in err


def _serve(config: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--device", "cpu", "--precision", "exact", *args],
        cwd=REPO,
        env=dict(
            os.environ,
            PYTHONPATH=str(REPO),
            HAYAI_CONFIG_DIR=str(config / "cfg"),
            OMP_NUM_THREADS="1",
            HAYAI_API_KEY="",
        ),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )


@pytest.mark.slow
def test_hayai_serve_serves_the_folder_chosen_in_settings(config, tiny_nova):
    Settings().set("model/folder", str(tiny_nova))
    process = _serve(config, "--port", "0", "--max-new-tokens", "4")
    try:
        deadline, lines = time.monotonic() + 120, []
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "OpenAI base URL" in line:
                break
        ready = [line for line in lines if "OpenAI base URL" in line]
        assert ready, "".join(lines)
        assert "hayai-nova on cpu" in ready[0]  # nova: the Settings folder, not the v2.1 default
        assert ":0/v1" not in ready[0]  # --port 0: the port it really listens on
    finally:
        process.terminate()
        process.wait(30)


def test_a_port_in_use_is_one_sentence_and_exit_2_before_the_model_loads(config, tiny_v21):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = _serve(config, "--model", str(tiny_v21), "--port", str(port))
        _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert err.strip() == (
        f"hayai serve: cannot listen on http://127.0.0.1:{port} (the port is in use); stop what "
        "uses it, or choose another port with --port."
    )


# --- the app: a folder that was asked for and cannot be used -------------------------------------


def test_a_missing_model_folder_is_said_and_no_download_is_offered(qtbot, config, monkeypatch):
    from appcore_fakes import FakeSession, fake_captures
    from wired_app import FakeHotkeys

    from app.application import Application, Parts
    from app.engines.worker import OcrWorker
    from app.flows.dictionary_hook import DictionaryHook

    monkeypatch.setattr(DictionaryHook, "make_controller", lambda self: None)
    missing = str(config / "nonexistent")
    from app.cli import build_parser
    from app.settings import overrides_from_args

    args = build_parser().parse_args(["--model", missing])
    settings = Settings(overrides=overrides_from_args(args))
    worker = OcrWorker(engines.options(settings))  # the real loader, as `hayai --model` runs it
    app = Application(
        settings,
        Parts(
            worker=worker,
            hotkeys=FakeHotkeys(),
            grab_screens=lambda: fake_captures(),
            selection_factory=FakeSession,
        ),
        use_tray=False,
    )
    notes = []
    app.toast.show_message = lambda title, message, error=False: notes.append(
        (title, message, error)
    )
    try:
        with qtbot.waitSignal(worker.error, timeout=60000):
            app.start()
        qtbot.wait(100)
        assert "model" not in app.windows.open  # no download dialog pops up
        title, message, error = notes[-1]
        assert error and f"model folder {missing} does not exist." in message
        assert "download" not in message.lower()
        assert "choose the folder that holds the model" in message
        dialog = app.windows.show_model_dialog(app.status.error[0])  # "Model: not ready" clicked
        assert dialog.download_button.isHidden() and not dialog.folder_button.isHidden()
        assert "The model folder “nonexistent” does not exist" in dialog.intro.text()
        assert "MB" not in dialog.intro.text()  # no download size: no download offered
        assert missing in dialog.details.plain_text()  # the whole path, behind Details
        dialog.close()
    finally:
        worker.stop()
        app.overlay.close()
        if app.window is not None:
            app.window.close_for_quit()
        qtbot.wait(50)


def test_the_model_dialog_names_what_a_chosen_folder_lacks(qtbot, tmp_path):
    from app.ui.model_dialog import ModelDialog

    (tmp_path / "config.json").write_text("{}")
    dialog = ModelDialog("v2.1", "", folder=str(tmp_path))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert f"The model folder “{tmp_path.name}” has no model.safetensors." in dialog.intro.text()
    assert dialog.download_button.isHidden()
    from test_dialogs import _assert_gui_wording

    _assert_gui_wording(dialog)  # the dialog's words, never the command line's
    plain = ModelDialog("v2.1", "")  # no folder asked for: the download is the offer
    qtbot.addWidget(plain)
    assert not plain.download_button.isHidden()
    assert "Download it once (624\u00a0MB)" in plain.intro.text()


def test_the_download_size_is_one_figure_everywhere():
    from app.engine_cli.model import size_text as cli_size
    from model.download import download_size, missing_message, size_text

    assert cli_size is size_text  # one formatter
    assert download_size("v2.1") == "624 MB"  # config + weights + tokenizer files, pinned
    assert "624 MB," in missing_message("v2.1")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "the model, 624 MB;" in readme
    for other in ("620 MB", "622.5 MB", "623.8 MB"):
        assert other not in readme and other not in missing_message("v2.1")


def test_model_download_fetches_the_settings_variant_unless_told(config, monkeypatch):
    import app.engine_cli.model as model_cli

    fetched = []
    monkeypatch.setattr(model_cli, "_download", lambda variant: fetched.append(variant) or 0)
    assert main(["model", "download"]) == 0
    Settings().set("model/variant", "nova")
    assert main(["model", "download"]) == 0
    assert main(["model", "download", "--variant", "v2.1"]) == 0
    assert fetched == ["v2.1", "nova", "v2.1"]


@pytest.mark.parametrize("command", ["ocr", "page", "bench", "serve"])
def test_the_help_names_the_model_used_without_model_in_its_true_order(command, capsys):
    from app.engines.choice import SETTINGS_MODEL

    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    # --model's default and the epilog: the Settings folder first, then the Settings variant's
    # download (what resolve_model answers above), not "the downloaded variant"
    assert f"--model DIR folder with the release files (default: {SETTINGS_MODEL})" in help_text
    assert f"(default: {SETTINGS_MODEL})." in help_text
    assert SETTINGS_MODEL.startswith("the model folder chosen in Settings, else the download of")
