"""README and .ci/run promise the same set-up: CI runs the README's test command verbatim."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = ROOT / ".ci" / "run"


def _bash_blocks(markdown: str) -> list[list[str]]:
    return [
        block.strip().splitlines() for block in re.findall(r"```bash\n(.*?)```", markdown, re.S)
    ]


def _readme_command(marker: str) -> str:
    """The one-line command in the ```bash block that follows the paragraph containing `marker`."""
    start = README.index(marker)
    block = _bash_blocks(README[start:])[0]
    assert len(block) == 1, f"the command after {marker!r} should be one line, got {block}"
    return block[0]


TEST_COMMAND = _readme_command("**Install and run the tests**")
APP_COMMAND = _readme_command("**Install and start the app**")
TORCH_PIN = next(s for s in TEST_COMMAND.split() if s.startswith("torch=="))  # torch==2.13.0
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def test_ci_runs_the_readme_test_command_verbatim():
    ci_lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    assert any(
        line == TEST_COMMAND or line.startswith(TEST_COMMAND + " ||") for line in ci_lines
    ), f".ci/run does not contain the README's test command:\n{TEST_COMMAND}"


def test_test_command_installs_cpu_torch_first_and_runs_all_of_pytest():
    steps = [s.strip() for s in TEST_COMMAND.split("&&")]
    assert steps[0] == "python3 -m venv .venv"
    torch_step = steps.index("pip install torch==2.13.0")
    install_step = steps.index('pip install -e ".[test]"')
    assert torch_step < install_step, (
        "torch must be installed before the project (else pip picks the CUDA build)"
    )
    assert steps[-1].startswith("HF_HUB_OFFLINE=1 python -m pytest")
    # no test selection: every test runs in CI, the Xvfb ones included
    pytest_args = steps[-1].split("python -m pytest", 1)[1].split()
    assert "-m" not in pytest_args and "-k" not in pytest_args, pytest_args


def test_app_command_installs_the_same_way_and_starts_hayai():
    steps = [s.strip() for s in APP_COMMAND.split("&&")]
    assert steps[:3] == [
        "python3 -m venv .venv",
        ". .venv/bin/activate",
        "sh packaging/install-torch.sh",
    ]
    assert steps[3] == "pip install ." and steps[-1] == "hayai"
    # the script installs the torch that the test command (and so CI) pins
    script = (ROOT / "packaging" / "install-torch.sh").read_text(encoding="utf-8")
    assert f"TORCH_VERSION={TORCH_PIN.split('==')[1]}\n" in script


def _run_app_command(tmp_path, system="Linux", nvidia_smi=None, env=None):
    """The README's app command, run by bash in a copy of packaging/ with stand-ins on an otherwise
    empty PATH: python3 makes the venv's activate script, pip and hayai write down how they were
    called, uname says `system`, and nvidia-smi (when given) is a script with that body.
    Returns the lines written down."""
    work, bin_dir = tmp_path / "checkout", tmp_path / "bin"
    (work / "packaging").mkdir(parents=True)
    bin_dir.mkdir()
    shutil.copy(ROOT / "packaging" / "install-torch.sh", work / "packaging")
    calls = tmp_path / "calls"
    stand_ins = {
        "python3": "mkdir -p .venv/bin && : > .venv/bin/activate",
        "pip": f'echo "pip $*" >> {calls}',
        "hayai": f'echo "hayai $*" >> {calls}',
        "uname": f"echo {system}",
    }
    if nvidia_smi is not None:
        stand_ins["nvidia-smi"] = nvidia_smi
    for name, body in stand_ins.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    for tool in ("sh", "mkdir"):  # the real ones, nothing else of the machine's
        (bin_dir / tool).symlink_to(shutil.which(tool))
    proc = subprocess.run(
        [shutil.which("bash"), "-c", APP_COMMAND],
        cwd=work,
        env={"PATH": str(bin_dir), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return calls.read_text().splitlines()


GPU = 'echo "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-0)"'


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    ("system", "nvidia_smi", "env", "torch_install"),
    [
        # a Linux machine without a GPU: the CPU build, never PyPI's CUDA build (several GB)
        ("Linux", None, None, f"pip install {TORCH_PIN} --index-url {CPU_INDEX}"),
        # the driver's tool is there but finds no GPU (it exits non-zero): the CPU build too
        ("Linux", "exit 9", None, f"pip install {TORCH_PIN} --index-url {CPU_INDEX}"),
        # an NVIDIA GPU: PyPI's build, the CUDA one on Linux
        ("Linux", GPU, None, f"pip install {TORCH_PIN}"),
        # macOS: PyPI's build (CPU, MPS on Apple silicon)
        ("Darwin", None, None, f"pip install {TORCH_PIN}"),
        # told, whatever the guess: a container image built where the GPU is not visible
        ("Linux", None, {"HAYAI_TORCH": "cuda"}, f"pip install {TORCH_PIN}"),
        ("Linux", GPU, {"HAYAI_TORCH": "cpu"}, f"pip install {TORCH_PIN} --index-url {CPU_INDEX}"),
    ],
)
def test_app_command_installs_the_torch_for_the_machine(
    tmp_path, system, nvidia_smi, env, torch_install
):
    # GIVEN the README's one line on a machine of that kind  THEN torch is installed as said,
    # before the project, and the app starts
    assert _run_app_command(tmp_path, system, nvidia_smi, env) == [
        torch_install,
        "pip install .",
        "hayai ",
    ]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_install_script_refuses_an_unknown_build(tmp_path):
    with pytest.raises(AssertionError, match="HAYAI_TORCH must be cpu or cuda"):
        _run_app_command(tmp_path, env={"HAYAI_TORCH": "rocm"})


def test_ci_script_is_strict_executable_bash():
    text = CI.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert os.access(CI, os.X_OK), ".ci/run must be executable"
    assert subprocess.run(["bash", "-n", str(CI)]).returncode == 0
    # pytest's exit status must reach the caller, "no tests collected" (5) included
    assert 'exit "$status"' in text


def test_ci_installs_the_debian_packages_the_tests_need():
    text = CI.read_text(encoding="utf-8")
    for package in [
        "xvfb",
        "xdotool",
        "xclip",
        "libxcb-cursor0",
        "libxkbcommon-x11-0",
        "libegl1",
        "fonts-noto-cjk",
        "desktop-file-utils",
    ]:
        assert re.search(rf"\b{re.escape(package)}\b", text), f"{package} not installed by .ci/run"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_ci_propagates_failure_and_no_tests_as_nonzero(tmp_path):
    # GIVEN .ci/run with the test command replaced by one that exits 5 (pytest: no tests collected)
    #       and apt-get skipped  THEN the script fails with that status
    text = CI.read_text(encoding="utf-8").replace(TEST_COMMAND, "(exit 5)")
    text = text.replace('if [ "$(id -u)" = 0 ]; then', "if false; then")
    script = tmp_path / ".ci" / "run"
    script.parent.mkdir()
    script.write_text(text)
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 5
    assert "no tests" in proc.stderr


def test_readme_sections_the_lead_and_users_rely_on():
    for heading in [
        "## Performance",
        "## Settings",
        "## Troubleshooting",
        "## Licences",
        "## Getting the weights",
        "## GPU or CPU",
        "## Usage",
        "## Platforms",
    ]:
        assert f"\n{heading}\n" in README, f"README lacks {heading}"
    for shot in [
        "overlay-horizontal.png",
        "overlay-vertical.png",
        "selection.png",
        "tray-menu.png",
        "settings.png",
    ]:
        assert f"docs/screenshots/{shot}" in README
    for topic in [
        "hayai capture",
        "hayai ocr",
        "hayai bench",
        "hayai model download",
        "hayai lookup",
        "--model DIR",
        "Screen Recording",
        "Input Monitoring",
        "Wayland",
        "Attribution-ShareAlike 4.0",
        "LGPL",
    ]:
        assert topic in README, f"README does not mention {topic}"


def test_every_image_the_readme_shows_exists():
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert images, "README shows no screenshot"
    missing = [img for img in images if not (ROOT / img).is_file()]
    assert not missing, f"README shows images that are not in the repository: {missing}"
