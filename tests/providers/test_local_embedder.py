"""The local MiniLM embedder: offline, 384-d, unit length, semantically ordered; float32 the
reference pipeline's vectors, int8 (the default, ADR 0091) close to them under its own name."""

from __future__ import annotations

import math

import pytest

from apps.platform.lru import RecentValues
from apps.providers import local_embedder
from apps.providers.interfaces import Purpose
from apps.providers.local_embedder import LocalEmbedder

pytestmark = pytest.mark.unit

embedder = LocalEmbedder()  # int8, the default
reference_precision = LocalEmbedder("float32")


def _cosine(a: list[float], b: list[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def test_dimension_and_unit_length() -> None:
    vectors = embedder.embed(["I adopted a puppy named Biscuit.", "Lake Tahoe is a freshwater lake."])
    assert (embedder.model_name, embedder.dimension) == ("all-MiniLM-L6-v2-int8", 384)
    assert (reference_precision.model_name, reference_precision.dimension) == ("all-MiniLM-L6-v2", 384)
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
    so the micro-batches are padded and reordered). ADR 0091: the int8 graph reads the same
    tokens and makes vectors close to the reference's, not equal."""
    from sentence_transformers import SentenceTransformer

    from apps.providers.minilm_onnx import weights_path

    reference = SentenceTransformer(str(weights_path()), device="cpu", local_files_only=True)
    texts = MIXED * 6  # 36 texts: more than one micro-batch
    expected = reference.encode(texts, normalize_embeddings=True)
    got = reference_precision.embed(texts)
    assert min(_cosine(list(map(float, e)), g) for e, g in zip(expected, got, strict=True)) > 0.99999
    quantized = [_cosine(list(map(float, e)), g) for e, g in zip(expected, embedder.embed(texts), strict=True)]
    assert min(quantized) > 0.93 and sum(quantized) / len(quantized) > 0.98 and min(quantized) < 0.9999
    tokens = reference.tokenizer(texts, truncation=True, max_length=reference.max_seq_length)["input_ids"]
    assert embedder.count_tokens(texts) == reference_precision.count_tokens(texts) == sum(len(ids) for ids in tokens)
    assert max(len(ids) for ids in tokens) == 256


def test_the_conversion_writes_each_graph_whole_once(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from apps.providers import minilm_onnx

    monkeypatch.setenv(minilm_onnx.MODEL_CACHE_VARIABLE, str(tmp_path))
    made: list[tuple[str, str]] = []
    real_export, real_quantize = minilm_onnx._export, minilm_onnx._quantize

    def exported(weights, destination):  # type: ignore[no-untyped-def]
        made.append(("export", str(destination)))
        real_export(weights, destination)

    def quantized(source, destination):  # type: ignore[no-untyped-def]
        made.append(("quantize", str(destination)))
        real_quantize(source, destination)

    monkeypatch.setattr(minilm_onnx, "_export", exported)
    monkeypatch.setattr(minilm_onnx, "_quantize", quantized)
    int8 = minilm_onnx.onnx_ensure(minilm_onnx.INT8)  # made from the float32 graph, made first
    float32 = minilm_onnx.onnx_path(minilm_onnx.FLOAT32)
    assert int8.parent == float32.parent == tmp_path and int8 != float32
    assert float32.stat().st_size > 80_000_000 > int8.stat().st_size > 40_000_000  # the token table stays float32
    assert minilm_onnx.onnx_ensure(minilm_onnx.INT8) == int8 and minilm_onnx.onnx_ensure() == float32
    assert [kind for kind, _ in made] == ["export", "quantize"]  # each converted once
    assert {destination for _, destination in made}.isdisjoint({str(int8), str(float32)})  # aside, then renamed
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [int8.name, int8.with_suffix(".lock").name, float32.name, float32.with_suffix(".lock").name]
    )
    with pytest.raises(ValueError, match="unknown precision"):
        minilm_onnx.onnx_ensure("int4")


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
    real_encode = embedder._encode

    def counted(texts: list[str]) -> list[object]:
        model_calls.append(list(texts))
        return real_encode(texts)

    monkeypatch.setattr(embedder, "_encode", counted)
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


def test_the_precisions_keep_their_recent_vectors_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """ADR 0091: a text embedded by one precision is not answered from the other's vector."""
    monkeypatch.setattr(local_embedder, "_VECTORS", RecentValues(8))
    text = "We moved the book club to Thursdays."
    [quantized] = embedder.embed([text])
    [full] = reference_precision.embed([text])
    assert quantized != full and 0.95 < _cosine(quantized, full) < 0.99999
    assert embedder.embed([text]) == [quantized] and reference_precision.embed([text]) == [full]
