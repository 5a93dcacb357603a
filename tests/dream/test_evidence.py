"""The rules of the local same-entity decision (ADR 0059), each shown holding and failing."""

from __future__ import annotations

import pytest

from apps.dream.candidates import AnchorInfo, NameIndex, Neighbour, candidate_pairs, name_partners
from apps.dream.evidence import (
    Question,
    Side,
    bound_names,
    decide,
    given_names_agree,
    names_resemble,
    naming_sentences,
    stated_attributes,
)

pytestmark = pytest.mark.unit


def _decide(
    a: str | Side,
    b: str | Side,
    type_: str = "person",
    *,
    namesakes: tuple[str, ...] = (),
    second_type: str | None = None,
) -> tuple[bool, str, str | None]:
    first = a if isinstance(a, Side) else Side(a)
    second = b if isinstance(b, Side) else Side(b)
    decision = decide(Question(type_, first, second, namesakes=namesakes, second_type=second_type))
    return decision.same, decision.reason, decision.representative


def test_short_forms_and_initials_join_a_given_name() -> None:
    assert given_names_agree("mel", "melanie") and given_names_agree("j", "john") and given_names_agree("bob", "robert")
    assert not given_names_agree("ann", "anna")  # one letter more is another name
    assert not given_names_agree("jo", "john")  # two letters are too short to be a short form
    assert not given_names_agree("k", "john")
    assert _decide("Mel", Side("Melanie", mention_count=9)) == (True, "short form of the name", "Melanie")
    assert _decide("J. Smith", "John Smith")[:2] == (True, "given name and surname agree")
    assert _decide("J. Smith", "John Smith")[2] == "John Smith"  # the fuller name represents
    assert _decide("K. Smith", "John Smith")[:2] == (False, "different given names")


def test_same_first_name_and_different_surnames_are_two_people() -> None:
    assert _decide("Maria Lopez", "Maria Chen") == (False, "different surnames", None)
    assert _decide("John Smith", "John Smith Jr.")[0] is False
    assert _decide("Amy Nutt", "Amy Ellis Nutt")[0] is True  # a middle name more is the same person


def test_a_lone_name_joins_a_full_name_only_when_no_namesake_fits_as_well() -> None:
    assert _decide("Maria", "Maria Lopez")[:2] == (True, "lone name part of the full name")
    assert _decide("Maria", "Maria Lopez", namesakes=("Maria Chen",))[:2] == (
        False,
        "lone name fits another full name too",
    )
    assert _decide("Chris", "Christina")[0] is True
    assert _decide("Chris", "Christina", namesakes=("Christopher",))[:2] == (False, "short form fits another name too")
    # The pair's own other spellings are not rivals.
    assert _decide("Hey Melanie", "Mel", namesakes=("Melanie", "Thanks Mel"))[0] is True


def test_a_greeting_or_honorific_in_front_of_a_name_is_not_part_of_it() -> None:
    assert _decide("Hey Caroline", Side("Caroline", mention_count=3)) == (True, "same name", "Caroline")
    assert _decide("Dr. Okafor", "Amara Okafor")[0] is True
    assert _decide("Hey Caroline", "Melanie")[0] is False


def test_a_role_joins_the_person_the_text_binds_to_it_and_no_one_else() -> None:
    text = "I went hiking with my cousin Ines last weekend."
    assert bound_names([text], "cousin") == {"ines"}
    assert bound_names(["Ines, my cousin, called."], "cousin") == {"ines"}
    assert bound_names(["Ines is my cousin."], "cousin") == {"ines"}
    assert bound_names(["My cousin called Ines."], "cousin") == set()  # "called" is not a name
    assert _decide(Side("my cousin", mentions=(text,)), "Ines") == (True, "role bound to the name by the text", "Ines")
    assert _decide("my cousin", Side("Ines", mentions=("Ines came too.",)))[:2] == (False, "role bound to no name")
    two = ("My cousin Ines called.", "My cousin Pedro got married.")
    assert _decide(Side("my cousin", mentions=two), "Ines")[:2] == (False, "role bound to several names")
    assert _decide(Side("my cousin", mentions=("My cousin Pedro called.",)), "Ines")[:2] == (
        False,
        "role bound to another name",
    )
    assert _decide("Caroline", "Caroline's mom")[0] is False


