"""`hayai anki add|status`: the popup's code path from the command line, against the fake AnkiConnect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_ankiconnect import stand_in

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(tmp_path, dictionary_index):
    from app.dictionary import index

    config = tmp_path / "config"
    (config / "dictionary").mkdir(parents=True)
    (config / "dictionary" / index.INDEX_NAME).symlink_to(dictionary_index)

    def run(anki_url: str, *args: str, settings: str = ""):
        (config / "settings.ini").write_text(
            f"[anki]\nurl={anki_url}\n{settings}", encoding="utf-8"
        )
        env = dict(os.environ, HAYAI_CONFIG_DIR=str(config), PYTHONPATH=str(REPO))
        return subprocess.run(
            [sys.executable, "-m", "app", "anki", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )

    return run


@pytest.mark.parametrize("name", ["fake-new", "collection-old"])
def test_add_looks_the_word_up_and_makes_the_note(run, tmp_path, name):
    from PIL import Image

    with stand_in(name) as anki:
        _add_and_add_again(run, anki, tmp_path, Image)


def _add_and_add_again(run, anki, tmp_path, Image):
    crop = tmp_path / "crop.jpg"
    Image.new("RGB", (40, 20), (200, 10, 10)).save(crop)
    result = run(
        anki.url,
        "add",
        "食べる",
        "--sentence",
        "昨日パンを食べた。",
        "--image",
        str(crop),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    assert (
        reply["duplicate"] is False and reply["deck"] == "Hayai" and reply["note_type"] == "Hayai"
    )
    stored = anki.note(reply["note_id"])["fields"]
    assert anki.note(reply["note_id"])["deck"] == "Hayai"
    assert stored["Reading"] == "たべる" and "to eat" in stored["Glossary"]
    assert stored["Sentence"] == "昨日パンを<b>食べた</b>。"  # the dictionary form found inflected
    assert "[" in stored["SentenceFurigana"]  # the analyser's readings in Anki's furigana syntax
    (media,) = anki.media().values()
    assert media.startswith(b"\x89PNG")  # the JPEG reached Anki as a PNG
    # the second time: in the deck already, nothing added, exit 0
    again = run(anki.url, "add", "食べる")
    assert again.returncode == 0 and "already in “Hayai”" in again.stdout
    assert len(anki.note_ids()) == 1


def test_status_and_errors_say_what_is_wrong(run, fake_anki):
    ok = run(fake_anki.url, "status", "--json")
    assert json.loads(ok.stdout)["reachable"] is True and ok.returncode == 0
    closed = run("http://127.0.0.1:9", "status")
    assert closed.returncode == 1 and "Anki is not running" in closed.stdout
    # Anki never reached: what it holds is unknown, not missing
    assert "deck “Hayai”: unknown" in closed.stdout and "not found" not in closed.stdout
    assert "note type “Hayai”: unknown" in closed.stdout
    closed_json = json.loads(run("http://127.0.0.1:9", "status", "--json").stdout)
    assert closed_json["deck_found"] is None and closed_json["note_type_found"] is None
    failed = run("http://127.0.0.1:9", "add", "猫", "--json")
    assert failed.returncode == 1 and "Anki is not running" in json.loads(failed.stdout)["error"]
    assert "Traceback" not in failed.stderr
    # adding would fail: a configured deck that Anki lacks
    missing = run(fake_anki.url, "status", settings="deck=Gone\n")
    assert missing.returncode == 1 and "no deck “Gone”" in missing.stdout
    assert "not found" in missing.stdout


def test_status_tells_a_wrong_key_from_a_missing_one(run):
    with stand_in("fake-new", key="s3cret") as anki:
        missing = run(anki.url, "status")
        wrong = run(anki.url, "status", settings="key=nope\n")
        right = run(anki.url, "status", "--json", settings="key=s3cret\n")
    assert missing.returncode == wrong.returncode == 1
    assert "asks for an API key" in missing.stdout and "refused the API key" in wrong.stdout
    assert "AnkiConnect: answers" in wrong.stdout  # it is there; it refused us
    assert right.returncode == 0 and json.loads(right.stdout)["reachable"] is True
