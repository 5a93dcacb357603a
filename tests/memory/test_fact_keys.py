"""Facts supersede facts, not entities: (entity, attribute) keys through the API, with the
local writer; core memory follows the superseded facts."""

from __future__ import annotations

from typing import Any

from tests.factories import Tenant, make_tenant


def _say(tenant: Tenant, *texts: str, day: int = 1) -> dict[str, Any]:
    messages = [
        {
            "id": f"d{day}-{number}",
            "role": "user",
            "name": "Lena",
            "timestamp": f"2024-03-{day:02d}T09:{number:02d}:00Z",
            "content": text,
        }
        for number, text in enumerate(texts, start=1)
    ]
    return tenant.write("lena", {"messages": messages})


def _semantic(tenant: Tenant, *, include_superseded: bool = False) -> list[dict[str, Any]]:
    query = "&include_superseded=true" if include_superseded else ""
    response = tenant.client().get(f"/v1/subjects/lena/memories?type=semantic&limit=200{query}")
    assert response.status_code == 200
    return [row for row in response.json()["results"] if row["content"]["name"] == "Lena"]


def _saying(tenant: Tenant, words: str) -> dict[str, Any]:
    """The first of the subject's statements, superseded or not, whose summary holds ``words``."""
    return next(row for row in _semantic(tenant, include_superseded=True) if words in row["content"]["summary"])


def _by_attribute(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["content"]["attribute"]: row for row in rows}


def _tenant() -> Tenant:
    tenant = make_tenant()
    tenant.subject("lena")
    return tenant


def test_four_unrelated_first_person_facts_stay_four_current_rows() -> None:
    tenant = _tenant()
    facts = ["I'm allergic to shellfish.", "I'm a nurse.", "I run 5 km every morning.", "I live in Lisbon."]
    for day, text in enumerate(facts, start=1):
        _say(tenant, text, day=day)
    current = _semantic(tenant)
    assert sorted(row["content"]["summary"] for row in current) == sorted(f"Lena: {text}" for text in facts)
    assert all(row["supersedes"] is None for row in current)
    assert set(_by_attribute(current)) == {"allergy: shellfish", "job", "run", "home city"}


def test_a_changed_diet_supersedes_only_the_old_diet() -> None:
    tenant = _tenant()
    _say(tenant, "I'm vegetarian.", "I'm a nurse.", day=1)
    _say(tenant, "I've gone fully vegan.", day=2)
    current = _by_attribute(_semantic(tenant))
    everything = _by_attribute(_semantic(tenant, include_superseded=True))
    assert current["diet"]["content"]["summary"] == "Lena: I've gone fully vegan."
    old = _saying(tenant, "vegetarian")
    assert current["diet"]["supersedes"] == old["id"]
    assert old["id"] not in {row["id"] for row in _semantic(tenant)}
    assert current["job"]["content"]["summary"] == "Lena: I'm a nurse."  # untouched
    assert "Stated as a change." in everything["diet"]["content"]["details"]


def test_a_move_stated_as_a_change_supersedes_the_old_home_city() -> None:
    tenant = _tenant()
    _say(tenant, "I live in Porto.", day=1)
    _say(tenant, "We moved from Porto to Lyon last week.", day=9)
    [home] = [row for row in _semantic(tenant) if row["content"]["attribute"] == "home city"]
    assert home["content"]["summary"] == "Lena: We moved from Porto to Lyon last week."
    assert "Changed from: Porto" in home["content"]["details"]
    history = tenant.client().get(f"/v1/subjects/lena/memories/semantic/{home['id']}/history").json()["results"]
    assert [row["content"]["summary"] for row in history] == [
        "Lena: We moved from Porto to Lyon last week.",
        "Lena: I live in Porto.",
    ]
    assert {row["content"]["attribute"] for row in history} == {"home city"}


def test_a_move_supersedes_a_home_stated_with_its_company_whatever_else_the_message_says() -> None:
    tenant = _tenant()
    _say(tenant, "I live in Lyon with my partner Theo.", day=1)
    _say(tenant, "Big news: I moved to Porto last week, Theo and I live near the river now.", day=9)
    current = _by_attribute(_semantic(tenant))
    assert "Porto" in current["home city"]["content"]["summary"]
    lyon = _saying(tenant, "Lyon")
    assert lyon["content"]["attribute"] == "home city"
    assert current["home city"]["supersedes"] == lyon["id"]
    assert lyon["id"] not in {row["id"] for row in _semantic(tenant)}


def test_chats_short_forms_replace_the_home_and_a_days_work_leaves_the_job_alone() -> None:
    tenant = _tenant()
    _say(tenant, "I live in Lyon.", "I work as a nurse at St Mary's.", day=1)
    _say(tenant, "Just moved to Porto!", "Worked late yesterday.", day=9)
    current = _by_attribute(_semantic(tenant))
    assert current["home city"]["content"]["summary"] == "Lena: Just moved to Porto!"
    assert current["job"]["content"]["summary"] == "Lena: I work as a nurse at St Mary's."
    assert not any("Lyon" in row["content"]["summary"] for row in _semantic(tenant))


def test_a_pet_named_beside_a_job_adds_its_fact_and_a_verbless_new_job_replaces_the_job() -> None:
    tenant = _tenant()
    _say(tenant, "i work at corvid analytics as a data analyst, living in manchester w/ my cat", day=1)
    current = _by_attribute(_semantic(tenant))
    assert {"job", "pet: cat"} <= set(current)
    corvid = current["job"]
    _say(tenant, "new job at pebblebox!", day=9)
    current = _by_attribute(_semantic(tenant))
    assert current["job"]["content"]["summary"] == "Lena: new job at pebblebox!"
    assert current["job"]["supersedes"] == corvid["id"]
    assert "corvid" in current["pet: cat"]["content"]["summary"]  # the cat is still hers


def test_one_more_pet_of_a_kind_joins_the_first_instead_of_replacing_it() -> None:
    tenant = _tenant()
    _say(tenant, "I have a cat named Mo.", day=1)
    _say(tenant, "We adopted a second cat last week, a tabby called Pip!", day=5)
    current = _by_attribute(_semantic(tenant))
    assert current["pet: cat"]["content"]["summary"] == "Lena: I have a cat named Mo."  # still hers
    assert current["pet: cat 2"]["content"]["summary"].startswith("Lena: We adopted a second cat")
    assert current["pet: cat 2"]["supersedes"] is None
    _say(tenant, "Then we adopted another cat, so three now.", day=9)
    current = _by_attribute(_semantic(tenant))
    assert {"pet: cat", "pet: cat 2", "pet: cat 3"} <= set(current)
    assert len(_semantic(tenant, include_superseded=True)) == len(_semantic(tenant))  # nothing replaced


def test_a_way_to_work_said_alone_or_as_the_ride_replaces_the_commute() -> None:
    tenant = _tenant()
    _say(tenant, "tram to work every day, 25 mins into piccadilly.", "I take the tram to work.", day=1)
    [tram] = [row for row in _semantic(tenant) if row["content"]["attribute"] == "commute"]
    messages = [
        {"id": "q9", "role": "assistant", "name": "Kit", "content": "How are you getting to the office?"},
        {"id": "a9", "role": "user", "name": "Lena", "content": "bike. got a secondhand one off gumtree"},
    ]
    tenant.write("lena", {"messages": [{**m, "timestamp": "2024-03-09T09:00:00Z"} for m in messages]})
    current = _by_attribute(_semantic(tenant))
    assert current["commute"]["content"]["summary"] == "Lena: bike."
    assert current["commute"]["supersedes"] == tram["id"]
    _say(tenant, "bike ride to work is 20 mins now, over the harbourside", day=20)
    current = _by_attribute(_semantic(tenant))
    assert current["commute"]["content"]["summary"].startswith("Lena: bike ride to work is 20 mins now")
    assert "bike" not in current  # the way to work, not a bike of hers


def test_terse_chat_ends_a_relationship_starts_one_and_owns_a_car_again() -> None:
    tenant = _tenant()
    _say(tenant, "I'm dating Callum.", "I sold my car.", day=1)
    _say(tenant, "cant sleep. ended things with callum on sunday.", day=5)
    _say(tenant, "ok so. seeing someone. tariq.", "also i own a car again??", day=9)
    current = _by_attribute(_semantic(tenant))
    assert current["relationship"]["content"]["summary"] == "Lena: seeing someone."
    assert current["car"]["content"]["summary"] == "Lena: also i own a car again??"
    history = (
        tenant.client()
        .get(f"/v1/subjects/lena/memories/semantic/{current['relationship']['id']}/history")
        .json()["results"]
    )
    assert [row["content"]["summary"] for row in history] == [
        "Lena: seeing someone.",
        "Lena: ended things with callum on sunday.",
        "Lena: I'm dating Callum.",
    ]


