"""Currency in every read, through the API on a real graph: a changed value is marked and
ranked after what replaced it for a question about the present, and reachable for one about
the past; facts, memory reads, graph frames and answers carry the same marks."""

from __future__ import annotations

from typing import Any

import pytest

from apps.graph.services import index_chunk
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant

SAID = "2024-03-04T09:00:00+00:00"
CURRENCY = {"current", "superseded_by", "valid_from", "valid_to"}


def _write(tenant: Tenant, text: str, message_id: str) -> None:
    messages = [{"id": message_id, "role": "user", "name": "Nadia", "content": text, "timestamp": SAID}]
    tenant.write("nadia", {"messages": messages}, index=True)


def _patch(tenant: Tenant, memory_type: str, record_id: str, summary: str) -> dict[str, Any]:
    response = tenant.client().patch(
        f"/v1/subjects/nadia/memories/{memory_type}/{record_id}", {"changes": {"summary": summary}}, format="json"
    )
    assert response.status_code == 200, response.content
    new = response.json()
    with organization_scope(tenant.id):
        index_chunk(chunk_id=new["provenance"]["chunk_id"])
    return new  # type: ignore[no-any-return]


def _search(tenant: Tenant, query: str) -> dict[str, Any]:
    response = tenant.client().post("/v1/subjects/nadia/search", {"query": query}, format="json")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


def _said(*texts: str) -> Tenant:
    """A tenant whose subject Nadia said ``texts``, one message each (m1, m2, …), indexed."""
    tenant = make_tenant()
    tenant.subject("nadia")
    for number, text in enumerate(texts, start=1):
        _write(tenant, text, f"m{number}")
    return tenant


def _keys(tenant: Tenant) -> dict[str, str]:
    """Each statement's text, with the key it was filed under."""
    with organization_scope(tenant.id):
        return dict(SemanticItem.objects.values_list("summary", "attribute"))


def _replaced_first(tenant: Tenant, query: str, new: str, old: str) -> None:
    """The row ``new`` comes first and is current; the row starting with ``old`` is returned, no
    longer current."""
    rows = _search(tenant, query)["rows"]
    assert rows[0]["text"] == new and rows[0]["current"], rows[:3]
    assert next(row for row in rows if row["text"].startswith(old))["current"] is False


def _first_fact(tenant: Tenant, query: str) -> str:
    """The text of the first row a search returns, which must be a statement (semantic row)."""
    first = _search(tenant, query)["rows"][0]
    assert first["type"] == "semantic", first
    return first["text"]  # type: ignore[no-any-return]


def _diet_changed(tenant: Tenant) -> tuple[str, str]:
    """A vegetarian diet, replaced by a vegan one: (old row id, new row id)."""
    tenant.subject("nadia")
    _write(tenant, "I'm allergic to peanuts.", "m1")
    _write(tenant, "I'm vegetarian.", "m2")
    with organization_scope(tenant.id):
        old = SemanticItem.objects.get(summary__contains="vegetarian")
    new = _patch(tenant, "semantic", str(old.id), "Nadia: I'm vegan.")
    return str(old.id), new["id"]


def test_a_present_question_gets_the_current_diet_first_and_the_old_one_after_it_marked() -> None:
    tenant = make_tenant()
    old, new = _diet_changed(tenant)
    rows = _search(tenant, "What diet does Nadia follow?")["rows"]
    assert all(CURRENCY <= set(row) for row in rows)
    ids = [row["id"] for row in rows]
    assert new in ids and old in ids
    assert ids.index(new) < ids.index(old)
    by_id = {row["id"]: row for row in rows}
    assert (by_id[new]["current"], by_id[new]["superseded_by"], by_id[new]["valid_to"]) == (True, None, None)
    assert (by_id[old]["current"], by_id[old]["superseded_by"]) == (False, new)
    assert by_id[old]["valid_to"] == by_id[new]["valid_from"] is not None
    assert by_id[old]["valid_from"].startswith("2024-03-04")  # the mention time of its message
    # Every superseded row comes after what replaced it (ADR 0099: right after it when it
    # ranked above it), and one whose replacement is not returned comes after every current row.
    for position, row in enumerate(rows):
        if row["superseded_by"] in ids:
            assert ids.index(row["superseded_by"]) < position
        elif not row["current"]:
            assert all(not later["current"] for later in rows[position:])


def test_a_question_about_the_past_reaches_the_old_value() -> None:
    tenant = make_tenant()
    old, new = _diet_changed(tenant)
    result = _search(tenant, "What did Nadia eat before she went vegan?")
    by_id = {row["id"]: row for row in result["rows"]}
    assert old in by_id and by_id[old]["current"] is False and by_id[old]["superseded_by"] == new


def test_flat_mode_marks_its_rows_current() -> None:
    tenant = make_tenant()
    old, new = _diet_changed(tenant)
    response = tenant.client().post(
        "/v1/subjects/nadia/search", {"query": "What diet does Nadia follow?", "mode": "flat"}, format="json"
    )
    rows = response.json()["rows"]
    assert new in {row["id"] for row in rows} and old not in {row["id"] for row in rows}  # flat reads current rows
    # ... and a turn whose only fact was replaced is marked so (superseded by the manual update).
    marked = {row["id"]: (row["current"], row["superseded_by"]) for row in rows if row["type"] == "episodic"}
    with organization_scope(tenant.id):
        turn = str(EpisodicEvent.objects.get(summary__contains="vegetarian").id)
    assert marked.get(turn, (False, new)) == (False, new)
    assert all(row["current"] is True for row in rows if row["id"] != turn)
    assert all(row["valid_from"] is not None for row in rows)


def _turn(tenant: Tenant, words: str) -> dict[str, Any]:
    listed = tenant.client().get("/v1/subjects/nadia/memories", {"type": "episodic", "limit": 100}).json()["results"]
    return next(row for row in listed if words in row["content"]["summary"])


def test_a_turn_whose_facts_were_all_replaced_reads_as_replaced_by_the_turn_of_the_new_value() -> None:
    tenant = make_tenant()
    tenant.subject("nadia")
    _write(tenant, "I live in Porto. I'm allergic to peanuts.", "m1")  # one fact replaced, one still current
    _write(tenant, "I'm vegetarian.", "m2")
    _write(tenant, "I've gone fully vegan.", "m3")
    _write(tenant, "We moved from Porto to Lyon last week.", "m4")
    porto, vegetarian, vegan = _turn(tenant, "Porto."), _turn(tenant, "vegetarian"), _turn(tenant, "vegan")
    assert (vegetarian["current"], vegetarian["superseded_by"]) == (False, vegan["id"])
    assert vegetarian["valid_to"] == vegan["valid_from"] is not None
    assert (porto["current"], porto["superseded_by"]) == (True, None)  # the allergy still holds
    assert (vegan["current"], _turn(tenant, "Lyon")["current"]) == (True, True)
    got = tenant.client().get(f"/v1/subjects/nadia/memories/episodic/{vegetarian['id']}").json()
    assert (got["current"], got["superseded_by"]) == (False, vegan["id"])


def test_a_present_question_gets_the_current_value_of_the_asked_key_first() -> None:
    tenant = make_tenant()
    tenant.subject("nadia")
    _write(tenant, "My commute is forty minutes by bus.", "m1")
    _write(tenant, "I'm a nurse at the children's hospital.", "m2")
    _write(tenant, "I quit the hospital and joined a small design studio.", "m3")
    rows = _search(tenant, "What is Nadia's job?")["rows"]
    assert rows[0]["type"] == "semantic" and "design studio" in rows[0]["text"] and rows[0]["current"] is True
    ids = [row["id"] for row in rows]
    nurse = _turn(tenant, "nurse")
    assert nurse["current"] is False  # its one fact, the job, was replaced
    assert nurse["id"] not in ids or ids.index(nurse["id"]) > 0
    answer = tenant.client().post("/v1/subjects/nadia/answer", {"query": "What is Nadia's job?"}, format="json")
    assert "design studio" in answer.json()["answer"]


def test_after_a_patch_facts_and_frames_mark_the_old_citation_and_cite_the_new_one() -> None:
    tenant = make_tenant()
    tenant.subject("nadia")
    _write(tenant, "I adopted a rabbit named Bolacha in Porto.", "m1")
    client = tenant.client()
    listed = client.get("/v1/subjects/nadia/memories", {"type": "episodic"}).json()["results"]
    assert [row["current"] for row in listed] == [True]
    old = listed[0]["id"]
    new = _patch(tenant, "episodic", old, "Nadia: I adopted a greyhound named Pimenta in Lyon.")["id"]

    result = _search(tenant, "What pet did Nadia adopt?")
    assert any(old in fact["citations"] and not fact["current"] for fact in result["facts"])
    assert any(new in fact["citations"] and fact["current"] for fact in result["facts"])
    for fact in result["facts"]:
        assert CURRENCY <= set(fact)
        # A frame's cited rows carry the same marks, and a fact is current while one of them is.
        cited = client.get(f"/v1/subjects/nadia/graph/frames/{fact['frame_id']}").json()["cited_rows"]
        assert [row["id"] for row in cited] == fact["citations"]
        assert {row["id"]: row["current"] for row in cited}.get(old, False) is False
        assert fact["current"] is any(row["current"] for row in cited)
        if not fact["current"]:
            assert fact["superseded_by"] == new and fact["valid_to"] is not None

    # Memory get, list and history.
    got = client.get(f"/v1/subjects/nadia/memories/episodic/{old}").json()
    assert (got["current"], got["superseded_by"]) == (False, new)
    history = client.get(f"/v1/subjects/nadia/memories/episodic/{new}/history").json()["results"]
    assert [(row["id"], row["current"]) for row in history] == [(new, True), (old, False)]
    assert history[1]["valid_to"] == history[0]["valid_from"]
    everything = client.get("/v1/subjects/nadia/memories", {"type": "episodic", "include_superseded": True})
    assert {row["id"]: row["current"] for row in everything.json()["results"]} == {old: False, new: True}


def test_the_answers_cited_rows_carry_their_currency() -> None:
    tenant = make_tenant()
    old, _new = _diet_changed(tenant)
    response = tenant.client().post("/v1/subjects/nadia/answer", {"query": "Is Nadia vegetarian?"})
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["cited_row_ids"] and [row["id"] for row in answer["cited_rows"]] == answer["cited_row_ids"]
    assert all(CURRENCY <= set(row) and row["current"] is (row["id"] != old) for row in answer["cited_rows"])


def test_another_organizations_key_gets_404_on_every_read_that_carries_currency() -> None:
    tenant = make_tenant()
    old, new = _diet_changed(tenant)
    other = make_tenant().client()
    for method, path, body in [
        ("post", "/v1/subjects/nadia/search", {"query": "What diet does Nadia follow?"}),
        ("post", "/v1/subjects/nadia/answer", {"query": "What diet does Nadia follow?"}),
        ("get", f"/v1/subjects/nadia/memories/semantic/{old}", None),
        ("get", f"/v1/subjects/nadia/memories/semantic/{new}/history", None),
        ("get", "/v1/subjects/nadia/memories", {"type": "semantic", "include_superseded": True}),
    ]:
        response = getattr(other, method)(path, body, format="json") if body else getattr(other, method)(path)
        assert response.status_code == 404, (path, response.content)
        assert response.json()["error"]["code"] == "not_found"


