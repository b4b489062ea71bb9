"""tokenizer.json via the `tokenizers` library (docs/model.md, "Decoding").

The special ids are looked up by their strings in the file; upstream's numeric fallbacks (bos 1,
eos 2) are wrong for this vocabulary, so a file without them is an error, never a guess.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from model.errors import TokenizerError

SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")

# transformers' clean_up_tokenization (applied only when tokenizer_config.json asks for it).
_CLEANUPS = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
]


class HayaiTokenizer:
    def __init__(self, tokenizer_json: Path, tokenizer_config: Path | None = None):
        from tokenizers import Tokenizer

        try:
            self._tok = Tokenizer.from_file(str(tokenizer_json))
        except Exception as e:  # the library raises a bare Exception on malformed JSON
            raise TokenizerError(f"{tokenizer_json} is not a valid tokenizer.json: {e}") from None
        found = {name: self._tok.token_to_id(name) for name in SPECIALS}
        ids = {name: i for name, i in found.items() if i is not None}
        missing = [name for name in SPECIALS if name not in ids]
        if missing:
            raise TokenizerError(
                f"{tokenizer_json} lacks the special token(s) {', '.join(missing)}"
            )
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = (ids[n] for n in SPECIALS)
        self.vocab_size = self._tok.get_vocab_size(with_added_tokens=True)
        self.clean_up_spaces = False
        if tokenizer_config is not None and tokenizer_config.exists():
            try:
                config = json.loads(tokenizer_config.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise TokenizerError(f"{tokenizer_config} is not valid JSON: {e}") from None
            self.clean_up_spaces = bool(config.get("clean_up_tokenization_spaces", False))

    @classmethod
    def from_dir(cls, model_dir: Path) -> HayaiTokenizer:
        return cls(Path(model_dir) / "tokenizer.json", Path(model_dir) / "tokenizer_config.json")

    @property
    def stop_ids(self) -> tuple[int, int]:
        return self.eos_id, self.pad_id

    def decode(self, ids: list[int]) -> str:
        text = self._tok.decode(list(ids), skip_special_tokens=True)
        if self.clean_up_spaces:
            for a, b in _CLEANUPS:
                text = text.replace(a, b)
        return text

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids


def strip_specials(ids: list[int], stop_ids) -> list[int]:
    """Generated ids without eos/pad (upstream removes every eos/pad, not only the trailing ones)."""
    return [i for i in ids if i not in stop_ids]


def one_line(text: str) -> str:
    """Line breaks shown as spaces (plain `hayai ocr` output)."""
    return re.sub(r"\s*\n\s*", " ", text).strip()