def test_a_new_city_ends_a_home_known_only_by_its_part_of_town_and_not_the_other_way_round() -> None:
    tenant = _tenant()
    _say(tenant, "We live near the river.", day=1)
    _say(tenant, "We moved to Porto last week.", day=9)
    current = _by_attribute(_semantic(tenant))
    assert set(current) == {"home city"}
    river = _saying(tenant, "river")
    assert current["home city"]["supersedes"] == river["id"]
    _say(tenant, "Our flat is near the market.", day=12)
    current = _by_attribute(_semantic(tenant))
    assert current["home city"]["content"]["summary"] == "Lena: We moved to Porto last week."  # still the city
    assert "market" in current["home"]["content"]["summary"] and current["home"]["supersedes"] is None


def test_a_new_value_of_an_owned_thing_or_a_new_occupation_supersedes_the_old_one() -> None:
    tenant = _tenant()
    _say(tenant, "My best friend is Ana.", "I'm a teacher.", day=1)
    _say(tenant, "My best friend is Maria now.", "I'm now a principal.", "We hired a gardener.", day=9)
    current = _by_attribute(_semantic(tenant))
    assert current["best friend"]["content"]["summary"] == "Lena: My best friend is Maria now."
    assert current["job"]["content"]["summary"] == "Lena: I'm now a principal."
    stale = {row["content"]["summary"] for row in _semantic(tenant, include_superseded=True)} - {
        row["content"]["summary"] for row in _semantic(tenant)
    }
    assert stale == {"Lena: My best friend is Ana.", "Lena: I'm a teacher."}


def test_a_change_without_an_earlier_value_is_stored_as_current() -> None:
    tenant = _tenant()
    _say(tenant, "Yes, but the call moved to Mondays, same time, 6pm.")
    [call] = _semantic(tenant)
    assert call["content"]["attribute"] == "schedule: call" and call["supersedes"] is None


def test_two_classes_are_two_schedules_and_a_move_of_one_supersedes_only_it() -> None:
    """ADR 0132: a class is keyed by its activity, so the pottery class does not replace the
    salsa class, and the move of salsa, said either way, replaces the salsa class alone."""
    tenant = _tenant()
    _say(tenant, "My salsa class is on Tuesdays at 8pm.", "My pottery class is every Saturday morning.", day=1)
    _say(tenant, "salsa's moved to thursdays btw", day=5)
    current = _by_attribute(_semantic(tenant))
    assert current["schedule: salsa"]["content"]["summary"] == "Lena: salsa's moved to thursdays btw"
    assert current["schedule: pottery"]["content"]["summary"] == "Lena: My pottery class is every Saturday morning."
    salsa = _saying(tenant, "Tuesdays")
    assert current["schedule: salsa"]["supersedes"] == salsa["id"]
    assert current["schedule: pottery"]["supersedes"] is None


def test_a_new_pastime_joins_the_others_and_a_swapped_one_replaces_the_old() -> None:
    """ADR 0104: a hobby is one of several, keyed by its pastime or group; leaving the league
    replaces the league, joining a choir replaces nothing, and swapping bouldering for pottery
    replaces bouldering."""
    tenant = _tenant()
    _say(tenant, "I curl in a league.", "I took up bouldering last year.", day=1)
    _say(tenant, "I quit the Granite league after twenty years.", day=2)
    _say(tenant, "I joined a community choir.", day=3)
    _say(tenant, "My shoulder hurts, so I swapped bouldering for a pottery class.", day=4)
    current = {row["content"]["summary"] for row in _semantic(tenant)}
    assert current >= {
        "Lena: I quit the Granite league after twenty years.",
        "Lena: I joined a community choir.",
        "Lena: My shoulder hurts, so I swapped bouldering for a pottery class.",
    }
    replaced = {row["content"]["summary"] for row in _semantic(tenant, include_superseded=True)} - current
    assert replaced == {"Lena: I curl in a league.", "Lena: I took up bouldering last year."}


