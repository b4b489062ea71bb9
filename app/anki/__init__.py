"""Anki cards from what the user reads, through the AnkiConnect add-on (no Qt in this package).

- `connect`: the AnkiConnect client (JSON over HTTP, errors turned into plain sentences);
- `note`: the note's content, field by field, from a looked-up word and the line it was read in;
- `miner`: the one code path behind the popup's "+ Anki", "Mine this line" and `hayai anki`.
"""
