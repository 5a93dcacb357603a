"""The English lexicon of relations and roles: relation families, activity families, role
groups and the families of a frame predicate. Pure.

The planner reads a question's relation cues with it; scoring, fusion and the answer check
compare frame predicates and roles against the plan with it; the local extractor and
answerer use it for the same words. Families are matched on lemmas from
:func:`apps.language.words.lemma_candidates`.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Literal

from apps.language.words import lemma_candidates

# What an open-vocabulary frame role means for direction checks.
RoleGroup = Literal["agent", "companion", "theme", "recipient", "place", "time"]

# Canonical relation families and their surface forms, as lemmas (our choice; the paper says
# only that a plan holds "canonical relation families and their surface forms"). Frame predicates
# are verb lemmas, so a family matches a frame when one of the predicate's lemmas is a form.
# A form may belong to several families ("go": travel; "go to": attend as well).
RELATION_FAMILIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "travel": ("go", "travel", "visit", "trip", "fly", "flight", "vacation", "holiday", "tour", "journey",
                   "drive", "road trip", "abroad", "cruise"),
        "purchase": ("buy", "purchase", "order", "shop", "pay", "spend", "afford"),
        "own": ("own", "have", "possess", "keep", "owner"),
        "attend": ("attend", "join", "go to", "participate", "event", "conference", "concert", "festival",
                   "meetup", "workshop", "parade", "show", "performance", "sign up", "take up"),
        "work": ("work", "job", "career", "employ", "hire", "boss", "colleague", "coworker", "office",
                 "profession", "occupation", "company", "business", "intern", "promote", "promotion", "quit",
                 "retire"),
        "like": ("like", "love", "enjoy", "favorite", "favourite", "prefer", "fan", "adore", "passion", "hobby",
                 "interest", "dislike", "hate"),
        "create": ("paint", "write", "make", "draw", "build", "create", "compose", "design", "bake", "cook",
                   "knit", "sculpt", "craft", "sew", "record", "film", "photograph"),
        "family": ("husband", "wife", "kid", "child", "son", "daughter", "mother", "mom", "father", "dad",
                   "parent", "brother", "sister", "sibling", "grandmother", "grandma", "grandfather", "grandpa",
                   "family", "marry", "spouse", "aunt", "uncle", "cousin", "niece", "nephew"),
        "study": ("study", "learn", "school", "college", "university", "degree", "major", "course", "class",
                  "student", "graduate", "research", "teach", "lesson", "exam", "sign up"),
        "move": ("move", "relocate", "live", "reside", "home", "house", "apartment", "neighborhood"),
        "meet": ("meet", "friend", "hang out", "date", "befriend", "introduce", "catch up"),
        "pet": ("pet", "dog", "cat", "puppy", "kitten", "adopt", "rescue"),
        "play": ("play", "sport", "instrument", "game", "team", "practice"),
        "read": ("read", "book", "novel", "author"),
        "give": ("give", "gift", "present", "receive", "send"),
        "health": ("sick", "ill", "injury", "injure", "hurt", "doctor", "hospital", "surgery", "diagnose",
                   "therapy", "recover"),
        "celebrate": ("celebrate", "birthday", "party", "anniversary", "wedding"),
        "volunteer": ("volunteer", "donate", "charity", "fundraiser", "mentor"),
        "exercise": ("run", "jog", "swim", "hike", "bike", "cycle", "yoga", "gym", "workout", "marathon", "race",
                     "climb", "ski", "surf", "kayak", "camp", "fish", "sail", "skate"),
        "watch": ("watch", "movie", "series", "episode"),
        "eat": ("eat", "food", "restaurant", "dish", "meal", "dinner", "lunch", "breakfast"),
    }
)  # fmt: skip

# The families that count as doing something: an activity question that cues no family of its
# own ("What activities does Priya partake in?", "What does Sam do to relax?") asks for frames
# of any of them (our choice).
ACTIVITY_FAMILIES: tuple[str, ...] = (
    "exercise", "create", "attend", "play", "travel", "volunteer", "celebrate", "watch", "read", "study",
)  # fmt: skip

# Open-vocabulary frame roles grouped by what they say about direction (our choice). A role
# outside every group is neutral: it neither agrees nor conflicts.
ROLE_GROUPS: Mapping[RoleGroup, frozenset[str]] = MappingProxyType(
    {
        "agent": frozenset({"agent", "experiencer", "possessor", "owner", "creator", "subject", "speaker", "buyer",
                            "author", "performer", "member", "employee", "host", "giver", "sender", "attendee",
                            "participant", "actor", "student", "parent"}),
        "companion": frozenset({"companion", "partner", "co_agent", "coagent", "friend", "accompaniment"}),
        "theme": frozenset({"theme", "patient", "object", "item", "topic", "title", "content", "product", "name",
                            "attribute", "work", "gift", "pet", "child", "activity", "skill"}),
        "recipient": frozenset({"recipient", "beneficiary", "addressee", "receiver", "target", "audience"}),
        "place": frozenset({"location", "destination", "place", "venue", "origin", "site", "city", "country",
                            "employer", "organization", "school"}),
        "time": frozenset({"time", "date", "occasion", "period", "duration"}),
    }
)  # fmt: skip
_ROLE_TO_GROUP: Mapping[str, RoleGroup] = MappingProxyType(
    {role: group for group, roles in ROLE_GROUPS.items() for role in roles}
)
# Agent and companion are the two sides of one joint activity ("A hiked with B" = "B hiked
# with A"), so either satisfies a hint for the other.
_SYMMETRIC: frozenset[RoleGroup] = frozenset({"agent", "companion"})


@functools.lru_cache(maxsize=1)
def family_forms() -> tuple[Mapping[str, tuple[str, ...]], Mapping[tuple[str, str], tuple[str, ...]]]:
    """The families of each one-word form, and of each two-word form by its two words."""
    single: dict[str, list[str]] = {}
    double: dict[tuple[str, str], list[str]] = {}
    for family, forms in RELATION_FAMILIES.items():
        for form in forms:
            parts = form.split()
            if len(parts) == 1:
                single.setdefault(form, []).append(family)
            else:
                double.setdefault((parts[0], parts[1]), []).append(family)
    return (
        MappingProxyType({form: tuple(families) for form, families in single.items()}),
        MappingProxyType({pair: tuple(families) for pair, families in double.items()}),
    )


def predicate_families(predicate: str) -> frozenset[str]:
    """The relation families a frame predicate belongs to ("work_at" → work; "pick up" → none)."""
    single, double = family_forms()
    parts = [part for part in re.split(r"[\s_\-]+", predicate.lower()) if part]
    found: set[str] = set()
    for part in parts:
        for lemma in lemma_candidates(part):
            found.update(single.get(lemma, ()))
    for first, second in itertools.pairwise(parts):
        for lemma in lemma_candidates(first):
            found.update(double.get((lemma, second), ()))
    return frozenset(found)


@functools.lru_cache(maxsize=1024)
def role_group(role: str) -> RoleGroup | None:
    return _ROLE_TO_GROUP.get(re.sub(r"[\s\-]+", "_", role.strip().lower()))


def role_compatible(group: RoleGroup, allowed: Iterable[RoleGroup]) -> bool:
    allowed_set = frozenset(allowed)
    return group in allowed_set or (group in _SYMMETRIC and bool(allowed_set & _SYMMETRIC))
