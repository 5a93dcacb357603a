"""Deterministic synthetic subject histories for the bounded-access benchmark (docs/benchmarks.md). Pure.

A history is what one subject's chat would leave behind after the write path and the graph
indexer: episodic records (who did what, with whom, where, sometimes when, with numbers) and
the anchors and frames indexing them, in exactly the property shapes
:mod:`apps.graph.indexing` writes. It is built without either, so 100k records take seconds.

How it stays realistic:

- **Entities are reused with a heavy tail.** Five hub persons (the subject herself acts in
  most records) and open-ended pools of other people, places and objects drawn by a
  Pitman–Yor process: the k-th most used entity is used about k^(-1/d) as often as the first,
  and new entities keep appearing at a rate that slows as the history grows (≈ n^d distinct
  names after n draws) — a few hubs, a long tail of specific things.
- **Records come from a few hundred templates** (30 actions × 10 contexts), so the caller
  can embed each template once and give every record its template's vector.
- **Dated and undated events**: about 45 % name a day or a month; undated frames key on the
  row id (invariant 2), dated ones on the time, so repeated mentions of one dated event share
  a frame and add citations, as indexing does. Some events are planned.
- **Numbers** (prices, counts, distances, hours) are in the text and on the frame as literals.

Everything derives from ``(seed, index)`` through one seeded RNG that is consumed record by
record, so a shorter history is an exact prefix of a longer one with the same seed: the
entities a question names in the first thousand records exist at every size. Ids derive
from the subject id (``uuid5``), so two subjects never share a row id.
"""

from __future__ import annotations

import bisect
import random
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from apps.graph.frames import EntityType, ExtractedFrame
from apps.graph.identity import frame_identity
from apps.graph.keys import anchor_key
from apps.language.dates import parse_event_time

DEFAULT_SEED = 20240611
HISTORY_START = datetime(2021, 3, 1, 9, 0, tzinfo=UTC)
SESSION_GAP = timedelta(hours=3)  # one chat session (one chunk) every ~3 hours
SESSION_LENGTH = (4, 16)  # records per session, inclusive
DATED_SHARE = 0.45
MONTH_PRECISION_SHARE = 0.2  # of dated events
PLANNED_SHARE = 0.08
SUBJECT_NAME = "Maya"
# The hub persons and how often each is the agent; the rest of the mass goes to Maya.
HUB_PERSONS: tuple[str, ...] = ("Maya", "Jonas", "Priya", "Leo", "Elena")
HUB_AGENT_WEIGHTS: tuple[float, ...] = (0.72, 0.1, 0.08, 0.06, 0.04)
HUB_COMPANION_SHARE = 0.35  # a companion/recipient slot names a hub instead of a tail person

Slot = Literal["agent", "person", "place", "object"]

# --- vocabulary ----------------------------------------------------------------------------

