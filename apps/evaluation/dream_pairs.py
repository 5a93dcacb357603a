"""The labelled anchor pairs of the local AutoDream decision (``data/dream_pairs_v1.json``) and
their scoring. Framework-free.

``own`` pairs carry their own invented context sentences and frame ids. ``locomo`` pairs carry
only short anchor names of the LoCoMo dev split, the conversation id, the label and the reason:
the sentences a decision sees are read from the dataset when the pairs are scored (turns that
name the anchor, "speaker: text", as the service reads the anchor's evidence rows), never
stored. A pair's namesakes are the other names of its type in the same conversation (own pairs
list theirs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apps.dream.evidence import Decision, Question, Side, decide, names_resemble, naming_sentences

PAIRS_FILE = Path(__file__).resolve().parent / "data" / "dream_pairs_v1.json"


@dataclass(frozen=True)
class Scored:
    pair: dict[str, Any]
    decision: Decision

    @property
    def expected(self) -> bool:
        return bool(self.pair["label"] == "same")


def load_pairs(path: Path = PAIRS_FILE) -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = json.loads(path.read_text())["pairs"]
    for pair in pairs:
        if pair["label"] not in ("same", "different") or not pair.get("reason"):
            raise ValueError(f"pair {pair.get('id')}: a label (same / different) and a reason are required")
    return pairs


def _side(entry: Mapping[str, Any], texts: Sequence[str] | None) -> Side:
    name = str(entry["name"])
    mentions = entry.get("mentions") if texts is None else naming_sentences(texts, [name])
    return Side(name=name, mentions=tuple(mentions or ()), frames=frozenset(entry.get("frames") or ()))


def question_of(pair: Mapping[str, Any], *, turns: Sequence[str] | None = None, names: Iterable[str] = ()) -> Question:
    """The question the decision sees; ``turns`` ("speaker: text") for a LoCoMo pair, ``names``
    the other names of its conversation and type."""
    first, second = _side(pair["first"], turns), _side(pair["second"], turns)
    namesakes = pair.get("namesakes")
    if namesakes is None:
        namesakes = [
            n
            for n in dict.fromkeys(names)
            if n not in (first.name, second.name) and (names_resemble(first.name, n) or names_resemble(second.name, n))
        ]
    return Question(
        anchor_type=str(pair["type"]),
        first=first,
        second=second,
        namesakes=tuple(namesakes),
        second_type=pair.get("second_type"),
    )


def score(pairs: Sequence[dict[str, Any]], turns_of: Mapping[str, Sequence[str]]) -> list[Scored]:
    """Every pair decided; LoCoMo pairs read their conversation's turns from ``turns_of``."""
    names: dict[tuple[str, str], list[str]] = {}
    for pair in pairs:
        group = names.setdefault((str(pair.get("conversation", "")), str(pair["type"])), [])
        group += [pair["first"]["name"], pair["second"]["name"]]
    scored = []
    for pair in pairs:
        conversation = pair.get("conversation")
        turns = turns_of[str(conversation)] if pair["source"] == "locomo" else None
        group = names[(str(conversation or ""), str(pair["type"]))] if pair["source"] == "locomo" else []
        scored.append(Scored(pair=pair, decision=decide(question_of(pair, turns=turns, names=group))))
    return scored


def precision_recall(scored: Sequence[Scored]) -> dict[str, float | int]:
    """Precision and recall of "same": a merge of a different pair is a false positive."""
    tp = sum(1 for s in scored if s.expected and s.decision.same)
    fp = sum(1 for s in scored if not s.expected and s.decision.same)
    fn = sum(1 for s in scored if s.expected and not s.decision.same)
    return {
        "pairs": len(scored),
        "same": sum(1 for s in scored if s.expected),
        "merged": tp + fp,
        "true_merges": tp,
        "false_merges": fp,
        "missed": fn,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }
