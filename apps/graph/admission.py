"""The anchor admission gate (docs/architecture.md, "Graph plane"). Pure: no framework imports.

The gate judges anchor keys (``anchor_key(name)``), never surface forms, so one entry such as "user"
also blocks "User", "Users" and "the user". It rejects, with a reason:

- ``empty``: nothing left of the key (only punctuation or function words);
- ``number``: every token is a number ("2023", "$450", "2023-05-07"): numbers and dates are
  literals on a frame, never anchors;
- ``dialogue_role``: a participant role or a pronoun standing in for one ("user",
  "assistant", "Speaker A", "me"), alone or with generic modifiers;
- ``generic``: a filing term ("advice", "details", "information", "plan", "tips", ...), a
  category label ("places", "numbers"), or a phrase made only of such words and generic
  modifiers ("personal information", "other details");
- ``over_cap``: admissible, but the record already has its cap of anchors.

Entities with the same key are one anchor: the first mention names it, its aliases keep the
other surface forms, and it takes the most specific type among them.

Caps: 16 anchors per episodic record and 18 per semantic record (paper A.2). When a record
has more, the gate keeps the first by a deterministic priority:
1. arguments of the record's frames before entities no frame uses (a frame needs two
   admitted anchors; a bag of mentions needs none);
2. then by type, named kinds first: person, organization, location, event, content, object,
   method, concept, other, date;
3. then by first mention.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from apps.graph.frames import EntityType, ExtractedEntity, ExtractedFrame, RecordKind
from apps.graph.keys import anchor_key, is_number_token

EPISODIC_ANCHOR_CAP = 16
SEMANTIC_ANCHOR_CAP = 18

RejectionReason = Literal["empty", "number", "dialogue_role", "generic", "over_cap"]

TYPE_PRIORITY: tuple[EntityType, ...] = (
    "person", "organization", "location", "event", "content", "object", "method", "concept", "other", "date",
)  # fmt: skip


def _keys(words: Iterable[str]) -> frozenset[str]:
    # Written as plain words; stored as anchor keys, so the lists need not spell plural forms.
    return frozenset(anchor_key(word) for word in words)


# Filing terms: words a writer files facts under, that name no entity of their own.
GENERIC_TERMS: frozenset[str] = _keys(
    """
    advice details information info plan tips thing stuff something anything everything nothing item note
    update summary topic fact question answer conversation chat discussion message memory record entry data
    content context background reminder request recommendation suggestion preference opinion feedback issue
    matter point aspect part way lot kind sort type example instance time moment today yesterday tomorrow
    tonight someone somebody everyone everybody anyone anybody nobody person people one other others event
    activity group number amount date place title product quantity percentage language organization
    """.split()
)

# Words that make a generic phrase no less generic ("personal information", "other details").
GENERIC_MODIFIERS: frozenset[str] = _keys(
    """
    personal general key important other various more some additional basic specific relevant useful new
    recent latest further extra helpful main few many several such same different overall certain
    """.split()
)

# Participants of a dialogue and the pronouns that stand in for them.
DIALOGUE_ROLES: frozenset[str] = _keys(
    """
    user assistant speaker human ai bot chatbot system agent narrator interlocutor listener llm
    i me my myself you your yourself we us our ourselves he him his she her they them their it
    """.split()
)


# The roles a subject's own unnamed turns are written under ({"role": "user"} and no name).
SUBJECT_ROLES: frozenset[str] = frozenset({"user", "human"})

_READS_AS_A_NAME = re.compile(r"[^\W\d_]+(?:[ .'\u2019-]+[^\W\d_]+)*\.?")


# The name of a subject that has no readable one: the product's own word for whom memories are of.
UNNAMED_SUBJECT = "Subject"


def subject_speaker(display_name: str, external_id: str) -> str:
    """The name a subject's own unnamed turns speak under, so that "I" in them is an anchor
    (ADR 0095): its display name, else its external id when that reads as a name ("ana",
    "Ana Silva"; not "u_8f3a91" or a UUID), when the gate admits it; else
    :data:`UNNAMED_SUBJECT`."""
    for name, as_a_name in ((display_name.strip(), True), (external_id.strip(), False)):
        if not name or not (as_a_name or _READS_AS_A_NAME.fullmatch(name)):
            continue
        key = anchor_key(name)
        if key and rejection_reason(key) is None:
            return name
    return UNNAMED_SUBJECT


def speaks_as_subject(actor: str | None) -> bool:
    """The actor of a subject's own unnamed turn ("user")."""
    return bool(actor) and anchor_key(actor or "") in SUBJECT_ROLES