_FIRST = (
    "Aaron Abby Adele Ahmed Aiko Alba Alma Amara Amos Anika Arjun Astrid Aurora Bea Bruno Cai Calla Carmen "
    "Cedric Chiara Cleo Colm Dara Dario Delia Dev Dina Edgar Effie Emil Enzo Esme Ezra Farah Felix Flora "
    "Gael Greta Hana Hugo Idris Ines Ingrid Ivo Jasper Juno Kai Kasia Keiko Lars Lena Levi Lila Lorcan Luca "
    "Lumi Mara Marek Mateo Mina Nadia Nico Noor Odile Olek Omar Otto Pia Quentin Rafa Rhea Rosa Rumi Saga "
    "Sami Selma Soren Tala Teo Thea Tomas Uma Vera Wren Xavi Yara Yusuf Zara Zeno"
).split()
_LAST = (
    "Abara Baker Bianchi Brandt Castillo Chen Costa Dahl Diallo Dubois Ekwueme Ferreira Fischer Garcia Haddad "
    "Hansen Hoffmann Ibarra Iversen Jansen Kaur Kim Kowalski Larsen Lindgren Lopez Mancini Meyer Moreau "
    "Nakamura Nguyen Novak Okafor Olsen Ortega Park Petrov Quinn Rahman Reyes Rossi Sato Schmidt Silva "
    "Sokolov Tanaka Torres Varga Vogel Wagner Weber Xu Yilmaz Young Zhang Ziegler"
).split()
_PLACE_HEAD = (
    "Alder Amber Ash Aspen Bay Beacon Birch Brook Cedar Clover Copper Coral Crescent Cypress Elm Fern "
    "Fox Garnet Glen Granite Harbor Hazel Heron Highland Holly Iris Ivy Juniper Lark Laurel Linden Maple "
    "Meadow Mill Moss North Oak Orchard Pebble Pine Quarry Raven Ridge River Rowan Sage Silver Spruce "
    "Stone Summit Thistle Timber Violet Willow Wren"
).split()
_PLACE_MIDDLE = "Street Hill Lake Valley Point Square Bridge Garden Harbour Grove Park".split()
_PLACE_KIND = (
    "Market Cafe Library Park Beach Gym Museum Bakery Studio Theater Clinic Station Lake Trail Pier Bookshop "
    "Gallery Garden Bistro Pool"
).split()
_OBJECT_STYLE = (
    "antique battered bright chunky compact cozy cracked custom dented elegant faded folding glossy handmade "
    "heavy lightweight matte miniature modern old oversized painted polished portable rustic shiny sleek "
    "sturdy tiny vintage waterproof wobbly"
).split()
_OBJECT_MATERIAL = (
    "bamboo brass canvas cast-iron ceramic copper cotton denim felt glass granite leather linen maple marble "
    "oak pewter porcelain rattan silk steel suede teak titanium walnut wicker wool"
).split()
_OBJECT_NOUN = (
    "backpack basket bicycle blender bookcase bowl camera candle chair clock coat cutting-board desk drone "
    "easel flask guitar hammock headphones helmet jacket kettle keyboard kite lamp lantern laptop mirror "
    "mug notebook oven paddle pan planter projector radio rug saddle scarf skateboard sofa speaker stool "
    "suitcase sweater table teapot telescope tent thermos toolbox tripod typewriter ukulele umbrella vase "
    "violin wallet watch wok"
).split()