def test_a_question_about_an_earlier_value_gets_the_value_the_named_one_replaced_first() -> None:
    tenant = make_tenant()
    tenant.subject("nadia")
    _write(tenant, "Porto is home, near the river.", "m1")
    _write(tenant, "We found a flat in Lyon, in the Croix-Rousse, up the hill.", "m1b")  # Lyon before the move
    _write(tenant, "We moved from Porto to Lyon last month.", "m2")
    _write(tenant, "I'm a nurse at the children's hospital.", "m3")
    _write(tenant, "Big news: I moved from Lyon to Berlin for good.", "m4")
    before_lyon = _search(tenant, "Where did Nadia live before she moved to Lyon?")["rows"]
    # Not the Lyon rows, whose successors name Lyon too ("from Lyon to Berlin").
    assert before_lyon[0]["type"] == "semantic" and "Porto" in before_lyon[0]["text"]
    assert "Lyon" not in before_lyon[0]["text"]
    assert before_lyon[0]["current"] is False and before_lyon[0]["superseded_by"] is not None
    before_berlin = _search(tenant, "Where did Nadia live before Berlin?")["rows"]
    assert before_berlin[0]["type"] == "semantic" and before_berlin[0]["current"] is False
    assert "Lyon" in before_berlin[0]["text"] and "Berlin" not in before_berlin[0]["text"]
    # Without a named later value: the value before the current one.
    previous = _search(tenant, "Where did Nadia use to live previously?")["rows"]
    assert previous[0]["id"] == before_berlin[0]["id"]
    # The value a later message replaced, not the sentence before the new value in that message.
    _write(tenant, "Big news: I quit the hospital! I started at Loomwork as a designer.", "m5")
    before_loomwork = _search(tenant, "Where did Nadia work before joining Loomwork?")["rows"]
    assert before_loomwork[0]["type"] == "semantic" and "nurse" in before_loomwork[0]["text"]


def test_the_value_before_a_named_one_is_read_through_the_messages_that_name_it() -> None:
    tenant = _said(
        "I'm a QA analyst at Prairie Mutual.",
        # The fact's sentence does not name Saltline; its message does.
        "They offered me the senior test engineer job and I said yes! I start at Saltline in May.",
        "I'm the QA lead at Saltline now!",
    )
    assert "Prairie Mutual" in _first_fact(tenant, "Which company did Nadia work for before Saltline?")
    assert "senior test engineer" in _first_fact(tenant, "What was Nadia's title before she was promoted to QA lead?")


def test_a_value_asked_for_while_another_fact_held_is_the_one_stated_then() -> None:
    tenant = _said(
        "I live in Porto.",
        "The rent is 750 euros a month.",
        "I'm a nurse at the children's hospital.",
        "I go to the gym at Holmes Place.",  # still the gym when Loomwork began
        "We moved from Porto to Lyon last month.",
        "The rent is 1,100 euros a month now.",
        "I quit the hospital and started at Loomwork as a designer.",
        "The rent is 1,250 euros a month now.",
        "I joined a new gym, the Basic-Fit next to the office.",
    )
    assert "750" in _first_fact(tenant, "How much rent did Nadia pay in Porto?")
    # Held when that time began, or gained in it
    assert "1,100" in _first_fact(tenant, "How much rent did Nadia pay when she started at Loomwork?")
    assert "Basic-Fit" in _first_fact(tenant, "Which gym did Nadia join when she started at Loomwork?")
    assert "1,250" in _first_fact(tenant, "How much rent does Nadia pay?")


def test_an_amount_asked_for_is_the_newest_value_of_the_key_that_states_one() -> None:
    tenant = _said(
        "I joined a gym, Anchor Fitness by the ferry, 35 a month.",
        "The gym membership is 42 dollars a month now instead of 35.",
        "I moved my gym membership to the Anchor Fitness on Young Street.",
    )
    assert "42" in _first_fact(tenant, "How much does Nadia pay for her gym membership each month?")
    assert "Young Street" in _first_fact(tenant, "Which gym does Nadia go to?")  # the current one


def test_a_new_value_stated_against_the_old_one_supersedes_the_fact_that_states_it() -> None:
    tenant = make_tenant()
    tenant.subject("nadia")
    _write(tenant, "The rent is 1,100 euros a month, which hurts.", "m1")
    _write(tenant, "I'm allergic to peanuts.", "m2")
    _write(tenant, "The new flat is lovely. And it's cheaper: 980 euros a month instead of 1,100.", "m3")
    with organization_scope(tenant.id):
        new = SemanticItem.objects.get(summary__contains="980")
        old = SemanticItem.objects.get(id=new.supersedes_id)
        allergy = SemanticItem.objects.get(summary__contains="peanuts")
    assert "1,100 euros" in old.summary and new.attribute == old.attribute == "rent"
    rows = _search(tenant, "How much rent does Nadia pay per month?")["rows"]
    assert rows[0]["id"] == str(new.id) and rows[0]["current"] is True
    assert str(allergy.id) not in {row["id"] for row in rows if row["current"] is False}


