"""Answer-time verification (docs/architecture.md, "Retrieval plane"). Pure.

The answering agent drafts an answer with at most :data:`MAX_RETRIEVAL_CALLS` retrieval calls;
:func:`check_answer` then decides, by rules alone, whether one more search
(:data:`MAX_EXTRA_SEARCHES`) and one rewrite are needed. It reads the plan, the draft and the
evidence ledger (the rows and facts the agent was given), never a reference answer.

Rules, in the order they are reported (the paper lists them; the detection details are ours):

- ``uncertainty`` — the draft says it does not know ("I don't know", "not sure", "no
  information", "not mentioned", …).
- ``count_without_number`` — a count question whose draft has no number (digits, number words,
  "once"/"twice", "none"/"never").
- ``count_contradicts_evidence`` — the ledger lists a count of the counted thing ("3 kids",
  "two kids") and the draft's numbers match none of the listed counts.
- ``temporal_without_time`` — a question asking for a date (or a temporal, non yes/no question)
  whose draft has no time expression (a date :func:`~apps.language.dates.find_dates` resolves,
  or a time word: year, month, weekday, "ago", "week", "before", …).
- ``unsupported_number_or_month`` — a number (digits) or month name (capitalized) in the draft
  that neither the question nor the ledger contains. The ledger includes the rows' and facts'
  own dates and the relative dates of row texts resolved against their mention times, so
  "yesterday" said on 8 May supports "7 May". Spelled numbers in the draft are not checked
  (too common in prose); spelled numbers in the ledger do support digits.
- ``incompatible_role`` — a ledger fact binds a named entity of the question in a role the
  question contradicts, and the draft names another participant of that fact ("Who gave Priya
  the necklace?" answered from ``give(agent: Priya, recipient: Dev)``).
- ``planned_in_count`` — a count question whose ledger holds a planned fact of the asked
  relation (the draft may count something that has not happened), unless the question asks
  about plans.
- ``intersection`` — every intersection question: one side may look complete on its own.

The extra search's query is the question itself for a relation query, else a query derived
from the plan: named entities, objects, keywords and date phrases (paper A.4).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Literal

from apps.graph.keys import key_tokens
from apps.language.calendar import month_alternation, month_number, weekday_alternation
from apps.language.dates import Precision, Tense, find_dates
from apps.language.lexicon import predicate_families, role_compatible, role_group
from apps.language.words import stem, words
from apps.retrieval.scoring import entity_keys
from apps.retrieval.types import FactCandidate, Plan, RowCandidate

MAX_RETRIEVAL_CALLS = 5  # retrieval calls the answering agent may make before the check (the design's value)
MAX_EXTRA_SEARCHES = 1  # searches (and rewrites) a fired check adds (paper A.4)

CheckRule = Literal[
    "uncertainty",
    "count_without_number",
    "count_contradicts_evidence",
    "temporal_without_time",
    "unsupported_number_or_month",
    "incompatible_role",
    "planned_in_count",
    "intersection",
]


@dataclass(frozen=True, slots=True)
class CheckResult:
    rules: tuple[CheckRule, ...]  # every rule that fired, in the module's order
    query: str | None  # the extra search's query; None when nothing fired

    @property
    def fired(self) -> bool:
        return bool(self.rules)

    @property
    def rule(self) -> CheckRule | None:
        return self.rules[0] if self.rules else None


_UNCERTAIN = re.compile(
    r"\bi (?:do not|don't) know\b|\bnot sure\b|\bunsure\b|\bno (?:information|info|record|mention|evidence|details)\b"
    r"|\bnot enough (?:information|evidence|context)\b|\binsufficient (?:information|evidence|context)\b"
    r"|\b(?:cannot|can't|can not) (?:be )?(?:determine|determined|tell|say|find|answer)\b"
    r"|\bunable to (?:determine|find|answer|tell)\b|\b(?:is |was )?not (?:mentioned|specified|stated|provided)\b"
    r"|\b(?:isn't|wasn't) mentioned\b|\b(?:doesn't|does not|didn't|did not) (?:say|mention|specify)\b"
    r"|\bunknown\b|\bunclear\b|\bno idea\b"
)
_NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "none": 0, "never": 0, "one": 1, "once": 1, "two": 2, "twice": 2, "three": 3, "thrice": 3,
    "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "dozen": 12,
}  # fmt: skip
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_MONTH_WORD = re.compile(
    rf"\b(?:{month_alternation(abbreviations=True, may=False)})\b\.?|\b(?-i:May)\b",
    re.IGNORECASE,
)
_TIME_WORDS = re.compile(
    rf"\b(?:19|20)\d{{2}}\b|\b(?:{month_alternation(abbreviations=False)}"
    rf"|{weekday_alternation()}|yesterday|today|tonight|tomorrow|ago"
    r"|weekends?|weeks?|months?|years?|days?|nights?|mornings?|evenings?|afternoons?|decades?|hours?|minutes?"
    r"|spring|summer|autumn|fall|winter|before|after|since|during|until|earlier|later|recently|lately)\b"
    r"|\b\d{1,2}[/-]\d{1,2}\b",
    re.IGNORECASE,
)
# Adjectives allowed between a number and the counted noun ("two young kids").
_SKIPPABLE_BEFORE_NOUN = frozenset({"young", "little", "small", "big", "more", "other", "different", "new", "old"})
_NO_MENTION = date(2000, 1, 1)  # only absolute dates of a draft matter when looking for a time


def _normalize_number(raw: str) -> str:
    try:
        value = Decimal(raw.replace(",", ""))
    except InvalidOperation:
        return raw
    return format(value.normalize(), "f")


def _number_values(text: str, *, spelled: bool) -> set[str]:
    found = {_normalize_number(match) for match in _DIGITS.findall(text)}
    if spelled:
        found |= {str(_NUMBER_WORDS[w.lower()]) for w in words(text) if w.lower() in _NUMBER_WORDS}
    return found


def _months(text: str, *, strict_case: bool) -> set[int]:
    """Month names; "may" counts only as "May". ``strict_case`` (drafts) wants every one capitalized."""
    found: set[int] = set()
    for match in _MONTH_WORD.finditer(text):
        word = match.group(0)
        if strict_case and not word[0].isupper():
            continue  # in a draft, "march" is a verb
        number = month_number(word)
        if number is not None:
            found.add(number)
    return found


def _fact_text(fact: FactCandidate) -> str:
    arms = "; ".join(f"{role}: {name}" for role, _, name in fact.roles)
    extras = [f"{name}={value}" for name, value in fact.literals.items()]
    return f"{fact.predicate}({arms}) " + " ".join(extras)


def _ledger_texts(rows: Sequence[RowCandidate], facts: Sequence[FactCandidate]) -> list[str]:
    return [row.text for row in rows] + [_fact_text(fact) for fact in facts]


def _ledger_dates(rows: Sequence[RowCandidate], facts: Sequence[FactCandidate]) -> tuple[set[str], set[int]]:
    """Numbers and months of the ledger's own times and of the relative dates its rows resolve."""
    numbers: set[str] = set()
    months: set[int] = set()

    def add(day: date, precision: Precision) -> None:
        numbers.add(str(day.year))
        if precision is not Precision.YEAR:
            months.add(day.month)
            numbers.add(str(day.month))
        if precision in (Precision.DAY, Precision.TIME, Precision.WEEK):
            numbers.add(str(day.day))

    times: list[datetime | None] = [moment for row in rows for moment in (row.event_time, row.mention_time)]
    times += [moment for fact in facts for moment in (fact.event_time, fact.mention_time)]
    for moment in times:
        if moment is not None:
            add(moment.date(), Precision.DAY)
    sources = [(row.text, row.mention_time) for row in rows]
    sources += [(" ".join(fact.literals.values()), fact.mention_time) for fact in facts]
    for text, mention in sources:
        if mention is not None:
            for resolved in find_dates(text, mention_time=mention, tense=Tense.PAST):
                add(resolved.start, resolved.precision)
    return numbers, months


