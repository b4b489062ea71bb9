"""Japanese deinflection: our own condition-tagged suffix rules (written for Hayai, not copied).

A rule (app/dictionary/deinflect_types.py) says: a word whose *inflected* form ends in `inflected`
and has one of the grammatical types in `takes` may come from a word ending in `base` whose type is
one of `gives`. The raw text may have any type; each later step must agree with the type the
previous step produced, and the final type must agree with the dictionary entry's part of speech
(checked by the caller: `agrees`). Steps named None are silent (a stem going back to its dictionary
form).

The rules are data: one table per family (`FAMILIES`), each built from the grammar of that family
(the godan rows, the stems of する and くる, the sound changes of slang and dialect), never from
lists of example words: the verbs' in app/dictionary/deinflect_verbs.py, the auxiliaries,
adjectives, slang and dialect in app/dictionary/deinflect_forms.py. This module is the search:
every chain of rules back from the hovered text, at most MAX_DEPTH steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from app.dictionary.deinflect_forms import FORM_FAMILIES
from app.dictionary.deinflect_types import RAW, TE, Rule
from app.dictionary.deinflect_verbs import VERB_FAMILIES


@dataclass(frozen=True)
class Candidate:
    text: str  # the dictionary-form guess
    types: frozenset[str] | None  # None: the raw text, any part of speech
    # named steps from the base outwards, e.g. ("passive/potential", "negative", "past")
    steps: tuple[str, ...]
    guess: bool = False  # a bare stem taken for its verb (食べ -> 食べる): ranked after real forms


FAMILIES: dict[str, list[Rule]] = {**VERB_FAMILIES, **FORM_FAMILIES}
RULES: list[Rule] = list(dict.fromkeys(r for rules in FAMILIES.values() for r in rules))
_BY_SUFFIX: dict[str, list[Rule]] = {}
for _rule in RULES:
    _BY_SUFFIX.setdefault(_rule.inflected, []).append(_rule)
_MAX_SUFFIX = max(len(s) for s in _BY_SUFFIX)
MAX_DEPTH = 7  # 食べさせられたくなかった is five named steps, 食べないどいた six


@lru_cache(maxsize=8192)
def deinflect(word: str) -> tuple[Candidate, ...]:
    """Every dictionary-form guess for `word`, the word itself first (types None, no steps)."""
    start = Candidate(word, None, ())
    found = [start]
    seen: set[tuple[str, frozenset[str] | None]] = {(word, None)}
    frontier = [start]
    for _ in range(MAX_DEPTH):
        next_frontier = []
        for cand in frontier:
            for rule, base in _steps_back(cand):
                if (base, rule.gives) in seen:
                    continue
                seen.add((base, rule.gives))
                new = _undo(cand, rule, base)
                found.append(new)
                if not new.guess:  # the verb of a bare stem is not deinflected further
                    next_frontier.append(new)
        frontier = next_frontier
        if not frontier:
            break
    return tuple(found)


def _steps_back(cand: Candidate):
    """(rule, the text before it) for every rule whose inflected ending `cand` has and whose
    types agree with what `cand` is, longest ending first."""
    text = cand.text
    for k in range(min(len(text), _MAX_SUFFIX), -1, -1):
        rules = _BY_SUFFIX.get(text[len(text) - k :] if k else "")
        if not rules:
            continue
        stem = text[: len(text) - k]
        for rule in rules:
            if cand.types is None:
                if k == 0:
                    continue  # an empty suffix inside a chain only (stem -> る)
            elif not (rule.takes & cand.types):
                continue  # (no step produces RAW: those rules are for the raw text)
            if stem + rule.base:
                yield rule, stem + rule.base


def _undo(cand: Candidate, rule: Rule, base: str) -> Candidate:
    """The candidate one step back from `cand` through `rule`."""
    name = rule.name
    if name == "-te" and cand.types == TE:
        name = None  # "-te iru" already says it; "-te · -te iru" would be noise
    steps = ((name,) if name else ()) + cand.steps
    guess = rule.takes is RAW
    return Candidate(base, rule.gives, steps, guess)


def agrees(candidate: Candidate, entry_pos: set[str] | frozenset[str]) -> bool:
    """Does the entry's part of speech fit the type the deinflection chain ended with?"""
    return candidate.types is None or bool(candidate.types & entry_pos)