def test_each_fact_of_a_sentence_of_two_is_superseded_on_its_own() -> None:
    tenant = make_tenant()
    tenant.subject("nadia")
    _write(tenant, "We're in the Croix-Rousse now, and the rent is 1,100 euros a month.", "m1")
    _write(tenant, "And it's cheaper: 980 euros a month instead of 1,100.", "m2")
    with organization_scope(tenant.id):
        home = SemanticItem.objects.get(attribute="home")
        rent = SemanticItem.objects.get(summary__contains="980")
        old_rent = SemanticItem.objects.get(id=rent.supersedes_id)
    assert old_rent.summary == "Nadia: The rent is 1,100 euros a month." and rent.attribute == "rent"
    assert "Croix-Rousse" in home.summary and "rent" not in home.summary
    rows = _search(tenant, "How much rent does Nadia pay per month?")["rows"]
    assert rows[0]["id"] == str(rent.id) and rows[0]["current"] is True
    by_id = {row["id"]: row for row in _search(tenant, "Where does Nadia live?")["rows"]}
    assert by_id[str(home.id)]["current"] is True  # the home of the same sentence is still current
    answer = tenant.client().post(
        "/v1/subjects/nadia/answer", {"question": "How much rent does Nadia pay?"}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert "980" in answer.json()["answer"]


def test_a_relatives_name_an_answered_question_and_an_introduced_pet_are_asked_facts() -> None:
    tenant = make_tenant()
    tenant.subject("nadia")
    _write(tenant, "Sundays at 8 am I video call my mum, Helena, back home.", "m1")
    _write(tenant, "And meet Pimenta! A retired racing greyhound from a rescue in Villeurbanne.", "m2")
    asked = {"id": "m3", "role": "assistant", "content": "When is your birthday again?", "timestamp": SAID}
    reply = {"id": "m4", "role": "user", "name": "Nadia", "content": "14 September, same as always.", "timestamp": SAID}
    tenant.write("nadia", {"messages": [asked, reply]}, index=True)
    _write(tenant, "The weather in Lyon was lovely today.", "m5")
    for question, words in (
        ("What is Nadia's mother's name?", "Helena"),
        ("What is the name of Nadia's pet?", "Pimenta"),
        ("When is Nadia's birthday?", "14 September"),
    ):
        first = _search(tenant, question)["rows"][0]
        assert first["type"] == "semantic" and words in first["text"], (question, first["text"])


def test_a_passage_of_pasted_text_stays_current_when_the_texts_facts_are_replaced() -> None:
    """A paste's facts are the whole text's, not one passage's: replacing them marks no passage
    (ADR 0100), as it would mark a turn that said only that."""
    tenant = make_tenant()
    tenant.subject("nadia")
    rounds = " ".join(f"Bed {n} of the allotment was weeded and watered on the morning round." for n in range(60))
    _write(tenant, f"{rounds}\n\nI'm vegetarian.", "m1")
    with organization_scope(tenant.id):
        old = SemanticItem.objects.filter(summary__contains="vegetarian").first()
        passages = {
            str(i) for i in EpisodicEvent.objects.filter(resource_id__isnull=False).values_list("id", flat=True)
        }
    assert old is not None and len(passages) >= 3
    _patch(tenant, "semantic", str(old.id), "Nadia: I'm vegan.")
    listed = tenant.client().get("/v1/subjects/nadia/memories", {"type": "episodic", "limit": 100}).json()["results"]
    marks = {row["id"]: row["current"] for row in listed}
    assert passages <= set(marks) and all(marks[i] for i in passages)


def test_a_question_about_a_family_of_several_gets_every_current_value_first() -> None:
    """ADR 0105: "What are her hobbies?" puts each current hobby first, not only the two newest;
    the one she swapped for another is no longer among them."""
    tenant = _said(
        "I took up pottery last spring.",
        "I play chess at the library on Thursdays.",
        "I go bouldering twice a week.",
        "I joined a community choir.",
        "The weather in Lyon was lovely today.",
        "I started photography classes at the community centre.",
        "My shoulder hurts, so I swapped bouldering for gardening.",
    )
    with organization_scope(tenant.id):
        replaced = set(SemanticItem.objects.exclude(supersedes=None).values_list("supersedes_id", flat=True))
        hobbies = {
            str(row_id): row_id not in replaced
            for row_id in SemanticItem.objects.filter(attribute__startswith="hobby:").values_list("id", flat=True)
        }
    assert sorted(hobbies.values()) == [False, True, True, True, True, True]  # bouldering was swapped
    rows = _search(tenant, "What are Nadia's hobbies?")["rows"]
    assert {row["id"] for row in rows[:5]} == {row_id for row_id, current in hobbies.items() if current}


def test_a_pastime_asked_about_by_its_verb_gets_its_current_fact_first() -> None:
    """ADR 0107: "Does Nadia still swim?" asks for the swimming fact, as "Does she still go
    swimming?" would: giving it up is the current value, and comes first."""
    tenant = _said(
        "I go swimming every Sunday morning at the city pool.",
        "I play chess at the library on Thursdays.",
        "The weather in Lyon was lovely today, and the pool by the river opened.",
        "I gave up swimming, the pool here is too far.",
    )
    keys = _keys(tenant)
    assert keys["Nadia: I go swimming every Sunday morning at the city pool."] == "hobby: swimming"
    rows = _search(tenant, "Does Nadia still swim?")["rows"]
    assert rows[0]["type"] == "semantic" and "gave up swimming" in rows[0]["text"] and rows[0]["current"], rows[:3]
    old = next(row for row in rows if row["text"] == "Nadia: I go swimming every Sunday morning at the city pool.")
    assert old["current"] is False


def test_the_activities_someone_does_are_asked_for_as_their_pastimes() -> None:
    """ADR 0109: "What activities does Nadia do?" asks for her pastimes as "What are her
    hobbies?" does: each current one first, above the rows that only share her name."""
    tenant = _said(
        "I took up pottery last spring.",
        "I go bouldering twice a week.",
        "I joined a community choir.",
        "The weather in Lyon was lovely today, we did a lot of walking around the market.",
        "My sister does a lot of activities with her kids at the weekend.",
        "I play chess at the library on Thursdays.",
    )
    with organization_scope(tenant.id):
        hobbies = {
            str(i) for i in SemanticItem.objects.filter(attribute__startswith="hobby:").values_list("id", flat=True)
        }
    assert len(hobbies) == 4
    rows = _search(tenant, "What activities does Nadia do?")["rows"]
    assert {row["id"] for row in rows[:4]} == hobbies, [row["text"] for row in rows[:5]]


def test_a_new_place_named_by_where_it_is_replaces_the_home() -> None:
    """ADR 0110: "We just got a new place in the North End" states the home as "I live in …"
    does, so it replaces the flat before it and comes first for where she lives."""
    tenant = _said(
        "I rent a flat on Agricola Street.",
        "The bakery on Agricola Street does great bread.",
        "We just got a new place in the North End.",
    )
    with organization_scope(tenant.id):
        homes = dict(SemanticItem.objects.filter(attribute="home").values_list("summary", "supersedes_id"))
    assert set(homes) == {
        "Nadia: I rent a flat on Agricola Street.",
        "Nadia: We just got a new place in the North End.",
    }
    assert homes["Nadia: We just got a new place in the North End."] is not None  # it replaced the flat
    _replaced_first(
        tenant,
        "Where does Nadia live?",
        new="Nadia: We just got a new place in the North End.",
        old="Nadia: I rent a flat on Agricola Street.",
    )


def test_an_animal_word_that_describes_something_else_is_no_pet() -> None:
    """ADR 0111: "a great dog park", "a new dog bed" and "I named him Buddy" state no pet and no
    name of hers: asked for her pets she has the beagle alone, and her name stays hers."""
    tenant = _said(
        "I'm Nadia Ferreira.",
        "I have a beagle called Moose.",
        "There's a great dog park close to my place.",
        "I bought a new dog bed.",
        "I named him Buddy because he's my buddy.",
    )
    keys = _keys(tenant)
    assert sorted(a for a in keys.values() if a.startswith("pet")) == ["pet: beagle"], keys
    assert [s for s, a in keys.items() if a == "name"] == ["Nadia: I'm Nadia Ferreira."], keys
    rows = _search(tenant, "What pets does Nadia have?")["rows"]
    assert rows[0]["text"] == "Nadia: I have a beagle called Moose." and rows[0]["current"], rows[:3]


def test_a_pet_named_inside_a_longer_sentence_is_one_of_her_pets() -> None:
    """ADR 0112: "… - meet Toby, my puppy" introduces her pet inside a sentence about something
    else, and comes first when she is asked about her pets."""
    tenant = _said(
        "Hey! So much has changed since last time we talked - meet Toby, my puppy. He's a bundle of joy.",
        "The weather in Lyon was lovely today, we walked along the river.",
        "My neighbour's dog barked all night again.",
    )
    rows = _search(tenant, "What pets does Nadia have?")["rows"]
    assert rows[0]["type"] == "semantic" and "meet Toby, my puppy" in rows[0]["text"] and rows[0]["current"], rows[:3]


def test_a_count_of_her_pets_gets_every_current_pet_first() -> None:
    """A count or a list asks for every current value of a family, not the newest two: asked how
    many dogs she has, the beagle, the puppy and the cat (one more of the family) come first,
    before the sentences that only speak of dogs."""
    tenant = _said(
        "I have a beagle called Moose.",
        "I also have a cat named Mo.",
        "We adopted a puppy last month, her name is Tilly!",
        "The dog park near my place was packed with dogs today.",
        "My neighbour's dogs barked all night again.",
        "Dogs are such good company on long walks.",
    )
    rows = _search(tenant, "How many dogs does Nadia have?")["rows"]
    first = {row["text"] for row in rows[:3]}
    assert first == {
        "Nadia: I have a beagle called Moose.",
        "Nadia: I also have a cat named Mo.",
        "Nadia: We adopted a puppy last month, her name is Tilly!",
    }, rows[:5]
    assert all(row["type"] == "semantic" and row["current"] for row in rows[:3]), rows[:3]


def test_a_relationship_ended_the_way_chat_says_it_replaces_the_old_one() -> None:
    """ADR 0113: "I'm not with Tom anymore" states the relationship, so it replaces "I'm dating
    Tom" and comes first for her relationship status."""
    tenant = _said(
        "I've been seeing someone for three weeks, his name is Tom.",
        "Tom took me to a great ramen place in the Old Port.",
        "I'm not with Tom anymore.",
    )
    _replaced_first(
        tenant,
        "What is Nadia's relationship status?",
        new="Nadia: I'm not with Tom anymore.",
        old="Nadia: I've been seeing someone",
    )


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        # ADR 0134: the tagger reads "Ravi" as a common noun (no English word is spelled so)
        ("Ravi", "Ravi lives in Glasgow.", "Ravi moved to Leeds last month."),
        # ADR 0138: the model reads "Layla" as the sentence's verb; parsed again with a stand-in
        ("Layla", "My friend Layla lives in Glasgow now.", "Layla moved to Edinburgh in May."),
    ],
)
def test_a_name_the_model_does_not_know_has_facts_that_change_and_is_asked_about(
    name: str, before: str, after: str
) -> None:
    """The sentence is a fact of the person's, the move replaces it, and "Where does NAME live
    now?" asks for the person's home and gets the move first."""
    tenant = _said(before, after)
    with organization_scope(tenant.id):
        homes = dict(SemanticItem.objects.filter(name=name).values_list("summary", "attribute"))
    said = {f"Nadia, about {name}: {text}" for text in (before, after)}
    assert homes == dict.fromkeys(said, "home city")
    _replaced_first(
        tenant,
        f"Where does {name} live now?",
        new=f"Nadia, about {name}: {after}",
        old=f"Nadia, about {name}: {before}",
    )
