"""The local MiniLM embedder: offline, 384-d, unit length, semantically ordered."""

from __future__ import annotations

import math

import pytest

from apps.platform.lru import RecentValues
from apps.providers import local_embedder
from apps.providers.interfaces import Purpose
from apps.providers.local_embedder import LocalEmbedder

pytestmark = pytest.mark.unit

embedder = LocalEmbedder()


def _cosine(a: list[float], b: list[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def test_dimension_and_unit_length() -> None:
    vectors = embedder.embed(["I adopted a puppy named Biscuit.", "Lake Tahoe is a freshwater lake."])
    assert (embedder.model_name, embedder.dimension) == ("all-MiniLM-L6-v2", 384)
    assert [len(vector) for vector in vectors] == [384, 384]
    assert all(math.isclose(math.sqrt(_cosine(v, v)), 1.0, abs_tol=1e-5) for v in vectors)


def test_semantically_closer_pairs_score_higher() -> None:
    query, close, far = embedder.embed(
        [
            "We are flying to Paris next month.",
            "Our trip to France is planned for June.",
            "Repot the cactus in gravel after watering it.",
        ]
    )
    assert _cosine(query, close) > _cosine(query, far) + 0.2


@pytest.fixture
def no_recent_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every text embedded by the model, none from the process's recent vectors."""
    monkeypatch.setattr(local_embedder, "_VECTORS", RecentValues(0))


@pytest.mark.usefixtures("no_recent_vectors")
def test_batches_match_single_texts_in_input_order() -> None:
    texts = [f"Message number {index} about hiking near Lake Tahoe." for index in range(70)]  # > one batch
    batched = embedder.embed(texts)
    assert len(batched) == 70
    for index in (0, 64, 69):
        [single] = embedder.embed([texts[index]])
        assert _cosine(single, batched[index]) > 0.9999


def test_no_texts() -> None:
    assert embedder.embed([]) == []


MIXED = [
    "",
    "hi",
    "I adopted a cat named Miso last week.",
    "Caroline: I went to the support group yesterday and it was so powerful, I cried.",
    "word " * 400,  # cut at the model's 256 tokens, as before
    "Ünïcödé — ☃ and emoji 🐈 in one line",
]


@pytest.mark.usefixtures("no_recent_vectors")
def test_vectors_and_token_counts_are_those_of_the_reference_pipeline() -> None:
    """ADR 0063: ONNX Runtime serves the same model as the sentence-transformers pipeline the
    stored vectors came from: same tokens, same vectors (texts of mixed lengths in one call,
    so the micro-batches are padded and reordered)."""
    from sentence_transformers import SentenceTransformer

    from apps.providers.minilm_onnx import weights_path

    reference = SentenceTransformer(str(weights_path()), device="cpu", local_files_only=True)
    texts = MIXED * 6  # 36 texts: more than one micro-batch
    expected = reference.encode(texts, normalize_embeddings=True)
    got = embedder.embed(texts)
    assert min(_cosine(list(map(float, e)), g) for e, g in zip(expected, got, strict=True)) > 0.99999
    tokens = reference.tokenizer(texts, truncation=True, max_length=reference.max_seq_length)["input_ids"]
    assert embedder.count_tokens(texts) == sum(len(ids) for ids in tokens)
    assert max(len(ids) for ids in tokens) == 256


def test_the_conversion_writes_the_graph_whole_once(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from apps.providers import minilm_onnx

    monkeypatch.setenv(minilm_onnx.MODEL_CACHE_VARIABLE, str(tmp_path))
    exports: list[str] = []
    real_export = minilm_onnx._export

    def counted(weights, destination):  # type: ignore[no-untyped-def]
        exports.append(str(destination))
        real_export(weights, destination)

    monkeypatch.setattr(minilm_onnx, "_export", counted)
    path = minilm_onnx.onnx_ensure()
    assert path.parent == tmp_path and path.stat().st_size > 80_000_000
    assert minilm_onnx.onnx_ensure() == path and len(exports) == 1  # converted once
    assert exports[0] != str(path)  # written aside, then renamed into place
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, path.with_suffix(".lock").name])


class _Tokens:
    """A metering context that keeps the tokens each call records."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def record(self, *, purpose: Purpose, model: str, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls.append(prompt_tokens)


def test_a_text_embedded_recently_is_not_embedded_again_and_is_metered_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ADR 0077: the process keeps its recent vectors by text; a call embeds only the texts it
    does not keep (its repeats once, in one model call), returns what the model returns for
    them, and meters every text it was given."""
    monkeypatch.setattr(local_embedder, "_VECTORS", RecentValues(8))
    model_calls: list[list[str]] = []
    real_encode = local_embedder._encode

    def counted(texts: list[str]) -> list[object]:
        model_calls.append(list(texts))
        return real_encode(texts)

    monkeypatch.setattr(local_embedder, "_encode", counted)
    names = ["Caroline", "Melanie", "the support group", "Caroline"]
    tokens = _Tokens()
    first = embedder.embed(names, metering=tokens)  # type: ignore[arg-type]
    again = embedder.embed(["Melanie", "LGBTQ center", "Caroline"], metering=tokens)  # type: ignore[arg-type]
    assert model_calls == [["Caroline", "Melanie", "the support group"], ["LGBTQ center"]]
    assert first[0] == first[3] == again[2] and first[1] == again[0]
    fresh = real_encode(["Caroline", "Melanie", "LGBTQ center"])
    assert all(
        _cosine(kept, list(map(float, new))) > 0.99999
        for kept, new in zip([first[0], first[1], again[1]], fresh, strict=True)
    )
    assert tokens.calls == [
        embedder.count_tokens(names),
        embedder.count_tokens(["Melanie", "LGBTQ center", "Caroline"]),
    ]
    returned = embedder.embed(["Caroline"])[0]
    returned[0] = 99.0  # a caller's list is its own: the kept vector is unchanged
    assert embedder.embed(["Caroline"])[0] == first[0]
    embedder.embed([f"name {n}" for n in range(8)])  # the 8 most recent texts are kept, no more
    model_calls.clear()
    embedder.embed(["Caroline"])
    assert model_calls == [["Caroline"]]
