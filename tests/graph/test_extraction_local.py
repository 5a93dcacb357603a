"""The deterministic local graph extractor: frames from spaCy's parse, same-entity, repair."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from apps.graph.coverage import audit_coverage
from apps.graph.extraction.local import LocalGraphLLM
from apps.graph.extraction.parsing import prepared
from apps.graph.frames import ExtractedFrame, Extraction
from apps.graph.identity import frame_identity, frame_signature
from apps.language.words import count_tokens
from apps.providers.extraction_schemas import AnchorCandidate, ExtractionInput, SameEntityQuestion
from apps.providers.interfaces import MeteringContext
from apps.providers.local_usage import GRAPH_EXTRACTOR
from tests.metering import RecordingMeter

pytestmark = pytest.mark.unit

MENTIONED = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday
llm = LocalGraphLLM()


def _record(text: str, **fields: object) -> ExtractionInput:
    """An episodic record mentioned on MENTIONED; ``fields`` override (actor, kind, status, event_time)."""
    return ExtractionInput.model_validate({"kind": "episodic", "mention_time": MENTIONED, **fields, "text": text})


def _extract(text: str, metering: MeteringContext, **fields: object) -> Extraction:
    return llm.extract_frames(_record(text, **fields), metering=metering)


def _only(extraction: Extraction, predicate: str) -> ExtractedFrame:
    [frame] = [frame for frame in extraction.frames if frame.predicate == predicate]
    return frame


def test_a_flight_is_one_n_ary_frame_with_its_literals(metering: MeteringContext, meter: RecordingMeter) -> None:
    extraction = _extract("Yesterday Caroline flew from Boston to Paris with Melanie for $450.", metering)

    [flight] = extraction.frames
    assert flight.predicate == "fly"
    assert flight.roles == [
        ("agent", "Caroline"),
        ("origin", "Boston"),
        ("destination", "Paris"),
        ("companion", "Melanie"),
    ]
    assert flight.literals == {"date": "Yesterday", "price": "$450"}
    assert (flight.event_time, flight.status) == ("2023-05-07", "done")
    # Dates and prices are literals on the frame, never anchors.
    assert [(e.name, e.type) for e in extraction.entities] == [
        ("Caroline", "person"),
        ("Boston", "location"),
        ("Paris", "location"),
        ("Melanie", "person"),
    ]
    # One call, metered as the tokens of the text it read (ADR 0049).
    text = "Yesterday Caroline flew from Boston to Paris with Melanie for $450."
    assert [(r["purpose"], r["model"], r["prompt_tokens"], r["completion_tokens"]) for r in meter.records] == [
        ("extract", GRAPH_EXTRACTOR, count_tokens(text), 0)
    ]


def test_first_person_resolves_to_the_actor(metering: MeteringContext) -> None:
    extraction = _extract("I adopted a puppy named Max last Sunday.", metering, actor="Maya")

    adopt = _only(extraction, "adopt")
    assert adopt.roles == [("agent", "Maya"), ("theme", "puppy"), ("name", "Max")]
    assert (adopt.literals, adopt.event_time) == ({"date": "last Sunday"}, "2023-05-07")
    assert ("Maya", "person") in [(e.name, e.type) for e in extraction.entities]


def test_without_an_actor_first_person_is_no_anchor(metering: MeteringContext) -> None:
    assert _extract("I adopted a puppy.", metering).frames == []


def test_a_speaker_label_names_who_i_is_on_that_line(metering: MeteringContext) -> None:
    extraction = _extract("Melanie: I painted a sunset at the lake.\nCaroline: I went to Paris.", metering, actor="X")
    assert _only(extraction, "paint").roles == [("agent", "Melanie"), ("theme", "sunset"), ("location", "lake")]
    assert _only(extraction, "go").roles == [("agent", "Caroline"), ("destination", "Paris")]


def test_a_semantic_records_label_is_its_topic_not_a_speaker(metering: MeteringContext) -> None:
    nurse = _extract("Tomas: Tomas: I'm a nurse at St. Mary's Hospital.", metering, kind="semantic", actor="Tomas")
    assert _only(nurse, "be").roles == [("theme", "Tomas"), ("attribute", "nurse"), ("location", "St. Mary's Hospital")]
    lake = _extract("Lake Tahoe: I went to Lake Tahoe with Ana.", metering, kind="semantic", actor="Tomas")
    assert _only(lake, "go").roles == [("agent", "Tomas"), ("destination", "Lake Tahoe"), ("companion", "Ana")]


def test_a_semantic_records_sentence_said_again_in_its_details_is_read_once(metering: MeteringContext) -> None:
    text = "Tomas: I went to Lake Tahoe with Ana.\nI went to Lake Tahoe with Ana.\nPlaces: Lake Tahoe"
    parsed, _, _ = prepared(_record(text, kind="semantic", actor="Tomas"))
    assert parsed.count("I went to Lake Tahoe with Ana.") == 1  # parsed once, at half the cost
    going = [
        frame for frame in _extract(text, metering, kind="semantic", actor="Tomas").frames if frame.predicate == "go"
    ]
    assert [frame.roles for frame in going] == [
        [("agent", "Tomas"), ("destination", "Lake Tahoe"), ("companion", "Ana")]
    ]
    episodic, _, _ = prepared(_record("Ana: I went there.\nAna: I went there."))
    assert episodic.count("I went there.") == 2  # an episode's lines are each a turn


def test_a_frame_needs_two_distinct_anchors(metering: MeteringContext) -> None:
    assert _extract("I ran 10 km this morning.", metering, actor="Maya").frames == []
    assert _extract("Maya met Maya.", metering).frames == []
    assert _only(_extract("Maya met Jess at the gym.", metering), "meet").roles == [
        ("agent", "Maya"),
        ("theme", "Jess"),
        ("location", "gym"),
    ]


@pytest.mark.parametrize(
    "text",
    ["Did you go to Paris with Melanie?", "Caroline didn't go to Paris with Melanie.", "Hey Mel! Good to see you!"],
)
def test_questions_negations_and_small_talk_assert_nothing(text: str, metering: MeteringContext) -> None:
    assert _extract(text, metering, actor="Caroline").frames == []


def test_planned_events_keep_their_planned_date(metering: MeteringContext) -> None:
    extraction = _extract("We will fly to Paris next month to see my sister Amelie.", metering, actor="Nadia")

    fly = _only(extraction, "fly")
    assert fly.roles == [("agent", "Nadia"), ("destination", "Paris")]
    assert (fly.literals, fly.event_time, fly.status) == ({"date": "next month"}, "2023-06", "planned")
    see = _only(extraction, "see")
    assert (see.roles, see.status) == ([("agent", "Nadia"), ("theme", "Amelie")], "planned")
    assert _only(extraction, "have").roles == [("possessor", "Nadia"), ("theme", "sister"), ("name", "Amelie")]


def test_going_to_and_the_records_own_status(metering: MeteringContext) -> None:
    start = _only(_extract("I am going to start a pottery class in June.", metering, actor="Mia"), "start")
    assert (start.roles, start.event_time, start.status) == (
        [("agent", "Mia"), ("theme", "pottery class")],
        "2023-06",
        "planned",
    )
    visit = _only(_extract("Mia visits Kyoto with Ken.", metering, status="planned"), "visit")
    assert visit.status == "planned"  # nothing in the sentence says otherwise
    visited = _only(_extract("Mia visited Kyoto with Ken.", metering, status="planned"), "visit")
    assert visited.status == "done"  # the past tense does


def test_the_record_event_time_is_the_default(metering: MeteringContext) -> None:
    frame = _only(_extract("Mia visited Kyoto with Ken.", metering, event_time="2023-04"), "visit")
    assert frame.event_time == "2023-04"


def test_counts_and_measurements_stay_on_the_frame(metering: MeteringContext) -> None:
    extraction = _extract(
        "I went to the Louvre museum yesterday with my 2 kids and we spent $45 on tickets.", metering, actor="Nadia"
    )
    go = _only(extraction, "go")
    assert go.roles == [("agent", "Nadia"), ("destination", "Louvre museum"), ("companion", "kids")]
    assert go.literals == {"date": "yesterday", "count": "2 kids"}
    spend = _only(extraction, "spend")
    assert spend.literals == {"price": "$45"}
    assert not {"2", "$45", "yesterday"} & {entity.name for entity in extraction.entities}


def test_copular_and_possessive_statements(metering: MeteringContext) -> None:
    dog = _only(_extract("Caroline's dog is Max.", metering), "have")
    assert dog.roles == [("possessor", "Caroline"), ("theme", "dog"), ("name", "Max")]
    lake = _only(_extract("Lake Tahoe is a freshwater lake in the Sierra Nevada.", metering, kind="semantic"), "be")
    assert lake.roles == [("theme", "Lake Tahoe"), ("attribute", "freshwater lake"), ("location", "Sierra Nevada")]
    origin = _only(_extract("Melanie is from Sweden.", metering, kind="semantic"), "be")
    assert origin.roles == [("theme", "Melanie"), ("origin", "Sweden")]


def test_a_quoted_title_and_its_author(metering: MeteringContext) -> None:
    read = _only(_extract('I read "Becoming Nicole" by Amy Ellis Nutt last week.', metering, actor="Caroline"), "read")
    assert read.roles == [("agent", "Caroline"), ("theme", "Becoming Nicole"), ("creator", "Amy Ellis Nutt")]
    assert read.event_time == "2023-W18"


def test_the_local_writers_metadata_lines_are_not_statements(metering: MeteringContext) -> None:
    text = (
        "Caroline: I went to a LGBTQ support group yesterday.\n"
        "Said by Caroline on 2023-05-08 (message D1:3).\n"
        "Resolved dates: yesterday = 2023-05-07\n"
        "People: Caroline"
    )
    extraction = _extract(text, metering, actor="Caroline")
    assert [e.name for e in extraction.entities] == ["Caroline", "LGBTQ support group"]
    assert _only(extraction, "go").roles == [("agent", "Caroline"), ("destination", "LGBTQ support group")]


def test_extraction_is_deterministic(metering: MeteringContext) -> None:
    text = "Caroline and Melanie went camping at the lake last weekend."
    first, second = _extract(text, metering), _extract(text + " ", metering)
    assert first == second
    assert _only(first, "go").roles == [
        ("agent", "Caroline"),
        ("agent", "Melanie"),
        ("theme", "camping"),
        ("location", "lake"),
    ]


def test_a_batch_extracts_what_single_calls_extract(metering: MeteringContext) -> None:
    records = [_record(f"Caroline flew to Paris with Melanie on day {day}.", actor="Caroline") for day in range(40)]
    records.append(_record("I adopted a puppy named Max.", actor="Maya"))  # more than one batch of parses

    batch = llm.extract_frames_many(records, metering=metering)

    assert batch == [llm.extract_frames(record, metering=metering) for record in records]
    assert _only(batch[-1], "adopt").roles[0] == ("agent", "Maya")


def test_undated_runs_from_two_rows_stay_two_frames_and_a_dated_one_is_shared(metering: MeteringContext) -> None:
    subject, rows = uuid.uuid4(), (uuid.uuid4(), uuid.uuid4())
    [run] = _extract("I went for a run with Melanie.", metering, actor="Caroline").frames
    assert run.roles == [("agent", "Caroline"), ("purpose", "run"), ("companion", "Melanie")]
    undated = {frame_identity(run, kind="episodic", subject_id=subject, memory_id=row) for row in rows}
    assert len(undated) == 2

    [dated] = _extract("I went for a run with Melanie on 7 May 2023.", metering, actor="Caroline").frames
    assert dated.event_time == "2023-05-07"
    assert len({frame_identity(dated, kind="episodic", subject_id=subject, memory_id=row) for row in rows}) == 1


# --- same entity ------------------------------------------------------------------------------


def test_same_entity_is_an_exact_key_or_alias_match_among_the_candidates(metering: MeteringContext) -> None:
    questions = [
        SameEntityQuestion(name="Mobile Apps", type="object", candidates=[AnchorCandidate(name="mobile app")]),
        SameEntityQuestion(
            name="Mel", type="person", candidates=[AnchorCandidate(name="Melanie", aliases=["Mel", "Mellie"])]
        ),
        SameEntityQuestion(name="20 gallons", type="object", candidates=[AnchorCandidate(name="10 gallons")]),
        SameEntityQuestion(name="Caroline", type="person", candidates=[AnchorCandidate(name="Caroline Smith")]),
        SameEntityQuestion(name="Paris", type="location", candidates=[]),
    ]

    decisions = llm.decide_same_entity(_record("Mel told Caroline about her apps."), questions, metering=metering)

    assert [(d.name, d.same_as) for d in decisions] == [
        ("Mobile Apps", "mobile app"),
        ("Mel", "Melanie"),
        ("20 gallons", None),  # a different quantity is never the same entity
        ("Caroline", None),  # similar, but not a key or alias match: conservative
        ("Paris", None),
    ]


def test_an_alias_never_bridges_different_numbers(metering: MeteringContext) -> None:
    question = SameEntityQuestion(
        name="Form W-4", type="content", candidates=[AnchorCandidate(name="Form W-2", aliases=["Form W-4"])]
    )
    [decision] = llm.decide_same_entity(_record("Form W-4"), [question], metering=metering)
    assert decision.same_as is None


def test_at_most_four_candidates_per_entity() -> None:
    with pytest.raises(ValueError):
        SameEntityQuestion(name="x", type="other", candidates=[AnchorCandidate(name=f"c{i}") for i in range(5)])


# --- repair -------------------------------------------------------------------------------------


def _repair(text: str, metering: MeteringContext, **fields: object) -> tuple[Extraction, Extraction, list[str]]:
    record = _record(text, **fields)
    primary = llm.extract_frames(record, metering=metering)
    audit = audit_coverage(text, primary.frames)
    added = llm.repair_frames(record, frames=primary.frames, missing=audit.missing, metering=metering)
    return primary, added, audit.missing


def test_repair_adds_a_possessive_that_carries_a_missing_count(metering: MeteringContext) -> None:
    primary, added, missing = _repair("Melanie: I'm so proud of my 2 kids!", metering)

    assert primary.frames == [] and missing == ["2 kids"]
    [have] = added.frames
    assert (have.predicate, have.roles, have.literals) == (
        "have",
        [("possessor", "Melanie"), ("theme", "kids")],
        {"count": "2 kids"},
    )
    assert [(e.name, e.type) for e in added.entities] == [("Melanie", "person"), ("kids", "person")]


def test_repair_describes_a_shared_image(metering: MeteringContext) -> None:
    text = "Look at this! [shared an image: a photo of a painting of a sunset over a lake]"
    primary, added, missing = _repair(text, metering, actor="Melanie")

    assert missing == ["a photo of a painting of a sunset over a lake"]
    [share] = added.frames
    assert share.predicate == "share"
    assert share.roles == [("agent", "Melanie"), ("depicts", "painting"), ("depicts", "sunset"), ("depicts", "lake")]
    assert share.literals == {"media": "image"}
    after = audit_coverage(text, [*primary.frames, *added.frames])
    assert not after.needs_repair and after.visual_coverage == 3 / 5  # look, photo | painting, sunset, lake


def test_repair_completes_a_clause_that_holds_a_missing_value(metering: MeteringContext) -> None:
    primary, added, missing = _repair("The tank holds 10 gallons.", metering, actor="Maya")
    assert primary.frames == [] and missing == ["10 gallons"]
    [hold] = added.frames
    assert (hold.roles, hold.literals) == ([("agent", "tank"), ("source", "Maya")], {"quantity": "10 gallons"})


def test_repair_only_adds(metering: MeteringContext) -> None:
    text = "Yesterday Caroline flew from Boston to Paris with Melanie for $450 and my 3 bags."
    record = _record(text, actor="Caroline")
    primary = llm.extract_frames(record, metering=metering)

    added = llm.repair_frames(record, frames=primary.frames, missing=["3 bags", "$450"], metering=metering)

    known = {frame_signature(frame) for frame in primary.frames}
    assert added.frames and not {frame_signature(frame) for frame in added.frames} & known
    assert llm.repair_frames(record, frames=primary.frames, missing=[], metering=metering) == Extraction([], [])
    assert llm.repair_frames(record, frames=primary.frames, missing=["Tokyo"], metering=metering).frames == []


def test_an_episode_of_one_message_reads_the_parse_the_writer_made(
    monkeypatch: pytest.MonkeyPatch, metering: MeteringContext
) -> None:
    """The writer and the extractor share the process's parses: an episode whose text is its
    message's (the writer's details: the message, then provenance and dates lines) is not
    parsed again when it is indexed."""
    from apps.graph.indexing import extraction_input
    from apps.language import pipeline
    from apps.memory.models import EpisodicEvent
    from apps.memory.writing.local import LocalMemoryLLM, parse_ahead
    from apps.providers.schemas import InputMessage, WriterInput

    said = f"Yesterday I adopted a beagle called Biscuit {uuid.uuid4().hex[:6]} from the Oakland shelter."
    message = InputMessage(message_id="m1", role="user", name="Ana", content=said, timestamp=MENTIONED)
    parse_ahead([said])  # as a worker completing a batch of writes does
    parses: list[str] = []
    real = pipeline.spacy_pipeline
    monkeypatch.setattr(pipeline, "spacy_pipeline", lambda: parses.append("parse") or real())
    [draft] = LocalMemoryLLM().write_episodic(WriterInput(messages=[message]), metering=metering)
    assert draft.details.startswith(said) and "Said by Ana" in draft.details  # the writer's metadata lines
    episode = EpisodicEvent(
        summary=draft.summary, details=draft.details, actor=draft.actor, status=draft.status, mention_time=MENTIONED
    )
    extraction = llm.extract_frames(extraction_input(episode), metering=metering)
    assert extraction.frames and parses == []  # both read the one parse


@pytest.mark.parametrize(
    ("text", "predicate", "roles"),
    [
        # the subject hung on "went" read as an auxiliary; the lake taken from "one of" (ADR 0141)
        (
            "Last weekend my girlfriend and I went fishing in one of the nearby lakes.",
            "fish",
            [("agent", "girlfriend"), ("agent", "Andrew"), ("location", "nearby lakes")],
        ),
        # the list hung on the name set beside the noun
        (
            "My girlfriend, Toby and I are going camping.",
            "go",
            [("agent", "Toby"), ("agent", "Andrew"), ("theme", "camping")],
        ),
        # a night spent playing: its players are who had it, not the night
        (
            "Last Tuesday, my gf, Toby, and I had a really awesome night playing board games.",
            "play",
            [("agent", "Toby"), ("agent", "Andrew"), ("theme", "board games")],
        ),
        ("A man playing guitar sat by the door.", "play", [("agent", "man"), ("theme", "guitar")]),
    ],
)
def test_who_did_it_when_the_parser_hangs_the_subjects_elsewhere(
    text: str, predicate: str, roles: list[tuple[str, str]], metering: MeteringContext
) -> None:
    assert _only(_extract(text, metering, actor="Andrew"), predicate).roles == roles


def test_one_of_several_counts_nothing(metering: MeteringContext) -> None:
    fishing = _only(_extract("We went fishing in one of the lakes with Mia.", metering, actor="Andrew"), "fish")
    assert "count" not in fishing.literals
    bought = _only(_extract("I bought two of the red scarves for Mia.", metering, actor="Andrew"), "buy")
    assert bought.literals == {"count": "two"}


def test_the_speakers_kin_bring_the_speaker_into_their_frame(metering: MeteringContext) -> None:
    """ADR 0154: "The 2 younger kids love nature", said by Melanie, is a frame of hers too; the kin
    of someone else's ("Caroline's daughter", "your kids") are not."""
    love = _only(_extract("Melanie: The 2 younger kids love nature.", metering, actor="Melanie"), "love")
    assert ("possessor", "Melanie") in love.roles and ("agent", "younger kids") in love.roles
    son = _only(_extract("Melanie: My son loves dinosaurs.", metering, actor="Melanie"), "love")
    assert ("possessor", "Melanie") in son.roles
    played = _only(_extract("Melanie: Caroline's daughter plays violin.", metering, actor="Melanie"), "play")
    assert all(name != "Melanie" for _, name in played.roles)
    painted = _only(_extract("Melanie: My kids and I painted a sunset.", metering, actor="Melanie"), "paint")
    assert [role for role, name in painted.roles if name == "Melanie"] == ["agent"]  # there already, once


def test_a_verb_that_opens_the_speakers_sentence_without_a_subject_is_the_speakers(
    metering: MeteringContext,
) -> None:
    """ADR 0155: chat drops the "I" ("Started a dance class today"); an imperative is no statement."""
    started = _only(_extract("Jon: Started a dance class today.", metering, actor="Jon"), "start")
    assert ("agent", "Jon") in started.roles and ("theme", "dance class") in started.roles
    assert _extract("Jon: Meet Pimenta at the studio!", metering, actor="Jon").frames == []
    # the verb it continues opens the sentence; "Went", read as a name before ADR 0157
    hiked = _only(_extract("Jon: Went hiking with Gina last weekend.", metering, actor="Jon"), "hike")
    assert ("agent", "Jon") in hiked.roles
