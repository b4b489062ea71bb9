"""The command line draws every `progress(what, done, total)` callback (model/progress.py) with tqdm:
a dictionary import or index build as one bar, a download as one bar per file."""

from __future__ import annotations

import re

from app.cli_progress import ProgressBars
from model.progress import fraction


def lines(text: str) -> list[str]:
    """What a terminal shows: each carriage return starts its line again."""
    return [part.rsplit("\r", 1)[-1] for part in text.split("\n") if part.rsplit("\r", 1)[-1]]


def test_one_bar_for_a_job_with_its_part_beside_it_ended_at_its_total(capsys):
    with ProgressBars("importing") as bars:
        bars("term_bank_1.json", 0, 200)
        bars("term_bank_1.json", 50, 200)
        bars("term_bank_2.json", 200, 200)  # the total: the bar ends here
        bars("done", 1.0, 1.0)  # a last report draws no second bar
    shown = lines(capsys.readouterr().err)
    assert len(shown) == 1, shown
    assert re.fullmatch(r"importing: 100%\|█+\|, term_bank_2\.json", shown[0]), shown


def test_a_fraction_job_shows_percent(capsys):
    bars = ProgressBars("building the dictionary index (once)")
    bars("words (JMdict)", 0.4, 1.0)
    bars.close()
    (shown,) = lines(capsys.readouterr().err)
    assert (
        shown.startswith("building the dictionary index (once):  40%|")
        and "words (JMdict)" in shown
    )


def test_a_download_draws_a_bar_per_file_and_none_for_a_file_already_there(capsys):
    with ProgressBars(per_item=True, unit_bytes=True) as bars:
        bars("config.json", 10, 10)  # in the cache already
        bars("config.json", 10, 10)
        bars("model.safetensors", 0, 2_000_000)
        bars("model.safetensors", 2_000_000, 2_000_000)
        bars.write("verified")
    shown = lines(capsys.readouterr().err)
    assert not any("config.json" in line for line in shown)
    assert "verified" in shown
    assert any(
        line.startswith("model.safetensors: 100%") and "2.00M/2.00M" in line for line in shown
    )


def test_fraction_of_a_total():
    assert fraction(1, 4) == 0.25 and fraction(5, 0) == 0.0 and fraction(3, 2) == 1.0
