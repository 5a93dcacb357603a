"""The local answerer answers the question asked: pure, over hand-made rows, no database."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from apps.providers.interfaces import UNKNOWN_ANSWER, AnswerRequest, EvidenceRow, MeteringContext
from apps.retrieval.answer_local import LocalAnswerLLM
from tests.metering import RecordingMeter

SAID = datetime(2024, 6, 3, 9, 0, tzinfo=UTC)
METERING = MeteringContext(organization_id=uuid.uuid4(), meter=RecordingMeter())  # the tokens it read are kept here


def _row(row_id: str, text: str, *, speaker: str = "Nadia", current: bool = True) -> EvidenceRow:
    return EvidenceRow(
        row_id=row_id,
        memory_type="episodic",
        text=text,
        event_time=None,
        mention_time=SAID,
        speaker=speaker,
        current=current,
    )


def _told(row_id: str, text: str, told: str, *, speaker: str = "Nadia") -> EvidenceRow:
    """A row whose text keeps some of the sentences it was written from (``told``)."""
    return EvidenceRow(
        row_id=row_id, memory_type="episodic", text=text, event_time=None, mention_time=SAID, speaker=speaker,
        told=told,
    )  # fmt: skip


def _answer(question: str, *rows: EvidenceRow) -> tuple[str, tuple[str, ...]]:
    draft = LocalAnswerLLM().answer(
        AnswerRequest(question=question, rows=rows, facts=(), searches_left=0), metering=METERING
    )
    return draft.answer, draft.cited_row_ids


def test_a_duration_question_gets_a_duration_not_a_date() -> None:
    answer, cited = _answer(
        "How long has Nadia lived in Lyon?",
        _row("r1", "Nadia: I moved to Lyon in March 2023 and I have lived in Lyon for two years now."),
    )
    assert answer == "for two years" and cited == ("r1",)


def test_how_long_ago_still_asks_for_a_date() -> None:
    answer, _ = _answer("How long ago did Nadia move to Lyon?", _row("r1", "Nadia: I moved to Lyon in March 2023."))
    assert answer == "March 2023"


def test_a_where_and_how_many_question_is_not_answered_with_a_count() -> None:
    answer, cited = _answer(
        "Where does Nadia live and how many rooms does her flat have?",
        _row("r1", "Nadia: Our flat in Guillotière has three rooms and a balcony."),
    )
    assert "Guillotière" in answer and "three rooms" in answer and cited == ("r1",)
    count, _ = _answer(
        "How many rooms does Nadia's flat have?", _row("r1", "Nadia: Our flat in Guillotière has three rooms.")
    )
    assert count == "three"  # the same row, asked only the count


def test_the_users_statement_wins_over_an_assistants_echo_and_a_question() -> None:
    # Both name Nadia and the work as well as her own statement does, and come first.
    echo = _row("echo", "assistant: Nadia, so you work as a design lead at Loomwork now.", speaker="assistant")
    question = _row("question", "Sam: Nadia, do you still work at Padaria Estrela as a baker?", speaker="Sam")
    statement = _row("statement", "Nadia: I work at Loomwork as a design lead.")
    answer, cited = _answer("Where does Nadia work?", echo, question, statement)
    assert cited == ("statement",) and answer == "Nadia: I work at Loomwork as a design lead."


def test_within_a_row_a_statement_is_quoted_rather_than_a_question() -> None:
    answer, _ = _answer(
        "What does Nadia drink in the morning?",
        _row("r1", "Nadia: Guess what I drink in the morning now? Rooibos tea in the morning, no more coffee."),
    )
    assert answer == "Nadia: Rooibos tea in the morning, no more coffee."


def test_for_a_present_question_the_current_value_wins_and_for_a_past_one_the_old_value_is_reachable() -> None:
    old = _row("old", "Nadia: I live in Porto, in Bonfim.", current=False)
    new = _row("new", "Nadia: I live in Lyon now.")
    answer, cited = _answer("Where does Nadia live?", old, new)
    assert cited == ("new",) and "Lyon" in answer
    answer, cited = _answer("Where did Nadia live in Bonfim?", old, new)
    assert cited == ("old",) and "Porto" in answer


def test_a_present_question_about_a_standing_time_gets_the_sentence_not_a_resolved_date() -> None:
    answer, _ = _answer(
        "When does Nadia's book club meet?",
        _row("r1", "Nadia: The book club meets on the last Sunday of the month now."),
    )
    assert "last Sunday of the month" in answer
    dated, _ = _answer("When did Nadia's book club meet?", _row("r1", "Nadia: The book club met on 2 June 2024."))
    assert dated == "2 June 2024"


def test_nothing_that_supports_an_answer_is_still_unknown() -> None:
    assert _answer("Where does Nadia work?", _row("r1", "Nadia: The weather is lovely."))[0] == UNKNOWN_ANSWER


def test_a_question_that_orders_events_asks_for_what_its_wh_word_asks_not_a_date() -> None:
    porto = _row("porto", "Nadia: Porto is home, since the spring of 2019.", current=False)
    lyon = _row("lyon", "Nadia: I live in Lyon now.")
    answer, cited = _answer("Where did Nadia live before she moved to Lyon?", lyon, porto)
    assert cited == ("porto",) and answer == "Nadia: Porto is home, since the spring of 2019."


def test_a_title_does_not_end_the_quoted_sentence() -> None:
    answer, _ = _answer(
        "Who is Nadia's doctor?", _row("r1", "Nadia: Yes, my new doctor is Dr. Marchand, near the park.")
    )
    assert answer == "Nadia: Yes, my new doctor is Dr. Marchand, near the park."


def test_a_name_question_is_answered_by_the_row_that_names_the_value() -> None:
    answer, cited = _answer(
        "Which company does Nadia work for?",
        _row("r1", "Nadia: Big news at work: I got promoted!"),
        _row("r2", "Nadia: I'm the design lead at Loomwork now, with two designers on my team."),
    )
    assert "Loomwork" in answer and cited == ("r2",)


def test_the_sentence_after_a_statement_that_names_no_value_completes_it() -> None:
    told = "We leased a car! A little Renault Zoe, electric, mainly for trips to the mountains."
    row = _told("r1", "Nadia: We leased a car!", told)
    answer, cited = _answer("What car does Nadia drive?", row)
    assert answer == "Nadia: We leased a car! A little Renault Zoe, electric, mainly for trips to the mountains."
    assert cited == ("r1",)
    # No name is asked, but the statement only restates the question: the sentence after it
    # says more (here, why).
    gist, _ = _answer("Why did Nadia lease a car?", row)
    assert gist == "Nadia: We leased a car! A little Renault Zoe, electric, mainly for trips to the mountains."


def test_a_semantic_row_states_the_key_its_writer_stored() -> None:
    about_joon = EvidenceRow(
        row_id="r1", memory_type="semantic", text="Nadia, about Joon: This month he starts teaching at the nursing school.",
        event_time=None, mention_time=SAID, speaker="Joon", attribute="job",
    )  # fmt: skip
    lease = _row("r2", "The tenants must allow access to the premises for the works.", speaker="")
    answer, cited = _answer("What does Joon do for work?", lease, about_joon)
    assert "nursing school" in answer and cited == ("r1",)
    other = EvidenceRow(**{**about_joon.__dict__, "speaker": "Tiago"})  # the same key of another person
    assert _answer("What does Joon do for work?", lease, other)[1] != ("r1",)


def test_a_relative_is_found_under_another_word_for_them() -> None:
    answer, cited = _answer(
        "What is Nadia's mother's name?",
        _row("r1", "Nadia: My mum Helena made me take a blanket for the drive back."),
    )
    assert "Helena" in answer and cited == ("r1",)


def test_a_used_to_question_is_answered_by_the_row_that_says_used_to() -> None:
    answer, cited = _answer(
        "What did Nadia used to eat every Friday?",
        _row("r1", "Nadia: Also, a small confession: I don't eat meat anymore.", current=False),
        _row("r2", "Nadia: I used to eat a francesinha every Friday."),
    )
    assert "francesinha" in answer and cited == ("r2",)


def test_a_persons_name_is_answered_with_a_person_not_a_place() -> None:
    answer, cited = _answer(
        "What is Kwame's mother's name?",
        _row("r1", "Kwame: Kumasi, born and raised. My mum still lives in Kumasi.", speaker="Kwame"),
        _row("r2", "Kwame: Sundays at 8 am I video call my mum, Abena, back home.", speaker="Kwame"),
    )
    assert "Abena" in answer and cited == ("r2",)


def test_the_sentence_before_a_statement_that_names_no_value_completes_it() -> None:
    said = "We rewatched Amélie to practise French. It's still my favourite film, I can quote half of it."
    fact = EvidenceRow(
        row_id="r1", memory_type="semantic", text="Nadia: It's still my favourite film, I can quote half of it.",
        event_time=None, mention_time=SAID, speaker="Nadia", attribute="favourite film",
    )  # fmt: skip
    episode = EvidenceRow(
        row_id="r2", memory_type="episodic", text="Nadia: We rewatched Amélie to practise French.",
        event_time=None, mention_time=SAID, speaker="Nadia", told=said,
    )  # fmt: skip
    answer, cited = _answer("What is Nadia's favourite film?", fact, episode)
    assert answer == f"Nadia: {said}" and cited == ("r1", "r2")  # the row it quotes the sentence from too


def test_the_asked_persons_own_statement_wins_over_what_another_speaker_said_of_them() -> None:
    # The other speaker's line names the asked word; the person's own line holds the date.
    wish = _row("wish", "Wren: Happy belated birthday, Kwame!", speaker="Wren")
    said = _row("said", "Kwame: I turned forty-two on 27 November.", speaker="Kwame")
    answer, cited = _answer("When is Kwame's birthday?", wish, said)
    assert cited == ("said",) and "27 November" in answer


def test_a_first_row_that_shares_no_word_is_read_only_when_it_holds_the_asked_kind_of_value() -> None:
    said = _row("said", "Kwame: I turned forty-two on 27 November.", speaker="Kwame")
    assert _answer("When is Kwame's birthday?", said)[1] == ("said",)  # a date for a time question
    later = [_row(f"other{i}", f"Kwame: We talked about tea number {i}.", speaker="Kwame") for i in range(3)]
    assert _answer("When is Kwame's birthday?", *later, said)[0] == UNKNOWN_ANSWER  # only retrieval's first rows


def test_a_sentence_that_only_restates_the_question_is_quoted_with_the_sentences_around_it() -> None:
    told = "One rule: no shellfish of any kind. I'm allergic. Shrimp sent me to emergency once."
    row = _told("r1", "Kwame: I'm allergic.", told, speaker="Kwame")
    answer, _ = _answer("What is Kwame allergic to?", row)
    assert answer == f"Kwame: {told}"


def test_a_passage_is_read_by_its_best_sentences_not_its_length() -> None:
    handbook = (
        "3.1 Hours. The working week is 37.5 hours. 3.2 Probation. Every new employee serves a probationary "
        "period of ninety days. 3.3 Notice. Either side may end the employment with one month of notice."
    )
    # Every asked word, but each in a sentence of its own: the whole text covers more of the
    # question than the handbook's passage, no two sentences of it do.
    other = (
        "4.1 Training. A probationary employee joins the induction. Lunch is served at noon. The company "
        "pays for the books. Parking is free. A period of one month of mentoring follows."
    )
    passage = EvidenceRow(
        row_id="p1", memory_type="episodic", text=handbook, event_time=None, mention_time=SAID, speaker="Kwame"
    )
    longer = EvidenceRow(
        row_id="p2", memory_type="episodic", text=other, event_time=None, mention_time=SAID, speaker="Kwame"
    )
    answer, cited = _answer("How long is the probationary period at the company?", longer, passage)
    assert answer == "ninety days" and cited == ("p1",)


def _fact(row_id: str, text: str, *, speaker: str, attribute: str, current: bool) -> EvidenceRow:
    return EvidenceRow(
        row_id=row_id, memory_type="semantic", text=text, event_time=None, mention_time=SAID, speaker=speaker,
        current=current, attribute=attribute,
    )  # fmt: skip


def test_rows_of_the_asked_key_keep_retrievals_order() -> None:
    # Retrieval put the value before Guillotière first; the later move covers more of the
    # question's words ("moved", "Guillotière") but is not the value asked for.
    before = _fact("before", "Nadia: We're in the Croix-Rousse now.", speaker="Nadia", attribute="home", current=False)
    later = _fact(
        "later", "Nadia: We moved to Guillotière on Saturday!", speaker="Nadia", attribute="home", current=False
    )
    answer, cited = _answer("Which neighbourhood did Nadia live in before she moved to Guillotière?", before, later)
    assert cited == ("before",) and "Croix-Rousse" in answer


def test_a_fact_of_a_relative_named_only_by_relation_answers_for_them() -> None:
    mine = _fact("mine", "Kwame: I live on Agricola Street now.", speaker="Kwame", attribute="home", current=True)
    hers = _fact(
        "hers", "Kwame, about Kwame's mother: My mum moved in with Kofi in Accra.", speaker="Kwame's mother",
        attribute="home city", current=True,
    )  # fmt: skip
    answer, cited = _answer("Which city does Kwame's mother live in?", mine, hers)
    assert cited == ("hers",) and "Accra" in answer


def test_a_pets_name_is_a_name_not_the_place_it_came_from() -> None:
    row = _told(
        "r1", "Nadia: We adopted a retired racing greyhound from a rescue in Villeurbanne.",
        "Meet Pimenta! We adopted a retired racing greyhound from a rescue in Villeurbanne.",
    )  # fmt: skip
    answer, _ = _answer("What is the name of Nadia's pet?", row)
    assert "Pimenta" in answer


def test_a_fact_about_the_asked_person_that_names_a_place_answers_where_without_sharing_a_word() -> None:
    mine = _fact(
        "mine", "Kwame: I've lived in Winnipeg since 2009.", speaker="Kwame", attribute="home city", current=False
    )
    hers = _fact(
        "hers", "Kwame, about Efua: Efua is an emergency nurse in Toronto.", speaker="Efua", attribute="job",
        current=False,
    )  # fmt: skip
    answer, cited = _answer("Where did Efua live before Calgary?", hers, mine)
    assert cited == ("hers",) and "Toronto" in answer
    # a turn that names a place but states nothing asked about is no answer to another question
    trip = _row("trip", "Priya: My sister Anika and I went to the Louvre in Paris.", speaker="Priya")
    assert _answer("What is Priya's favourite opera?", trip)[0] == UNKNOWN_ANSWER


def test_a_question_naming_a_numbered_part_is_answered_from_that_part() -> None:
    """ADR 0098: the passage holds three clauses; the one the question names answers it, not
    the clause beside it that shares more of the question's words."""
    passage = (
        "Clause 16. The tenant shall report damage to the landlord within 10 days. "
        "Clause 17. The tenant shall give notice before leaving within 32 days. "
        "Clause 18. The tenant shall report damage caused by guests within 5 days."
    )
    answer, cited = _answer("How many days to report damage under clause 17?", _row("p1", passage, speaker=""))
    assert answer.startswith("Clause 17.") and "32 days" in answer and cited == ("p1",)
    answer, _ = _answer("How many days to report damage?", _row("p1", passage, speaker=""))
    assert "Clause 17" not in answer  # without the reference, the words decide