# --- templates -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One kind of event: its frame predicate, the roles its slots play, its text, and the
    literal it carries (``name``, low, high, format) if any."""

    predicate: str
    roles: tuple[tuple[str, Slot], ...]
    text: str
    planned_text: str | None = None
    literal: tuple[str, int, int, str] | None = None


ACTIONS: tuple[Action, ...] = (
    Action("buy", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} bought the {object} at {place} for ${value}", "{agent} plans to buy the {object} at {place}",
           ("price", 8, 900, "${}")),
    Action("visit", (("agent", "agent"), ("location", "place"), ("companion", "person")),
           "{agent} visited {place} with {person}", "{agent} is planning to visit {place} with {person}"),
    Action("meet", (("agent", "agent"), ("companion", "person"), ("location", "place")),
           "{agent} met {person} at {place}", "{agent} will meet {person} at {place}"),
    Action("give", (("agent", "agent"), ("recipient", "person"), ("theme", "object")),
           "{agent} gave {person} the {object}"),
    Action("borrow", (("agent", "agent"), ("theme", "object"), ("source", "person")),
           "{agent} borrowed the {object} from {person}"),
    Action("repair", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} repaired the {object} at {place} in {value} hours", None, ("duration", 1, 9, "{} hours")),
    Action("lose", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} lost the {object} somewhere near {place}"),
    Action("run", (("agent", "agent"), ("location", "place"), ("companion", "person")),
           "{agent} ran {value} km around {place} with {person}", None, ("distance", 2, 42, "{} km")),
    Action("attend", (("agent", "agent"), ("location", "place"), ("companion", "person")),
           "{agent} went to a concert at {place} with {person}", "{agent} will go to a concert at {place} with {person}"),
    Action("paint", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} painted the {object} at {place}"),
    Action("watch", (("agent", "agent"), ("companion", "person"), ("location", "place")),
           "{agent} watched a movie with {person} at {place}"),
    Action("order", (("agent", "agent"), ("theme", "object"), ("recipient", "person")),
           "{agent} ordered the {object} for {person} for ${value}", None, ("price", 5, 400, "${}")),
    Action("clean", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} cleaned the {object} at {place}"),
    Action("pack", (("agent", "agent"), ("theme", "object"), ("destination", "place")),
           "{agent} packed the {object} for the trip to {place}", "{agent} will pack the {object} for the trip to {place}"),
    Action("work", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} worked on the {object} at {place} for {value} hours", None, ("duration", 1, 12, "{} hours")),
    Action("play", (("agent", "agent"), ("companion", "person"), ("location", "place")),
           "{agent} played tennis with {person} at {place}", "{agent} will play tennis with {person} at {place}"),
    Action("sell", (("agent", "agent"), ("theme", "object"), ("recipient", "person")),
           "{agent} sold the {object} to {person} for ${value}", None, ("price", 10, 1500, "${}")),
    Action("photograph", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} photographed the {object} at {place}"),
    Action("donate", (("agent", "agent"), ("theme", "object"), ("recipient", "place")),
           "{agent} donated the {object} to {place}"),
    Action("drive", (("agent", "agent"), ("companion", "person"), ("destination", "place")),
           "{agent} drove {person} to {place}, {value} km each way", "{agent} will drive {person} to {place}",
           ("distance", 3, 300, "{} km")),
    Action("hike", (("agent", "agent"), ("location", "place"), ("companion", "person")),
           "{agent} hiked {value} km near {place} with {person}", "{agent} plans to hike near {place} with {person}",
           ("distance", 3, 30, "{} km")),
    Action("move", (("agent", "agent"), ("theme", "object"), ("destination", "place")),
           "{agent} moved the {object} to {place}"),
    Action("bake", (("agent", "agent"), ("instrument", "object"), ("recipient", "person")),
           "{agent} baked {value} loaves in the {object} for {person}", None, ("count", 1, 12, "{}")),
    Action("call", (("agent", "agent"), ("recipient", "person"), ("topic", "object")),
           "{agent} called {person} about the {object}"),
    Action("study", (("agent", "agent"), ("location", "place"), ("companion", "person")),
           "{agent} studied at {place} with {person} for {value} hours", None, ("duration", 1, 8, "{} hours")),
    Action("receive", (("agent", "agent"), ("theme", "object"), ("source", "person")),
           "{agent} received the {object} from {person}"),
    Action("cook", (("agent", "agent"), ("instrument", "object"), ("companion", "person")),
           "{agent} cooked dinner for {value} friends with the {object} and {person}", None, ("count", 2, 14, "{}")),
    Action("swim", (("agent", "agent"), ("location", "place"), ("companion", "person")),
           "{agent} swam {value} laps at {place} with {person}", None, ("count", 4, 80, "{}")),
    Action("read", (("agent", "agent"), ("theme", "object"), ("location", "place")),
           "{agent} read the manual of the {object} at {place}"),
    Action("celebrate", (("agent", "agent"), ("companion", "person"), ("location", "place")),
           "{agent} celebrated a birthday with {person} at {place}",
           "{agent} will celebrate a birthday with {person} at {place}"),
)  # fmt: skip

CONTEXTS: tuple[str, ...] = (
    "",
    " after work",
    " on a rainy weekend",
    " before breakfast",
    " during the holidays",
    " to celebrate the anniversary",
    " while the kids were at school",
    " on the way home",
    " despite the traffic",
    " with a lot of excitement",
)
# What a template's representative sentence (the one that gets embedded) fills its slots with.
_FILLERS = {"agent": SUBJECT_NAME, "person": "a friend", "place": "the market", "object": "the old lamp", "value": "3"}


@dataclass(frozen=True)
class Template:
    index: int
    action: Action
    context: str
    planned: bool

    @property
    def sentence(self) -> str:
        """The representative sentence of the template (its embedding stands for every record)."""
        text = self.action.planned_text if self.planned and self.action.planned_text else self.action.text
        return (text.format(**_FILLERS) + self.context + ".").replace("the the ", "the ")


def _templates() -> tuple[Template, ...]:
    templates: list[Template] = []
    for action in ACTIONS:
        for context in CONTEXTS:
            templates.append(Template(len(templates), action, context, planned=False))
        if action.planned_text:
            templates.append(Template(len(templates), action, "", planned=True))
    return tuple(templates)


TEMPLATES: tuple[Template, ...] = _templates()
# An action's templates are contiguous: its contexts, then its planned form if it has one.
_FIRST_TEMPLATE = {t.action.predicate: t.index for t in reversed(TEMPLATES)}

# --- entities ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entity:
    name: str
    type: EntityType
    key: str


class _PitmanYor:
    """Draws from an open-ended pool: a new entity with probability (θ + d·K)/(n + θ), else an
    existing one with probability (count − d)/(n + θ). Sampling of existing entities uses a
    Fenwick tree over the counts, so a draw costs O(log K)."""

    def __init__(self, rng: random.Random, make: _Namer, *, discount: float, concentration: float) -> None:
        self.rng, self.make = rng, make
        self.d, self.theta = discount, concentration
        self.entities: list[Entity] = []
        self.counts: list[int] = []
        self._tree: list[float] = [0.0]
        self.draws = 0

    def _add(self, index: int, delta: float) -> None:
        i = index + 1
        while i < len(self._tree):
            self._tree[i] += delta
            i += i & -i

    def _grow(self) -> None:
        # Rebuild a tree of double size (amortized O(1) per new entity).
        size = max(16, 2 * (len(self._tree) - 1))
        self._tree = [0.0] * (size + 1)
        for index, count in enumerate(self.counts):
            self._add(index, count - self.d)

    def _find(self, target: float) -> int:
        position, step = 0, 1 << (len(self._tree) - 1).bit_length()
        while step:
            nxt = position + step
            if nxt < len(self._tree) and self._tree[nxt] <= target:
                position = nxt
                target -= self._tree[nxt]
            step >>= 1
        return min(position, len(self.entities) - 1)

    def draw(self) -> Entity:
        n, k = self.draws, len(self.entities)
        self.draws += 1
        if k == 0 or self.rng.random() * (n + self.theta) < self.theta + self.d * k:
            if k + 1 >= len(self._tree):
                self._grow()
            self.entities.append(self.make())
            self.counts.append(1)
            self._add(k, 1 - self.d)
            return self.entities[-1]
        index = self._find(self.rng.random() * (n - self.d * k))
        self.counts[index] += 1
        self._add(index, 1.0)
        return self.entities[index]


class _Namer:
    """Unique names of one type, by anchor key, from a pattern of word lists."""

    def __init__(self, rng: random.Random, kind: EntityType, taken: set[str]) -> None:
        self.rng, self.kind, self.taken = rng, kind, taken

    def _candidate(self, attempt: int) -> str:
        pick = self.rng.choice
        if self.kind == "person":
            return f"{pick(_FIRST)} {pick(_LAST)}"
        if self.kind == "location":
            if attempt < 4:
                return f"{pick(_PLACE_HEAD)} {pick(_PLACE_KIND)}"
            return f"{pick(_PLACE_HEAD)} {pick(_PLACE_MIDDLE)} {pick(_PLACE_KIND)}"
        if attempt < 4:
            return f"{pick(_OBJECT_MATERIAL)} {pick(_OBJECT_NOUN)}".replace("-", " ")
        return f"{pick(_OBJECT_STYLE)} {pick(_OBJECT_MATERIAL)} {pick(_OBJECT_NOUN)}".replace("-", " ")

    def __call__(self) -> Entity:
        for attempt in range(1000):
            name = self._candidate(attempt)
            key = anchor_key(name)
            if key and key not in self.taken:
                self.taken.add(key)
                return Entity(name=name, type=self.kind, key=key)
        raise RuntimeError(f"ran out of {self.kind} names")


# --- records and the graph -----------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticRecord:
    """One episodic row as the write path would store it, and the one frame indexing makes of it."""

    index: int
    id: uuid.UUID
    chunk_id: uuid.UUID
    session_id: str
    template: int
    actor: str
    summary: str
    details: str
    event_type: str
    event_time: datetime | None
    event_time_precision: str
    mention_time: datetime
    status: Literal["planned", "done"]
    predicate: str
    arms: tuple[tuple[str, Entity], ...]
    literals: tuple[tuple[str, str], ...]
    frame_event_time: str | None  # ISO, reduced to its precision

    @property
    def entities(self) -> tuple[Entity, ...]:
        return tuple(dict.fromkeys(entity for _, entity in self.arms))


@dataclass
class AnchorSpec:
    """An anchor's properties as :meth:`SubjectIndexer._merge_anchors` leaves them."""

    entity: Entity
    episodic_ids: list[str] = field(default_factory=list)

    def properties(self, subject_id: uuid.UUID) -> dict[str, object]:
        named = self.entity.type in ("person", "organization", "location", "event", "content")
        return {
            "subject_id": str(subject_id),
            "key": self.entity.key,
            "name": self.entity.name,
            "type": self.entity.type,
            "aliases": [],
            "mention_count": len(self.episodic_ids),
            "admission_score": 1.0 if named else 0.5,
            "episodic_ids": list(self.episodic_ids),
            "semantic_ids": [],
        }