def test_a_thing_ended_by_its_name_ends_the_fact_that_names_it() -> None:
    tenant = _tenant()
    _say(tenant, "I drive an old Dodge Grand Caravan.", "I go to the gym at Holmes Place.", day=1)
    _say(tenant, "The Caravan is gone.", day=2)
    _say(tenant, "I cancelled Holmes Place and joined the Basic-Fit.", day=3)
    _say(tenant, "I cancelled Netflix.", day=4)  # nothing stored names it: a key of its own
    current = _by_attribute(_semantic(tenant))
    old = {row["content"]["summary"]: row["id"] for row in _semantic(tenant, include_superseded=True)}
    assert current["car"]["content"]["summary"] == "Lena: The Caravan is gone."
    assert current["car"]["supersedes"] == old["Lena: I drive an old Dodge Grand Caravan."]
    assert current["gym"]["content"]["summary"] == "Lena: I cancelled Holmes Place and joined the Basic-Fit."
    assert current["gym"]["supersedes"] == old["Lena: I go to the gym at Holmes Place."]
    assert current["ended: netflix"]["supersedes"] is None


def test_an_employer_left_by_its_name_ends_the_job_that_names_it() -> None:
    """ADR 0152: "I left Spotify" (the tagger reads the name as a verb) and "I'm no longer at
    Spotify" end the job at Spotify; a job at a school the recognizer does not know is a job
    (ADR 0151)."""
    tenant = _tenant()
    _say(tenant, "I work at Spotify as a designer.", day=1)
    _say(tenant, "I'm no longer at Spotify.", day=2)
    current = _by_attribute(_semantic(tenant))
    old = {row["content"]["summary"]: row["id"] for row in _semantic(tenant, include_superseded=True)}
    assert current["job"]["content"]["summary"] == "Lena: I'm no longer at Spotify."
    assert current["job"]["supersedes"] == old["Lena: I work at Spotify as a designer."]
    _say(tenant, "I'm teaching at Riverside High now.", day=3)
    assert _by_attribute(_semantic(tenant))["job"]["content"]["summary"] == "Lena: I'm teaching at Riverside High now."
    other = _tenant()
    _say(other, "I work at Spotify as a designer.", day=1)
    _say(other, "I left Spotify.", day=2)
    assert _by_attribute(_semantic(other))["job"]["content"]["summary"] == "Lena: I left Spotify."


def test_the_age_of_a_thing_or_of_someone_else_leaves_the_speakers_age_current() -> None:
    """ADR 0153: "My car is 10 years old" replaced "I'm 35" as the speaker's age."""
    tenant = _tenant()
    _say(tenant, "I'm 35.", day=1)
    _say(tenant, "My car is 10 years old.", "My boss is 60.", day=2)
    current = _by_attribute(_semantic(tenant))
    assert current["age"]["content"]["summary"] == "Lena: I'm 35."
    assert current["age"]["supersedes"] is None


def test_the_day_one_was_born_leaves_the_birthplace_current() -> None:
    """ADR 0159: "I was born on May 3rd, 1990" replaced "I was born in Accra" as the birthplace."""
    tenant = _tenant()
    _say(tenant, "I was born in Accra.", day=1)
    _say(tenant, "I was born on May 3rd, 1990.", day=2)
    current = _by_attribute(_semantic(tenant))
    assert current["birthplace"]["content"]["summary"] == "Lena: I was born in Accra."
    assert current["birthday"]["content"]["summary"] == "Lena: I was born on May 3rd, 1990."


def test_a_pet_ended_by_its_name_is_the_speakers_pet_fact_of_that_animal() -> None:
    tenant = _tenant()
    _say(tenant, "Moose is a fourteen-year-old beagle.", "I'm a nurse.", day=1)
    _say(tenant, "We lost Moose on Thursday.", day=2)
    current = _by_attribute(_semantic(tenant))
    assert current["pet: beagle"]["content"]["summary"] == "Lena: We lost Moose on Thursday."
    assert current["job"]["content"]["summary"] == "Lena: I'm a nurse."  # untouched