def test_different_stated_attributes_keep_two_anchors_apart() -> None:
    leeds = Side("Tom", mentions=("Tom lives in Leeds with two cats.",))
    york = Side("Tom Baker", mentions=("Tom Baker lives in York.",))
    assert stated_attributes(leeds) == {"lives in": {"leeds"}}
    assert _decide(leeds, york)[:2] == (False, "different stated lives in")
    assert _decide(leeds, Side("Tom Baker", mentions=("Tom Baker lives in Leeds.",)))[0] is True
    assert _decide(
        Side("Ravi", mentions=("Ravi is 34 years old.",)), Side("Ravi Shah", mentions=("Ravi Shah is 52.",))
    )[:2] == (False, "different stated age")


def test_two_participants_of_one_frame_are_two_entities() -> None:
    together = _decide(Side("Sam", frames=frozenset({"f1"})), Side("Samantha", frames=frozenset({"f1", "f2"})))
    assert together[:2] == (False, "distinct participants of one frame")
    apart = _decide(Side("Sam", frames=frozenset({"f1"})), Side("Samantha", frames=frozenset({"f2"})))
    assert apart[0] is True


def test_types_numbers_and_things() -> None:
    assert _decide("Jordan", "Jordan", second_type="location")[:2] == (False, "different types")
    assert _decide("iPhone 12", "iPhone 13", "object")[:2] == (False, "different numbers, dates or codes")
    assert _decide("steel bottle", "stainless steel bottle", "object")[0] is True
    assert _decide("Acme Corp", "Acme Corp Ltd", "organization")[0] is True  # a legal form
    assert _decide("home", "loving home", "location")[0] is False  # a generic noun inside a description
    assert _decide("car", "old car", "object")[0] is False  # a contrast token
    assert _decide("kids", "needy kids")[0] is False  # no proper names: no person evidence


def test_the_name_lane_finds_resembling_names_and_pairs_episodic_people() -> None:
    assert names_resemble("Mel", "Melanie") and names_resemble("J. Smith", "John Smith")
    assert not names_resemble("Ann", "Bob") and not names_resemble("Mel", "Mel")
    melanie = AnchorInfo(key="melanie", name="Melanie", type="person")
    mel = AnchorInfo(key="mel", name="Mel", type="person", semantic_backed=False)
    mug = AnchorInfo(key="mug", name="mug", type="object", semantic_backed=False)
    names = [("mel", "Mel"), ("bob", "Bob"), ("melanie", "Melanie")]
    assert name_partners(melanie, NameIndex(names)) == ["mel"]
    assert name_partners(
        AnchorInfo(key="j smith", name="J. Smith", type="person"), NameIndex([("john smith", "John Smith")])
    ) == ["john smith"]
    assert name_partners(AnchorInfo(key="bob", name="Bob", type="person"), NameIndex([("robert", "Robert")])) == [
        "robert"
    ]
    anchors = {a.key: a for a in (melanie, mel, mug)}
    pairs = candidate_pairs([melanie], {}, anchors, {"melanie": [Neighbour("mel", 0.52)]})
    assert [p.keys for p in pairs] == [("mel", "melanie")]
    # An episodic-only person is a partner, never a source; an episodic-only object is neither.
    assert candidate_pairs([mel], {}, anchors, {"mel": [Neighbour("melanie", 0.52)]}) == []
    assert candidate_pairs([melanie], {}, {**anchors, "mel": mug}, {"melanie": [Neighbour("mel", 0.9)]}) == []


def test_naming_sentences_keep_the_sentences_that_name_the_anchor() -> None:
    texts = ["Mel called. The weather was bad! Later mel baked bread.", "Nothing here."]
    assert naming_sentences(texts, ["Mel"]) == ["Mel called.", "Later mel baked bread."]
    assert naming_sentences(texts, ["Mel"], limit=1) == ["Mel called."]
    assert naming_sentences(["Melanie sang."], ["Mel"]) == []