@dataclass
class FrameSpec:
    """A frame's properties as :meth:`SubjectIndexer._merge_frames` leaves them."""

    frame_id: str
    predicate: str
    arms: list[list[str]]
    literals: dict[str, str]
    event_time: str | None
    mention_time: str
    status: str
    citations: list[str] = field(default_factory=list)

    def properties(self, subject_id: uuid.UUID) -> dict[str, object]:
        return {
            "frame_id": self.frame_id,
            "subject_id": str(subject_id),
            "kind": "episodic",
            "predicate": self.predicate,
            "arms": [list(arm) for arm in self.arms],
            "literals": dict(self.literals),
            "event_time": self.event_time,
            "event_time_precision": parse_event_time(self.event_time).precision.value if self.event_time else "",
            "mention_time": self.mention_time,
            "status": self.status,
            "citations": list(self.citations),
        }


@dataclass
class SyntheticHistory:
    seed: int
    subject_id: uuid.UUID
    records: list[SyntheticRecord]
    anchors: dict[str, AnchorSpec]
    frames: dict[str, FrameSpec]

    @property
    def templates(self) -> tuple[Template, ...]:
        return TEMPLATES

    def anchor_names(self) -> list[str]:
        """The distinct anchor names, each once (what the anchor side table embeds)."""
        return sorted({spec.entity.name for spec in self.anchors.values()})