def anchor_cap(kind: RecordKind) -> int:
    return EPISODIC_ANCHOR_CAP if kind == "episodic" else SEMANTIC_ANCHOR_CAP


def rejection_reason(key: str) -> RejectionReason | None:
    """Why a canonical key can never be an anchor, or None when it can."""
    tokens = key.split()
    if not tokens:
        return "empty"
    words = [token for token in tokens if not is_number_token(token)]
    if not words:
        return "number"
    if any(word in DIALOGUE_ROLES for word in words) and all(
        word in DIALOGUE_ROLES or word in GENERIC_MODIFIERS for word in words
    ):
        return "dialogue_role"
    if all(word in GENERIC_TERMS or word in GENERIC_MODIFIERS or word in DIALOGUE_ROLES for word in words):
        return "generic"
    return None


@dataclass(frozen=True)
class AdmittedAnchor:
    key: str
    name: str  # the first mention
    type: EntityType
    aliases: tuple[str, ...] = ()  # the other surface forms with the same key


@dataclass(frozen=True)
class RejectedAnchor:
    name: str
    type: EntityType
    key: str
    reason: RejectionReason


@dataclass(frozen=True)
class Admission:
    admitted: list[AdmittedAnchor]
    rejected: list[RejectedAnchor]
    _by_key: dict[str, AdmittedAnchor] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {anchor.key: anchor for anchor in self.admitted})

    def anchor_for(self, name: str) -> AdmittedAnchor | None:
        """The admitted anchor a surface name resolves to, if any."""
        return self._by_key.get(anchor_key(name))


@dataclass
class _Group:
    key: str
    first: int
    names: list[str]
    types: list[EntityType]
    in_frame: bool = False

    @property
    def type(self) -> EntityType:
        return min(self.types, key=TYPE_PRIORITY.index)


def admit_anchors(
    entities: Sequence[ExtractedEntity], *, kind: RecordKind, frames: Sequence[ExtractedFrame] = ()
) -> Admission:
    """Admit a record's (canonicalized) entities as anchors, at most ``anchor_cap(kind)``."""
    rejected: list[RejectedAnchor] = []
    groups: dict[str, _Group] = {}
    for index, entity in enumerate(entities):
        key = anchor_key(entity.name)
        reason = rejection_reason(key)
        if reason is not None:
            rejected.append(RejectedAnchor(name=entity.name, type=entity.type, key=key, reason=reason))
            continue
        group = groups.setdefault(key, _Group(key=key, first=index, names=[], types=[]))
        if entity.name not in group.names:
            group.names.append(entity.name)
        group.types.append(entity.type)
    arguments = {anchor_key(name) for frame in frames for name in frame.argument_names}
    for key in arguments & groups.keys():
        groups[key].in_frame = True
    ranked = sorted(groups.values(), key=lambda g: (not g.in_frame, TYPE_PRIORITY.index(g.type), g.first))
    cap = anchor_cap(kind)
    kept = sorted(ranked[:cap], key=lambda g: g.first)
    for group in ranked[cap:]:
        rejected += [
            RejectedAnchor(name=name, type=group.type, key=group.key, reason="over_cap") for name in group.names
        ]
    admitted = [
        AdmittedAnchor(key=group.key, name=group.names[0], type=group.type, aliases=tuple(group.names[1:]))
        for group in kept
    ]
    return Admission(admitted=admitted, rejected=rejected)