def _listed_counts(texts: Iterable[str], counted: str) -> set[str]:
    """Numbers the ledger puts right before the counted noun: "3 kids", "two young kids"."""
    wanted = stem(counted)
    listed: set[str] = set()
    for text in texts:
        tokens = words(text)
        for index, token in enumerate(tokens):
            value = _number_values(token, spelled=True)
            if not value or token.lower() in {"none", "never"}:
                continue
            for follower in tokens[index + 1 : index + 4]:
                if stem(follower) == wanted:
                    listed |= value
                    break
                if follower.lower() not in _SKIPPABLE_BEFORE_NOUN:
                    break
    return listed


def _has_time(answer: str) -> bool:
    return bool(_TIME_WORDS.search(answer)) or bool(find_dates(answer, mention_time=_NO_MENTION, tense=Tense.PAST))


def _mentions(answer_tokens: frozenset[str], name: str) -> bool:
    tokens = set(key_tokens(name))
    return bool(tokens) and tokens <= answer_tokens


def _incompatible_role(plan: Plan, answer: str, facts: Sequence[FactCandidate]) -> bool:
    answer_tokens = frozenset(key_tokens(answer))
    named = entity_keys(plan)
    for fact in facts:
        for hint in plan.role_hints:
            groups = [g for role, key, _ in fact.roles if key == hint.key and (g := role_group(role)) is not None]
            if not groups or any(role_compatible(group, hint.groups) for group in groups):
                continue
            others = [name for _, key, name in fact.roles if key not in named]
            if any(_mentions(answer_tokens, name) for name in others):
                return True
    return False