class _Stream:
    """The record stream of one seed: record i depends only on the seed and the records before it."""

    def __init__(self, *, seed: int, subject_id: uuid.UUID) -> None:
        self.rng = random.Random(seed)
        self.subject_id = subject_id
        taken: set[str] = {anchor_key(name) for name in HUB_PERSONS}
        self.hubs = [Entity(name=name, type="person", key=anchor_key(name)) for name in HUB_PERSONS]
        self.hub_weights = list(_cumulative(HUB_AGENT_WEIGHTS))
        self.people = _PitmanYor(self.rng, _Namer(self.rng, "person", taken), discount=0.5, concentration=12.0)
        self.places = _PitmanYor(self.rng, _Namer(self.rng, "location", taken), discount=0.6, concentration=25.0)
        self.objects = _PitmanYor(self.rng, _Namer(self.rng, "object", taken), discount=0.75, concentration=40.0)
        self.session = 0
        self.session_left = 0
        self.session_position = 0
        self.session_start = HISTORY_START
        self.chunk_id = uuid.uuid5(subject_id, "chunk:0")

    def _hub(self, exclude: Entity | None = None) -> Entity:
        while True:
            hub = self.hubs[bisect.bisect_right(self.hub_weights, self.rng.random() * self.hub_weights[-1])]
            if hub != exclude:
                return hub

    def _fill(self, slot: Slot, agent: Entity | None) -> Entity:
        if slot == "agent":
            return self._hub()
        if slot == "person":
            return self._hub(exclude=agent) if self.rng.random() < HUB_COMPANION_SHARE else self.people.draw()
        return self.places.draw() if slot == "place" else self.objects.draw()

    def record(self, index: int) -> SyntheticRecord:
        rng = self.rng
        if self.session_left == 0:
            self.session += 1
            self.session_left = rng.randint(*SESSION_LENGTH)
            self.session_position = 0
            self.session_start = HISTORY_START + SESSION_GAP * self.session + timedelta(minutes=rng.randint(0, 90))
            self.chunk_id = uuid.uuid5(self.subject_id, f"chunk:{self.session}")
        self.session_left -= 1
        self.session_position += 1
        mention = self.session_start + timedelta(seconds=40 * self.session_position)  # one turn every 40 s

        action = ACTIONS[rng.randrange(len(ACTIONS))]
        planned = action.planned_text is not None and rng.random() < PLANNED_SHARE
        first = _FIRST_TEMPLATE[action.predicate]
        template = TEMPLATES[first + len(CONTEXTS)] if planned else TEMPLATES[first + rng.randrange(len(CONTEXTS))]
        agent: Entity | None = None
        arms: list[tuple[str, Entity]] = []
        values: dict[str, str] = {}
        for role, slot in action.roles:
            entity = self._fill(slot, agent)
            if slot == "agent":
                agent = entity
            arms.append((role, entity))
            values[slot] = entity.name
        literals: tuple[tuple[str, str], ...] = ()
        if action.literal is not None:
            name, low, high, form = action.literal
            number = rng.randint(low, high)
            values["value"] = str(number)
            literals = ((name, form.format(number)),)

        event_time: datetime | None = None
        precision, frame_time = "", None
        if planned or rng.random() < DATED_SHARE:
            offset = timedelta(days=rng.randint(1, 30) if planned else -rng.randint(0, 20))
            day = (mention + offset).replace(hour=0, minute=0, second=0, microsecond=0)
            if rng.random() < MONTH_PRECISION_SHARE:
                day, precision, frame_time = day.replace(day=1), "month", f"{day.year:04d}-{day.month:02d}"
            else:
                precision, frame_time = "day", day.date().isoformat()
            event_time = day

        text = (template.action.planned_text if planned else action.text) or action.text
        sentence = text.format(**values) + template.context
        if event_time is not None:
            when = (
                f"{event_time:%B %Y}"
                if precision == "month"
                else f"{event_time:%B} {event_time.day}, {event_time.year}"
            )
            sentence = f"In {when}, {sentence}" if precision == "month" else f"On {when}, {sentence}"
        summary = sentence[0].upper() + sentence[1:] + "."
        actor = SUBJECT_NAME
        return SyntheticRecord(
            index=index,
            id=uuid.uuid5(self.subject_id, f"record:{index}"),
            chunk_id=self.chunk_id,
            session_id=f"session-{self.session}",
            template=template.index,
            actor=actor,
            summary=summary,
            details=f"{actor} said: {summary}",
            event_type=action.predicate,
            event_time=event_time,
            event_time_precision=precision,
            mention_time=mention,
            status="planned" if planned else "done",
            predicate=action.predicate,
            arms=tuple(arms),
            literals=literals,
            frame_event_time=frame_time,
        )


