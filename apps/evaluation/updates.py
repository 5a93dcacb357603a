"""The knowledge-update evaluation: does search return what is true *now*? Framework-free.

The data set (``data/updates_v1.json``, the project's own text, in the LoCoMo format) follows
one person over nine months: facts that change once or twice (home, job, diet, schedules, pets,
a partner's job, a brother's city), facts that never change, and a pasted lease with needle
passages. Each question names the turn that states the *current* value (``evidence``), the
turns that state superseded values (``stale_evidence``), and for a needle the passage itself.

A search's ranked rows are scored per question:

- **current at rank 1**: the first row cites a current turn;
- **current within 1,024 tokens**: a row among the first 1,024 returned tokens cites one;
- **stale above current** (questions with stale turns): a row citing a stale turn ranks above
  every row citing a current one, or no current row is returned at all;
- **needle within 512 tokens** (document questions): a row among the first 512 returned tokens
  holds the needle passage (compared case- and accent-folded, whitespace collapsed);
- **answer contains the current value**: the answer endpoint's text contains the gold answer
  or one of its accepted forms, folded the same way.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from apps.evaluation.locomo import Conversation, Question, load_conversations

DATA_FILE = Path(__file__).resolve().parent / "data" / "updates_v1.json"
CATEGORIES = {1: "present-value", 2: "past-value", 3: "unchanged-fact", 4: "document-needle"}
CURRENT_BUDGET = 1024
NEEDLE_BUDGET = 512
METRICS = ("current_at_1", "current_within_budget", "stale_above_current", "needle_within_budget", "answer_match")


@dataclass(frozen=True)
class Needle:
    dia_id: str  # the turn the document was pasted in
    text: str  # the passage, verbatim
    start: int  # its character offsets in that turn
    end: int


@dataclass(frozen=True)
class UpdateQuestion:
    question: Question
    category: str
    stale_evidence: tuple[str, ...]
    accepted: tuple[str, ...]  # the gold answer first, then other forms of the same value
    needle: Needle | None


@dataclass(frozen=True)
class ReturnedRow:
    dia_ids: tuple[str, ...]  # the turns the row cites (its provenance)
    text: str
    tokens: int


@dataclass(frozen=True)
class QuestionScore:
    category: str
    current_at_1: bool
    current_within_budget: bool
    stale_above_current: bool | None  # None: the question has no stale turn
    needle_within_budget: bool | None  # None: not a document question
    answer_match: bool | None  # None: no answer was asked for


def load_update_set(path: Path = DATA_FILE) -> tuple[Conversation, list[UpdateQuestion]]:
    """The conversation (through the LoCoMo loader) and its questions with their update fields."""
    conversations = load_conversations(path.parent, path.name)
    if len(conversations) != 1:
        raise ValueError(f"{path} holds {len(conversations)} conversations; the update set is one person")
    conversation = conversations[0]
    raw = json.loads(path.read_text())[0]["qa"]
    questions = []
    for question, item in zip(conversation.questions, raw, strict=True):
        needle = item.get("needle")
        questions.append(
            UpdateQuestion(
                question=question,
                category=CATEGORIES[question.category],
                stale_evidence=tuple(item.get("stale_evidence", ())),
                accepted=(question.answer, *item.get("accept", ())),
                needle=Needle(needle["dia_id"], needle["text"], needle["start"], needle["end"]) if needle else None,
            )
        )
    return conversation, questions


def first_sessions(
    conversation: Conversation, questions: Sequence[UpdateQuestion], count: int
) -> tuple[Conversation, list[UpdateQuestion]]:
    """The first ``count`` sessions, with only the questions whose every cited turn is in them."""
    sessions = conversation.sessions[:count]
    kept = {turn.dia_id for session in sessions for turn in session.turns}
    chosen = [q for q in questions if set(q.question.evidence) | set(q.stale_evidence) <= kept]
    sliced = Conversation(conversation.sample_id, conversation.speakers, sessions, [q.question for q in chosen])
    return sliced, chosen


def fold(text: str) -> str:
    """Lower case, accents and punctuation dropped, whitespace collapsed: "Guillotière!" → "guillotiere"."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(re.sub(r"[^\w€:]+", " ", plain).split())


def _first_rank(rows: Sequence[ReturnedRow], turns: set[str]) -> int | None:
    return next((rank for rank, row in enumerate(rows) if turns & set(row.dia_ids)), None)


def _within(rows: Sequence[ReturnedRow], budget: int) -> list[ReturnedRow]:
    """The rows, in rank order, whose tokens fit ``budget`` (stopping at the first that does not)."""
    kept, used = [], 0
    for row in rows:
        if used + row.tokens > budget:
            break
        used += row.tokens
        kept.append(row)
    return kept


def answer_contains(answer: str, accepted: Iterable[str]) -> bool:
    folded = f" {fold(answer)} "
    return any(f" {fold(form)}" in folded for form in accepted if fold(form))


def score_question(question: UpdateQuestion, rows: Sequence[ReturnedRow], answer: str | None) -> QuestionScore:
    current = set(question.question.evidence)
    current_rank = _first_rank(rows, current)
    stale_above: bool | None = None
    if question.stale_evidence:
        stale_rank = _first_rank(rows, set(question.stale_evidence))
        stale_above = stale_rank is not None and (current_rank is None or stale_rank < current_rank)
    needle_found: bool | None = None
    if question.needle is not None:
        passage = fold(question.needle.text)
        needle_found = any(passage in fold(row.text) for row in _within(rows, NEEDLE_BUDGET))
    return QuestionScore(
        category=question.category,
        current_at_1=current_rank == 0,
        current_within_budget=_first_rank(_within(rows, CURRENT_BUDGET), current) is not None,
        stale_above_current=stale_above,
        needle_within_budget=needle_found,
        answer_match=None if answer is None else answer_contains(answer, question.accepted),
    )


@dataclass(frozen=True)
class Figure:
    hits: int
    questions: int  # the questions the metric applies to

    @property
    def share(self) -> float | None:
        return self.hits / self.questions if self.questions else None


def summarize(scores: Sequence[QuestionScore]) -> dict[str, dict[str, Figure]]:
    """Each metric per category (in :data:`CATEGORIES` order) and over all questions ("all")."""
    groups: dict[str, list[QuestionScore]] = defaultdict(list)
    for score in scores:
        groups[score.category].append(score)
        groups["all"].append(score)
    table: dict[str, dict[str, Figure]] = {}
    for category in [*CATEGORIES.values(), "all"]:
        group = groups.get(category, [])
        table[category] = {}
        for metric in METRICS:
            values = [value for score in group if (value := getattr(score, metric)) is not None]
            table[category][metric] = Figure(hits=sum(values), questions=len(values))
    return table