def test_a_patch_is_a_value_that_survives_an_unrelated_write_and_yields_to_its_own_attribute() -> None:
    tenant = _tenant()
    _say(tenant, "I live in Porto.", day=1)
    [porto] = _semantic(tenant)
    other = make_tenant()
    foreign = other.client().patch(
        f"/v1/subjects/lena/memories/semantic/{porto['id']}",
        {"changes": {"summary": "Lena lives in Braga."}},
        format="json",
    )
    assert foreign.status_code == 404
    patched = tenant.client().patch(
        f"/v1/subjects/lena/memories/semantic/{porto['id']}",
        {"changes": {"summary": "Lena lives in Braga."}},
        format="json",
    )
    assert patched.status_code == 200, patched.content
    assert patched.json()["content"]["attribute"] == "home city"  # kept from the row it supersedes
    _say(tenant, "I'm allergic to peanuts.", day=2)
    current = _by_attribute(_semantic(tenant))
    assert current["home city"]["id"] == patched.json()["id"]
    _say(tenant, "I moved to Lyon.", day=3)
    current = _by_attribute(_semantic(tenant))
    assert current["home city"]["supersedes"] == patched.json()["id"]
    assert "allergy: peanut" in current


def test_a_patch_may_set_the_attribute_and_refuses_an_empty_one() -> None:
    tenant = _tenant()
    _say(tenant, "I love hiking.")
    [row] = _semantic(tenant)
    url = f"/v1/subjects/lena/memories/semantic/{row['id']}"
    empty = tenant.client().patch(url, {"changes": {"attribute": "  "}}, format="json")
    assert empty.status_code == 400 and "attribute" in empty.json()["error"]["message"]
    assert len(_semantic(tenant, include_superseded=True)) == 1  # nothing written
    renamed = tenant.client().patch(url, {"changes": {"attribute": "Hobby"}}, format="json")
    assert renamed.status_code == 200 and renamed.json()["content"]["attribute"] == "hobby"


def _human_core(tenant: Tenant) -> dict[str, Any]:
    blocks = tenant.client().get("/v1/subjects/lena/core").json()["results"]
    [human] = [block for block in blocks if block["content"]["label"] == "human"]
    return human  # type: ignore[no-any-return]


def test_core_memory_follows_the_superseded_city_and_diet() -> None:
    tenant = _tenant()
    _say(tenant, "I live in Porto.", "I'm vegetarian.", "I'm a nurse.", day=1)
    before = _human_core(tenant)
    assert "Porto" in before["content"]["value"] and "vegetarian" in before["content"]["value"]
    _say(tenant, "We moved from Porto to Lyon last week.", "I've gone fully vegan.", day=9)
    after = _human_core(tenant)
    assert after["content"]["value"].splitlines() == [
        "Lena: We moved from Porto to Lyon last week.",
        "Lena: I've gone fully vegan.",
        "Lena: I'm a nurse.",
    ]
    history = tenant.client().get(f"/v1/subjects/lena/memories/core/{after['id']}/history").json()["results"]
    assert [version["id"] for version in history] == [after["id"], before["id"]]
    assert history[1]["content"]["value"] == before["content"]["value"]  # the old version is kept as it was


def test_core_memory_follows_a_patched_fact() -> None:
    tenant = _tenant()
    _say(tenant, "I live in Porto.", "I'm a nurse.")
    [porto] = [row for row in _semantic(tenant) if row["content"]["attribute"] == "home city"]
    response = tenant.client().patch(
        f"/v1/subjects/lena/memories/semantic/{porto['id']}",
        {"changes": {"summary": "Lena: I live in Braga."}},
        format="json",
    )
    assert response.status_code == 200
    assert _human_core(tenant)["content"]["value"].splitlines() == ["Lena: I live in Braga.", "Lena: I'm a nurse."]


BATCHED_FACTS = [
    "I'm vegetarian.",
    "I'm a nurse.",
    "I live in Porto.",
    "I've gone fully vegan.",
    "We moved from Porto to Lyon last week.",
    "I'm a nurse.",
]


def _stored(tenant: Tenant) -> dict[str, Any]:
    """Every fact (superseded ones too) and every version of the core blocks, as text."""
    facts = _semantic(tenant, include_superseded=True)
    by_id = {row["id"]: row["content"]["summary"] for row in facts}
    core = tenant.client().get("/v1/subjects/lena/core").json()["results"]
    versions = [
        [
            row["content"]["value"]
            for row in tenant.client().get(f"/v1/subjects/lena/memories/core/{block['id']}/history").json()["results"]
        ]
        for block in core
    ]
    return {
        "facts": sorted(
            (
                row["content"]["summary"],
                row["content"]["attribute"],
                row["content"]["details"],
                by_id.get(row["supersedes"] or ""),
            )
            for row in facts
        ),
        "current": sorted(row["content"]["summary"] for row in _semantic(tenant)),
        "core": sorted(versions),
    }