def _planned_in_count(plan: Plan, facts: Sequence[FactCandidate]) -> bool:
    if plan.operator != "count" or plan.future:
        return False
    families = {family.name for family in plan.relations}
    named = set(entity_keys(plan))
    return any(
        fact.status == "planned"
        and (not families or bool(predicate_families(fact.predicate) & families))
        and (not named or bool(fact.anchor_keys & named))
        for fact in facts
    )


def followup_query(plan: Plan) -> str:
    """The extra search's query: the question for a relation query, else derived from its plan."""
    if plan.is_relation_query:
        return plan.question
    temporal = plan.temporal
    parts = [
        *plan.entities,
        *plan.objects,
        *plan.constraints.keywords,
        *(wanted.phrase for wanted in temporal.ranges),
        *temporal.relative,
    ]
    derived = " ".join(dict.fromkeys(part for part in parts if part))
    return derived or plan.question


def check_answer(
    plan: Plan,
    answer: str,
    *,
    rows: Sequence[RowCandidate] = (),
    facts: Sequence[FactCandidate] = (),
) -> CheckResult:
    """Which rules a draft answer triggers, and the query of the one extra search if any did."""
    lowered = answer.lower().replace("’", "'")
    texts = _ledger_texts(rows, facts)
    answer_numbers = _number_values(answer, spelled=True)
    rules: list[CheckRule] = []

    if _UNCERTAIN.search(lowered):
        rules.append("uncertainty")
    if plan.operator == "count":
        if not answer_numbers:
            rules.append("count_without_number")
        elif plan.counted:
            listed = _listed_counts(texts, plan.counted)
            if listed and not (answer_numbers & listed):
                rules.append("count_contradicts_evidence")
    asks_time = "date" in plan.answer_types or (plan.operator == "temporal" and "yes/no" not in plan.answer_types)
    if asks_time and not _has_time(answer):
        rules.append("temporal_without_time")
    date_numbers, date_months = _ledger_dates(rows, facts)
    supported_numbers = _number_values(plan.question, spelled=True) | date_numbers
    supported_months = _months(plan.question, strict_case=True) | date_months
    for text in texts:
        supported_numbers |= _number_values(text, spelled=True)
        supported_months |= _months(text, strict_case=False)
    if (_number_values(answer, spelled=False) - supported_numbers) or (
        _months(answer, strict_case=True) - supported_months
    ):
        rules.append("unsupported_number_or_month")
    if _incompatible_role(plan, answer, facts):
        rules.append("incompatible_role")
    if _planned_in_count(plan, facts):
        rules.append("planned_in_count")
    if plan.operator == "intersection":
        rules.append("intersection")
    return CheckResult(rules=tuple(rules), query=followup_query(plan) if rules else None)
