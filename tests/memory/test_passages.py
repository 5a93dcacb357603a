"""Long text cut into passages: pure, no database."""

from __future__ import annotations

import random

from apps.memory.passages import PASSAGE_MAX_CHARS, split_passages


def _covers(text: str) -> None:
    passages = split_passages(text)
    assert all(text[p.start : p.end] == p.text and len(p.text) <= PASSAGE_MAX_CHARS for p in passages)
    assert " ".join(p.text for p in passages).split() == text.split()  # every word, once, in order


def test_prose_is_cut_at_paragraphs_then_sentences_even_when_hard_wrapped() -> None:
    rng = random.Random(1)
    sentences = [f"Sentence {n} says the pump on line {rng.randint(1, 99)} was checked." for n in range(120)]
    prose = " ".join(sentences)
    wrapped = "\n".join(prose[i : i + 72] for i in range(0, len(prose), 72))  # one paragraph, lines of 72
    _covers(wrapped)
    assert all(p.text.endswith(".") for p in split_passages(wrapped))  # whole sentences, not whole lines


def test_a_log_without_sentence_ends_is_cut_at_its_lines() -> None:
    log = "\n".join(
        f"2026-05-{n % 28 + 1:02d} 10:{n % 60:02d} job {n} exited 0 after {n * 7} ms on node-{n % 5}"
        for n in range(200)
    )
    _covers(log)
    lines = set(log.split("\n"))
    for passage in split_passages(log):
        assert set(passage.text.split("\n")) <= lines  # whole records only


def test_a_heading_opens_the_passage_of_what_it_heads_never_ends_one() -> None:
    sections = [
        f"## Section {n}: Topic {n}\n\n"
        + " ".join(f"Step {k} of topic {n} is to run check {k} and note the result." for k in range(1, 12))
        for n in range(1, 7)
    ]
    markdown = "# Runbook\n\n" + "\n\n".join(sections)
    _covers(markdown)
    for passage in split_passages(markdown):
        assert not passage.text.splitlines()[-1].startswith("#")  # no passage ends with a heading
    assert any(p.text.startswith("## Section 4: Topic 4\n\nStep 1 of topic 4") for p in split_passages(markdown))
