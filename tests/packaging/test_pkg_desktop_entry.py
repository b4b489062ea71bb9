"""Desktop integration: the desktop entry template, install() under a throwaway XDG_DATA_HOME, icons."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

import resources
from app.platform import desktop_entry

VALIDATOR = shutil.which("desktop-file-validate")
needs_validator = pytest.mark.skipif(
    VALIDATOR is None, reason="desktop-file-validate not installed (desktop-file-utils)"
)


@pytest.fixture()
def xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("APPIMAGE", raising=False)
    return tmp_path


def _validate(path) -> None:
    proc = subprocess.run([VALIDATOR, str(path)], capture_output=True, text=True)
    # desktop-file-validate exits 0 with only hints; errors make it exit 1
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _parse(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string(text)
    return parser


@needs_validator
def test_template_is_valid():
    _validate(resources.path(resources.DESKTOP_ENTRY))


def test_template_runs_hayai_and_offers_capture_actions():
    entry = _parse(resources.path(resources.DESKTOP_ENTRY).read_text(encoding="utf-8"))
    main = entry["Desktop Entry"]
    assert main["Exec"] == "hayai" and main["Icon"] == "hayai" and main["Type"] == "Application"
    assert entry["Desktop Action capture"]["Exec"] == "hayai capture"
    assert entry["Desktop Action repeat"]["Exec"] == "hayai capture --repeat"


def test_install_writes_entry_and_icon_under_xdg_data_home(xdg):
    # GIVEN an empty XDG_DATA_HOME  WHEN install() runs
    path = desktop_entry.install(["/opt/hayai/bin/hayai"])
    # THEN the entry and the icon are where menus and icon themes look
    assert path == xdg / "data" / "applications" / "hayai.desktop"
    icon = xdg / "data" / "icons" / "hicolor" / "scalable" / "apps" / "hayai.svg"
    assert icon.read_bytes() == resources.path(resources.ICON).read_bytes()
    entry = _parse(path.read_text(encoding="utf-8"))
    assert entry["Desktop Entry"]["Exec"] == "/opt/hayai/bin/hayai"
    assert entry["Desktop Action capture"]["Exec"] == "/opt/hayai/bin/hayai capture"
    assert entry["Desktop Action repeat"]["Exec"] == "/opt/hayai/bin/hayai capture --repeat"
    # and nothing is written outside the throwaway folders
    assert not (xdg / "config").exists()


@needs_validator
def test_installed_entry_is_valid_even_with_awkward_paths(xdg):
    path = desktop_entry.install(["/home/me/My Apps/hay$ai", "-m", "100%"])
    _validate(path)
    exec_line = _parse(path.read_text(encoding="utf-8"))["Desktop Entry"]["Exec"]
    # quoted per the Desktop Entry spec: "…" around the spaced path, \$ doubled for the file, %% for %
    assert exec_line == '"/home/me/My Apps/hay\\\\$ai" -m "100%%"'


def test_default_command_is_an_absolute_path_or_this_python(xdg):
    argv = desktop_entry.launch_command()
    assert argv[0].startswith("/"), argv
    assert argv[1:] in ([], ["-m", "app"])


def test_appimage_runtime_wins(xdg, monkeypatch):
    monkeypatch.setenv("APPIMAGE", "/home/me/Hayai-x86_64.AppImage")
    assert desktop_entry.launch_command() == ["/home/me/Hayai-x86_64.AppImage"]


def test_autostart_on_and_off(xdg):
    path = desktop_entry.set_autostart(True, ["/usr/bin/hayai"])
    assert path == xdg / "config" / "autostart" / "hayai.desktop"
    entry = _parse(path.read_text(encoding="utf-8"))
    assert entry["Desktop Entry"]["Exec"] == "/usr/bin/hayai"
    assert entry["Desktop Entry"]["X-GNOME-Autostart-enabled"] == "true"
    assert desktop_entry.set_autostart(False) is None
    assert not path.exists()
    assert desktop_entry.set_autostart(False) is None  # already off: no error


def test_uninstall_removes_what_install_wrote(xdg):
    desktop_entry.install(["/usr/bin/hayai"])
    desktop_entry.set_autostart(True, ["/usr/bin/hayai"])
    removed = desktop_entry.uninstall()
    assert {p.name for p in removed} == {"hayai.desktop", "hayai.svg"} and len(removed) == 3
    assert desktop_entry.uninstall() == []


def test_main_reports_paths(xdg, capsys):
    assert desktop_entry.main(None) == 0
    out = capsys.readouterr().out
    assert str(xdg / "data" / "applications" / "hayai.desktop") in out
    assert "hayai capture" in out


def test_main_reports_unwritable_folder(xdg, monkeypatch, capsys):
    blocker = xdg / "data"
    blocker.write_text("a file where the folder should be")
    assert desktop_entry.main(None) == 1
    assert "could not write the desktop entry" in capsys.readouterr().err


@pytest.mark.parametrize("name", [resources.ICON, resources.ICON_BUSY])
def test_icons_are_square_svgs_without_font_dependency(name):
    root = ET.parse(resources.path(name)).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    x, y, w, h = (float(v) for v in root.attrib["viewBox"].split())
    assert w == h > 0
    # glyphs are outlines: a <text> element would render differently (or not at all) without the font
    assert not root.findall(".//{http://www.w3.org/2000/svg}text")
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) >= 2


def test_busy_icon_differs_from_idle_icon():
    assert (
        resources.path(resources.ICON).read_bytes()
        != resources.path(resources.ICON_BUSY).read_bytes()
    )


def test_png_icon_matches_svg_size_and_is_colour():
    from PIL import Image

    with Image.open(resources.path(resources.ICON_PNG)) as png:
        assert png.size == (256, 256) and png.mode == "RGBA"
        r, g, b, a = png.getpixel(
            (128, 40)
        )  # the red background between the kana and the top corners
        assert a == 255 and r > 150 and g < 100 and b < 100, (r, g, b, a)
        assert png.getpixel((0, 0))[3] == 0  # rounded corner: transparent