def _passage(row_id: str, text: str) -> EvidenceRow:
    return EvidenceRow(
        row_id=row_id, memory_type="episodic", text=text, event_time=None, mention_time=SAID, passage=True
    )


def test_a_log_is_answered_with_its_record_not_the_lines_around_it() -> None:
    log = "\n".join(
        f"2026-03-05 1{n}:00 deploy #{1050 + n} of search-indexer {'FAILED (out of memory)' if n == 7 else 'succeeded'}"
        for n in range(10)
    )
    answer, _ = _answer("Which deploy failed with out of memory?", _passage("p1", log))
    assert answer == "2026-03-05 17:00 deploy #1057 of search-indexer FAILED (out of memory)"


def test_a_passage_opening_with_a_label_and_a_colon_has_no_speaker() -> None:
    passage = "Step 8 of the backup: copy the archive. Step 9 of the backup: verify the checksum with sha256sum."
    answer, _ = _answer("How do I verify the checksum?", _passage("p1", passage))
    assert answer == "Step 9 of the backup: verify the checksum with sha256sum."


def test_the_passage_naming_the_part_answers_before_a_writers_row_that_also_names_it() -> None:
    blob = _row("s1", "deploy-bot: deploy #1056 of billing succeeded deploy #1057 of search failed deploy #1058 ok")
    passage = _passage(
        "p1", "deploy #1056 of billing succeeded\ndeploy #1057 of search FAILED (exit 137)\ndeploy #1058 ok"
    )
    answer, cited = _answer("What happened to deploy #1057?", blob, passage)
    assert answer == "deploy #1057 of search FAILED (exit 137)" and cited == ("p1",)


def test_a_list_introduced_by_a_colon_is_quoted_with_its_items() -> None:
    said = _row("r1", "Nadia: Shopping list for Saturday:\n- eggs\n- oat milk\n- two lemons")
    answer, _ = _answer("What is on Nadia's shopping list?", said)
    assert all(item in answer for item in ("eggs", "oat milk", "two lemons")), answer
