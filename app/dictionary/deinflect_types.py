"""The grammatical types of deinflection rules, and the rule itself.

Types are JMdict POS codes (v1, v5k, vs-i, adj-i, adj-na, …) for words, plus a few tags for forms
that only exist inside a chain: `stem-i` (the continuative stem before ます/たい/ながら/そう),
`te` (the -te form before いる/ある/おく/しまう/…), `v5sp`/`v5ss` (a short causative in す, which
takes the passive, or in さす, which does not), and one tag per terminal form (`ta`, `ba`, `zu`, …)
so that such a form is only ever reached from the raw text or from a rule producing it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """Text ending in `inflected`, of one of the types `takes`, may come from text ending in
    `base` of a type in `gives`; `name` is the step's name (None: a silent step)."""

    inflected: str
    base: str
    takes: frozenset[str]
    gives: frozenset[str]
    name: str | None


def types(*tags: str) -> frozenset[str]:
    """The set of types a rule takes or gives."""
    return frozenset(tags)


def rules(rows: Iterable[tuple]) -> list[Rule]:
    """Rules from (inflected, base, takes, gives, name) rows."""
    return [
        Rule(inflected, base, takes, gives, name) for inflected, base, takes, gives, name in rows
    ]


V1 = types("v1", "v1-s")
VS = types("vs-i", "vs-s")  # する itself and compounds such as 愛する
VK = types("vk")
ADJ_I = types("adj-i", "adj-ix")
ADJ_NA = types("adj-na")
VZ = types("vz")  # 論ずる
STEM_I = types("stem-i")
TE = types("te")
NEG_N = types("neg-n")  # 食べん, 行かん: a form with a past of its own (食べんかった)
HEN = types("hen")  # Kansai 食べへん, 行かへん
RAW = types("raw")  # a rule only for the text as written (no step produces this type)
SHORT_SU = types("v5sp")  # 書かす: a short causative that has a passive (書かされる)
SHORT_SASU = types("v5ss")  # 食べさす, 話さす, さす: no passive (食べさされる is no form)
MASU, TA, BA, IMP, MAI = types("masu"), types("ta"), types("ba"), types("imp"), types("mai")
