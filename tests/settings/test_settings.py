"""The settings table and its INI store: defaults, persistence, corrupt files, CLI overrides, autostart."""

from __future__ import annotations

import argparse
from collections import Counter

import pytest

from app import settings as settings_module
from app.engines import local
from app.settings import Settings, convert, overrides_from_args
from app.settings.table import BY_KEY, SETTINGS


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("HAYAI_CONFIG_DIR", str(tmp_path / "cfg"))
    return tmp_path / "cfg"


def test_table_has_no_duplicate_keys_and_every_row_is_complete():
    counts = Counter(s.key for s in SETTINGS)
    assert [k for k, n in counts.items() if n > 1] == []
    for s in SETTINGS:
        assert s.help.strip(), f"{s.key} has no help text"
        assert s.type in (bool, int, str)
        assert convert(s, s.default) == s.default, (
            f"{s.key}: default does not survive its own conversion"
        )
        if s.choices:
            assert s.default in s.choices


def test_the_table_covers_what_the_issue_asks_for():
    wanted = {
        "hotkey/capture",
        "hotkey/rescan",
        "output/auto_copy",
        "model/variant",
        "model/folder",
        "model/device",
        "model/precision",
        "overlay/font_family",
        "overlay/font_size",
        "overlay/vertical",
        "history/enabled",
        "history/length",
        "app/start_at_login",
        "dictionary/trigger",
        "dictionary/han_language",
    }
    assert wanted <= set(BY_KEY)
    assert BY_KEY["output/auto_copy"].default is True
    assert BY_KEY["history/length"].default == 500
    assert BY_KEY["hotkey/capture"].default == "<ctrl>+<alt>+o"


def test_defaults_then_saved_values_survive_a_restart(qapp, config):
    # GIVEN a fresh config dir WHEN nothing is stored THEN defaults come back
    s = Settings()
    assert s.path == config / "settings.ini"
    assert s.get("overlay/font_size") == 18 and s.get("output/auto_copy") is True
    # WHEN values are saved THEN a new instance (a restart) reads them, typed
    s.update({"overlay/font_size": 24, "output/auto_copy": False, "model/device": "cpu"})
    again = Settings()
    assert again.get("overlay/font_size") == 24
    assert again.get("output/auto_copy") is False
    assert again.get("model/device") == "cpu"
    assert (config / "settings.ini").is_file()


def test_changed_reports_only_keys_whose_value_changed(qapp, config):
    s = Settings()
    seen = []
    s.changed.connect(seen.append)
    s.update({"overlay/font_size": 18, "overlay/vertical": True})  # font size is already 18
    assert seen == [frozenset({"overlay/vertical"})]
    s.update({"overlay/vertical": True})
    assert len(seen) == 1


@pytest.mark.parametrize(
    "content", [b"\x00\x01\x02garbage\xff\xfe", b"[General\nbroken", b"\xff\xfe\xfd=1\n"]
)
def test_a_corrupt_file_is_moved_aside_and_defaults_are_used(qapp, config, content):
    config.mkdir(parents=True)
    (config / "settings.ini").write_bytes(content)
    s = Settings()
    assert s.moved_aside is not None and s.moved_aside.exists()
    assert s.moved_aside.read_bytes() == content
    assert s.get("overlay/font_size") == 18
    s.set("overlay/font_size", 20)  # and the fresh file works
    assert Settings().get("overlay/font_size") == 20


def test_a_bad_value_falls_back_to_its_default_without_touching_the_rest(qapp, config):
    config.mkdir(parents=True)
    (config / "settings.ini").write_text(
        "[overlay]\nfont_size=huge\nvertical=true\n[model]\ndevice=tpu\n"
    )
    s = Settings()
    assert s.moved_aside is None
    assert s.get("overlay/font_size") == 18
    assert s.get("overlay/vertical") is True
    assert s.get("model/device") == "auto"


def test_setting_an_invalid_value_is_refused(qapp, config):
    s = Settings()
    with pytest.raises(ValueError):
        s.set("model/precision", "turbo")
    with pytest.raises(ValueError):
        s.set("history/length", 0)
    with pytest.raises(KeyError):
        s.get("no/such-key")


def test_cli_overrides_win_for_the_run_and_are_not_saved(qapp, config, tmp_path):
    args = argparse.Namespace(
        model=str(tmp_path / "weights"), hotkey="<ctrl>+<shift>+x", no_tray=False
    )
    overrides = overrides_from_args(args)
    assert overrides == {
        "model/folder": str((tmp_path / "weights").resolve()),
        "hotkey/capture": "<ctrl>+<shift>+x",
    }
    s = Settings(overrides=overrides)
    assert s.get("hotkey/capture") == "<ctrl>+<shift>+x"
    assert s.stored("hotkey/capture") == "<ctrl>+<alt>+o"
    assert local.options(s)["model_dir"] == str((tmp_path / "weights").resolve())
    s.set("overlay/vertical", True)
    assert Settings().get("hotkey/capture") == "<ctrl>+<alt>+o"  # never written to the file
    assert overrides_from_args(argparse.Namespace(model=None, hotkey=None)) == {}


def test_model_options_match_load_recognizer_keywords(qapp, config):
    opts = local.options(Settings())
    assert opts == {
        "model_dir": None,
        "variant": "v2.1",
        "device": "auto",
        "precision": "auto",
        "compile": False,
    }


def test_start_at_login_writes_and_removes_the_autostart_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(settings_module.sys, "platform", "linux")
    path = settings_module.apply_start_at_login(True)
    assert path == tmp_path / "xdg" / "autostart" / "hayai.desktop"
    text = path.read_text()
    assert "[Desktop Entry]" in text and "Exec=" in text
    settings_module.apply_start_at_login(False)
    assert not path.exists()


def test_readme_settings_table_is_the_settings_table():
    # The README's table is made from SETTINGS (app.settings.table.markdown_table): a row added, changed or
    # removed in one place and not the other fails here, with the table to paste in the message.
    from pathlib import Path

    from app.settings.table import markdown_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert "\n".join(lines) == markdown_table(), (
        "README.md's settings table differs from app/settings/table.py; paste this one:\n"
        + markdown_table()
    )