def _cumulative(weights: Sequence[float]) -> Iterator[float]:
    total = 0.0
    for weight in weights:
        total += weight
        yield total


def generate_history(*, size: int, subject_id: uuid.UUID, seed: int = DEFAULT_SEED) -> SyntheticHistory:
    """``size`` records of one subject and the graph indexing would make of them."""
    stream = _Stream(seed=seed, subject_id=subject_id)
    records = [stream.record(index) for index in range(size)]
    anchors: dict[str, AnchorSpec] = {}
    frames: dict[str, FrameSpec] = {}
    for record in records:
        row_id = str(record.id)
        for entity in record.entities:
            spec = anchors.setdefault(entity.key, AnchorSpec(entity))
            spec.episodic_ids.append(row_id)
        extracted = ExtractedFrame(
            predicate=record.predicate,
            roles=[(role, entity.name) for role, entity in record.arms],
            literals=dict(record.literals),
            event_time=record.frame_event_time,
            status=record.status,
        )
        frame_id = frame_identity(extracted, kind="episodic", subject_id=subject_id, memory_id=record.id)
        mention = record.mention_time.isoformat()
        frame = frames.setdefault(
            frame_id,
            FrameSpec(
                frame_id=frame_id,
                predicate=record.predicate,
                arms=[[role, entity.key] for role, entity in record.arms],
                literals={},
                event_time=record.frame_event_time,
                mention_time=mention,
                status=record.status,
            ),
        )
        frame.citations.append(row_id)
        frame.literals = {**dict(record.literals), **frame.literals}
        if record.status == "done":
            frame.status = "done"
        frame.mention_time = max(frame.mention_time, mention)
    return SyntheticHistory(seed=seed, subject_id=subject_id, records=records, anchors=anchors, frames=frames)