def test_writes_completed_in_one_batch_store_what_they_store_one_by_one() -> None:
    """The worker reads a subject's current facts and core blocks once per batch and keeps
    them current as each write of the batch stores rows (ADR 0077): a later write of the same
    batch supersedes what an earlier one stored exactly as it would a batch later."""
    one_by_one, batched = _tenant(), _tenant()
    for day, text in enumerate(BATCHED_FACTS, start=1):
        _say(one_by_one, text, day=day)
    client = batched.client()
    for day, text in enumerate(BATCHED_FACTS, start=1):
        message = {"id": f"d{day}-1", "role": "user", "name": "Lena", "timestamp": f"2024-03-{day:02d}T09:01:00Z"}
        response = client.post(
            "/v1/subjects/lena/memories", {"messages": [{**message, "content": text}]}, format="json"
        )
        assert response.status_code == 202, response.content
    from apps.memory.services import memory_complete_writes
    from apps.tenancy.scope import organization_scope

    with organization_scope(batched.id):
        assert len(memory_complete_writes()) == len(BATCHED_FACTS)  # one batch
    expected = _stored(one_by_one)
    assert _stored(batched) == expected
    assert len(expected["facts"]) > len(expected["current"])  # the batch did supersede facts


def test_run_on_chat_replaces_the_manager_the_best_friend_and_the_rent() -> None:
    tenant = _tenant()
    _say(tenant, "my manager is femi, draws everything on the whiteboard in purple", "my best friend is hana", day=1)
    _say(tenant, "we rent a little terrace off stockport road w/ my bf callum, 850 a month", day=1)
    before = _by_attribute(_semantic(tenant))
    assert {"manager", "best friend", "rent", "relationship"} <= set(before)
    _say(tenant, "work stuff, femi left on friday for some startup in london, so i report to gareth now", day=5)
    _say(tenant, "priya from work has been amazing. pretty sure she's my best friend now tbh", day=6)
    _say(tenant, "left the houseshare, got a one bed in bedminster just off north street, 1,050 a month", day=7)
    current = _by_attribute(_semantic(tenant))
    assert "gareth" in current["manager"]["content"]["summary"]
    # the pronoun's name is in the sentence before, so the statement keeps both
    assert "priya" in current["best friend"]["content"]["summary"]
    assert "1,050" in current["rent"]["content"]["summary"]
    for attribute in ("manager", "best friend", "rent"):
        assert current[attribute]["supersedes"] == before[attribute]["id"], attribute
    assert current["relationship"]["id"] == before["relationship"]["id"]  # the same row, still current


def test_a_lowercase_move_after_a_lead_in_replaces_the_home_city() -> None:
    tenant = _tenant()
    _say(tenant, "I live in Lisbon.", day=1)
    lisbon = _by_attribute(_semantic(tenant))["home city"]
    _say(tenant, "big news: moved to porto last week!! new job at hospital são joão too", day=9)
    current = _by_attribute(_semantic(tenant))
    assert current["home city"]["content"]["summary"] == "Lena: big news: moved to porto last week!!"
    assert current["home city"]["supersedes"] == lisbon["id"]


def test_a_home_and_a_job_in_one_sentence_are_superseded_each_on_its_own() -> None:
    tenant = _tenant()
    _say(tenant, "We live in Lyon and work for Airbus.", day=1)
    first = _by_attribute(_semantic(tenant))
    assert {"home city", "job"} <= set(first)
    _say(tenant, "new job at pebblebox!", day=9)
    current = _by_attribute(_semantic(tenant))
    assert current["job"]["supersedes"] == first["job"]["id"]
    assert current["home city"]["id"] == first["home city"]["id"]  # Lyon stays current


