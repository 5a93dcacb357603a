"""The tense of a clause, read off a spaCy parse (pure: spaCy is only a type here).

The writers and the graph extractor ask it which way an ambiguous date looks: a plan ("I'm
moving in June") looks forward from the mention, a report ("we moved in April") back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apps.language.dates import Tense

if TYPE_CHECKING:
    from spacy.tokens import Token

FUTURE_AUX = frozenset({"will", "shall", "'ll", "wo", "gon"})
PLAN_LEMMAS = frozenset({"plan", "intend", "hope", "want", "wish", "aim", "mean", "expect", "decide", "prepare"})


def clause_tense(token: Token) -> Tense:
    """The tense of the clause ``token`` sits in, from its governing verb: future under
    will/shall/going to/plan to and in the present progressive ("I'm moving in June", a
    plan), past for a past or perfect verb, else unmarked (present: "it is on May 27th").
    A gerund complement without auxiliaries has its governor's tense: "I went hiking on
    Monday" is a past Monday, "I love hiking on Mondays" unmarked (ADR 0148)."""
    verb = token
    for _ in range(8):
        if verb.pos_ in ("VERB", "AUX") or verb.head is verb:
            break
        verb = verb.head
    for _ in range(4):  # "went hiking": the gerund's tense is its governor's
        bare = not any(child.dep_ in ("aux", "auxpass") for child in verb.children)
        if not (verb.dep_ == "xcomp" and verb.tag_ == "VBG" and bare) or verb.head is verb or _plans(verb.head):
            break
        verb = verb.head
    auxiliaries = [child for child in verb.children if child.dep_ in ("aux", "auxpass")]
    if any(child.lower_ in FUTURE_AUX for child in auxiliaries) or _anticipates(verb, auxiliaries):
        return Tense.FUTURE
    if verb.dep_ == "xcomp" and _plans(verb.head):
        return Tense.FUTURE  # "I plan to move in June", "I'm going hiking on Monday"
    if verb.tag_ in ("VBD", "VBN") or any(child.tag_ in ("VBD", "VBN") for child in auxiliaries):
        return Tense.PAST
    if verb.tag_ == "VBG" and any(child.lemma_ == "be" for child in auxiliaries):
        return Tense.FUTURE
    return Tense.UNMARKED


def _plans(verb: Token) -> bool:
    """A verb of planning, or "going" before what is to come."""
    return verb.lemma_.lower() in PLAN_LEMMAS or (verb.lemma_ == "go" and verb.tag_ == "VBG")


def _anticipates(verb: Token, auxiliaries: list[Token]) -> bool:
    """ "I can't wait for Saturday", "Looking forward to Saturday": what one looks forward to is
    to come (ADR 0148); "I couldn't wait", "I was looking forward to it" are told of the past."""
    if any(child.tag_ in ("VBD", "VBN") or child.lower_ in ("could", "would") for child in auxiliaries):
        return False
    if verb.lemma_ == "wait":
        negated = any(child.dep_ == "neg" for child in verb.children)
        return negated and any(child.lower_ in ("ca", "can") for child in auxiliaries)
    return verb.lemma_ == "look" and any(child.lower_ == "forward" for child in verb.children)