# --- questions -----------------------------------------------------------------------------

QuestionKind = Literal["single", "temporal", "count", "relation", "list"]


@dataclass(frozen=True)
class BenchmarkQuestion:
    kind: QuestionKind
    text: str
    names_hub_only: bool  # every entity it names is a hub person


# (kind, action predicate or None for any, pattern); slots take names from one record.
QUESTION_PATTERNS: tuple[tuple[QuestionKind, str | None, str], ...] = (
    ("single", "buy", "What did {agent} buy at {place}?"),
    ("temporal", "visit", "When did {agent} visit {place}?"),
    ("count", "visit", "How many times did {agent} visit {place}?"),
    ("relation", "meet", "Who did {agent} meet at {place}?"),
    ("single", None, 'What do I know about the "{object}"?'),
    ("relation", "give", "What did {agent} give {person}?"),
    ("temporal", "attend", "When did {agent} go to a concert at {place}?"),
    ("count", "play", "How many times did {agent} play tennis with {person}?"),
    ("relation", "borrow", "Who did {agent} borrow the {object} from?"),
    ("temporal", "hike", "When did {agent} last hike near {place}?"),
    ("list", "visit", "Which places did {agent} visit with {person}?"),
    ("count", "buy", "How many things did {agent} buy at {place}?"),
    ("relation", "sell", "Who bought the {object} from {agent}?"),
    ("single", "run", "How far did {agent} run around {place}?"),
    ("temporal", "repair", "When did {agent} repair the {object}?"),
    ("relation", "watch", "Who watched a movie with {agent} at {place}?"),
    ("list", "celebrate", "Where did {agent} celebrate birthdays with {person}?"),
)
HUB_QUESTIONS: tuple[tuple[QuestionKind, str], ...] = (
    ("relation", "What did Maya and Jonas do together?"),
    ("count", "How many times did Maya play tennis with Priya?"),
    ("temporal", "When did Leo last visit Elena?"),
    ("list", "What did Maya buy for Jonas?"),
    ("single", "What does Priya like to do with Maya?"),
)


def benchmark_questions(
    records: Sequence[SyntheticRecord], *, count: int = 50, seed: int = DEFAULT_SEED
) -> list[BenchmarkQuestion]:
    """A fixed set of questions over the given records (pass a history's first thousand records
    so the same questions apply at every size): each pattern in turn, filled from a record of
    its action chosen by a seeded RNG, plus questions that name only hub persons."""
    rng = random.Random(seed ^ 0x5EED)
    by_action: dict[str, list[SyntheticRecord]] = {}
    for record in records:
        if record.status == "done":
            by_action.setdefault(record.predicate, []).append(record)
    hubs = set(HUB_PERSONS)
    questions = [BenchmarkQuestion(kind, text, names_hub_only=True) for kind, text in HUB_QUESTIONS]
    position = 0
    while len(questions) < count:
        kind, predicate, pattern = QUESTION_PATTERNS[position % len(QUESTION_PATTERNS)]
        position += 1
        pool = list(records) if predicate is None else by_action.get(predicate, [])
        candidates = [r for r in pool if all("{" + s + "}" not in pattern or _slot(r, s) for s in _SLOTS)]
        if not candidates:
            if position > 10 * len(QUESTION_PATTERNS):
                break
            continue
        record = candidates[rng.randrange(len(candidates))]
        filled = {slot: name for slot in _SLOTS if (name := _slot(record, slot))}
        text = pattern.format(**filled)
        if any(question.text == text for question in questions):
            continue
        named = [filled[s] for s in _SLOTS if "{" + s + "}" in pattern]
        questions.append(BenchmarkQuestion(kind, text, names_hub_only=all(n in hubs for n in named)))
    return questions[:count]


_SLOTS: tuple[Slot, ...] = ("agent", "person", "place", "object")


def _slot(record: SyntheticRecord, slot: Slot) -> str | None:
    by_type = {"person": "person", "place": "location", "object": "object"}
    if slot == "agent":
        return record.arms[0][1].name
    for index, (_, entity) in enumerate(record.arms):
        if index > 0 and entity.type == by_type[slot]:
            return entity.name
    return None