def test_a_new_occupation_of_any_title_replaces_the_job_and_a_relatives_job_is_the_relatives() -> None:
    """ADRs 0133 and 0135: "a doctor" said of what someone is is a job (not whom they see), a title of two
    words ("a health visitor") is one, and "My brother is a teacher" keys no fact of the
    speaker's, so it neither replaces her job nor stands beside it as a key of its own."""
    tenant = _tenant()
    _say(tenant, "I'm a nurse.", day=1)
    _say(tenant, "I'm a health visitor now.", "My brother is a teacher.", day=4)
    _say(tenant, "I'm a doctor now.", day=9)
    current = _semantic(tenant)
    assert _by_attribute(current)["job"]["content"]["summary"] == "Lena: I'm a doctor now."
    assert [row["content"]["attribute"] for row in current] == ["job"]  # nothing keyed by the brother's words
    chain = {row["content"]["summary"]: row for row in _semantic(tenant, include_superseded=True)}
    assert chain["Lena: I'm a doctor now."]["supersedes"] == chain["Lena: I'm a health visitor now."]["id"]
    assert chain["Lena: I'm a health visitor now."]["supersedes"] == chain["Lena: I'm a nurse."]["id"]
    response = tenant.client().get("/v1/subjects/lena/memories?type=semantic&limit=200")
    brother = [row for row in response.json()["results"] if row["content"]["name"] == "Lena's brother"]
    assert [(row["content"]["attribute"], row["content"]["summary"]) for row in brother] == [
        ("job", "Lena, about Lena's brother: My brother is a teacher.")
    ]


def test_a_new_laptop_replaces_the_old_one_and_washing_the_car_leaves_the_car_alone() -> None:
    """ADR 0137: a laptop given by work replaces the laptop she had; a wash, a parking spot or a
    phone in her hand states no new car or phone, so the car she drives stays current."""
    tenant = _tenant()
    _say(tenant, "My laptop is a ThinkPad from 2017.", "I drive a Honda Civic.", day=1)
    _say(tenant, "I washed my car today.", "The car is in the garage.", "I'm on my phone all day.", day=3)
    _say(tenant, "Work gave me a MacBook Pro, so the ThinkPad is retired.", day=6)
    current = _by_attribute(_semantic(tenant))
    assert {attribute: row["content"]["summary"] for attribute, row in current.items()} == {
        "car": "Lena: I drive a Honda Civic.",  # no origin, no phone, no new car
        "laptop": "Lena: Work gave me a MacBook Pro, so the ThinkPad is retired.",
    }
    assert current["laptop"]["supersedes"] == _saying(tenant, "from 2017")["id"]
    response = tenant.client().get("/v1/subjects/lena/memories?type=semantic&limit=200")
    assert all(row["content"]["name"] != "ThinkPad" for row in response.json()["results"])  # no job of a laptop's


def test_someone_elses_new_job_replaces_their_job_and_leaves_their_city() -> None:
    """ADR 0140: "He moved to Berlin and started at a fintech company" is two facts of Tiago's;
    his next job replaces the fintech, not Berlin."""
    tenant = _tenant()
    _say(tenant, "My brother Tiago moved to Berlin and started at a fintech company.", day=1)
    _say(tenant, "Tiago left the fintech and joined a bank as an analyst.", day=7)
    response = tenant.client().get("/v1/subjects/lena/memories?type=semantic&limit=200")
    tiago = {
        row["content"]["attribute"]: row for row in response.json()["results"] if row["content"]["name"] == "Tiago"
    }
    assert tiago["home city"]["content"]["summary"] == "Lena, about Tiago: My brother Tiago moved to Berlin."
    assert tiago["home city"]["supersedes"] is None
    assert tiago["job"]["content"]["summary"].endswith("Tiago left the fintech and joined a bank as an analyst.")
    assert tiago["job"]["supersedes"] is not None  # the fintech


def test_a_stolen_bike_replaces_the_bike_and_a_relatives_two_facts_are_two_rows() -> None:
    """ADRs 0142 and 0143: "My bike got stolen" is the bike's new value, so the Trek is no longer current;
    "My mum is retired and lives in Accra" is the mother's job and her home, each its own row."""
    tenant = _tenant()
    _say(tenant, "I ride a Trek bike.", "My mum is retired and lives in Accra.", day=1)
    _say(tenant, "My bike got stolen outside the station.", day=4)
    current = _by_attribute(_semantic(tenant))
    assert current["bike"]["content"]["summary"] == "Lena: My bike got stolen outside the station."
    assert current["bike"]["supersedes"] == _saying(tenant, "Trek")["id"]
    response = tenant.client().get("/v1/subjects/lena/memories?type=semantic&limit=200")
    mother = {
        row["content"]["attribute"]: row["content"]["summary"]
        for row in response.json()["results"]
        if row["content"]["name"] == "Lena's mother"
    }
    assert mother == {
        "job": "Lena, about Lena's mother: My mum is retired.",
        "home city": "Lena, about Lena's mother: Lives in Accra.",
    }
