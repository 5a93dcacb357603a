"""Okapi BM25 and reciprocal rank fusion. Pure.

Terms are the stems of content words (:func:`apps.language.words.stem`), the same
normalization every other lexical comparison of retrieval uses. BM25 scores a question against
a set of documents with the set's own statistics (document frequencies, average length):
the whole history for flat mode, the bounded candidate set for graph mode.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from apps.language.words import is_content_word, lexical_term, words
from apps.retrieval.types import RowCandidate

BM25_K1 = 1.5  # term-frequency saturation (the usual value)
BM25_B = 0.75  # length normalization (the usual value)
RRF_K = 10  # small: it rewards agreement of the orders' heads (set on the LoCoMo dev split; ADR 0018)

K = TypeVar("K", bound=Hashable)


def terms(text: str) -> list[str]:
    """The stems of a text's content words, with repeats, in order."""
    return [term for word in words(text) if (term := _term(word)) is not None]


@functools.lru_cache(maxsize=65536)
def _term(word: str) -> str | None:
    """A word's stem when it is a content word, one stem for words of the same relative or role
    ("mum", "mother") and for chat's short forms ("gf", "girlfriend"); words repeat, so each is
    normalized once."""
    return lexical_term(word) if is_content_word(word) else None


@functools.lru_cache(maxsize=4096)
def _document_terms(text: str) -> tuple[str, ...]:
    """A candidate's terms. The same rows are candidates of many of a subject's searches (an
    anchor's rows, their neighbours), so each text is split and stemmed once per process."""
    return tuple(terms(text))


def bm25_scores(query: Sequence[str], documents: Sequence[Sequence[str]], *, among: int = 0) -> list[float]:
    """The BM25 score of each document (a list of terms) for the query terms (repeats count
    once), with ``idf = ln(1 + (N − df + 0.5) / (df + 0.5))``; N is ``among`` when the
    documents are those of a larger collection that have a query term (the rest have none)."""
    if not documents:
        return []
    wanted = set(query)
    counts = [Counter(t for t in document if t in wanted) for document in documents]
    frequency = Counter(t for c in counts for t in c)
    total = max(len(documents), among)
    average = sum(len(d) for d in documents) / len(documents) or 1.0
    idf = {t: math.log(1.0 + (total - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in wanted}
    scores = []
    for document, count in zip(documents, counts, strict=True):
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(document) / average)
        scores.append(sum(idf[t] * n * (BM25_K1 + 1.0) / (n + norm) for t, n in count.items()))
    return scores


def specificity(texts: Mapping[K, str], *, top: int) -> dict[K, float]:
    """Each text's mean inverse document frequency (``ln(N / df)`` among the texts) over its
    ``top`` rarest distinct terms: how much it says that the others do not. Of
    one person's turns, "I took the kids to the museum" scores above "Thanks, your support means
    a lot"; a text with fewer terms counts the missing ones as zero, and one with none scores 0."""
    documents = {key: set(_document_terms(text)) for key, text in texts.items()}
    frequency = Counter(term for document in documents.values() for term in document)
    total = len(documents)
    return {
        key: sum(sorted((math.log(total / frequency[t]) for t in document), reverse=True)[:top]) / top
        for key, document in documents.items()
    }


def best_matches(question: str, texts: Mapping[K, str | None], *, limit: int) -> list[K]:
    """The ids of at most ``limit`` texts by BM25 for the question's terms, best first (ties
    by id); a text of ``None`` is one of the collection known not to have any of the terms."""
    matching = [key for key, text in texts.items() if text]
    documents = [_document_terms(texts[key] or "") for key in matching]
    return ranked(matching, bm25_scores(terms(question), documents, among=len(texts)), depth=limit)


def ranked(ids: Sequence[K], scores: Sequence[float], *, depth: int | None = None) -> list[K]:
    """Ids with a positive score, best first (ties by id), at most ``depth``."""
    order = sorted((i for i, s in zip(ids, scores, strict=True) if s > 0), key=lambda i: str(i))
    by_score = dict(zip(ids, scores, strict=True))
    order.sort(key=lambda i: -by_score[i])
    return order[:depth] if depth is not None else order


def rrf(rankings: Iterable[Sequence[K]], *, k: int = RRF_K) -> list[tuple[K, float]]:
    """Reciprocal rank fusion (ranks from 1): ``Σ 1 / (k + rank)``; ties by id."""
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda entry: (-entry[1], str(entry[0])))


def lexical_ranks(rows: Sequence[RowCandidate], question: str, *, names: Iterable[str] = ()) -> dict[str, int]:
    """Each row's BM25 rank (0-based) among the rows for the question, by row id (rows without
    a matching term are absent): the statistics are the candidates' own, so the cost is bounded
    by the candidates. When the question asks more than ``names`` (the people it names), a row
    that matches only those names has no rank: the anchor order already says it mentions them,
    and "Lyon Nadia is calmer" says nothing of Nadia's birthday."""
    unique = list({row.row_id: row for row in rows}.values())
    query = terms(question)
    documents = [_document_terms(row.match_text or row.text) for row in unique]
    scores = bm25_scores(query, documents)
    named = set(terms(" ".join(names)))
    asked = set(query) - named
    if named and asked:
        scores = [
            score if asked.intersection(document) else 0.0 for score, document in zip(scores, documents, strict=True)
        ]
    order = ranked([row.row_id for row in unique], scores)
    return {row_id: position for position, row_id in enumerate(order)}
