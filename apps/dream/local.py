"""The ``local`` semantic AutoDream decision: deterministic and offline, no tokens metered.

Conservative: two names are one entity only when one's key tokens contain the other's, around
the same head word, with the same numbers, dates and codes, and without a token that makes
the longer name a different thing ("Caroline's mom"). Framework-free.
"""

from __future__ import annotations

from apps.graph.keys import key_tokens, may_denote_same
from apps.providers.dream_schemas import DreamAnchor, DreamQuestion, DreamVerdict
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.local_usage import DREAM_JUDGE, record_local

# Tokens that make a longer name a different thing than the name it contains: relations,
# roles and parts ("Caroline's mom", "bottle cap" is caught by the head rule), and contrasts.
CONFLICT_TOKENS: frozenset[str] = frozenset(
    """
    ex former old new mini junior jr senior sr fake toy replica not non anti mom mum mother dad father
    sister brother son daughter wife husband partner friend boyfriend girlfriend kid child baby cousin aunt
    uncle niece nephew grandma grandpa grandmother grandfather parent family boss coworker colleague team
    club group class store shop company office school house home neighbor neighbour dog cat pet
    """.split()
)


def _forms(anchor: DreamAnchor) -> list[list[str]]:
    return [tokens for name in dict.fromkeys([anchor.name, *anchor.aliases]) if (tokens := key_tokens(name))]


def _contained(short: list[str], long: list[str]) -> bool:
    """``short`` names the same thing as ``long``: same head word, a subset of its tokens, and
    nothing in the difference that makes it a different thing."""
    if short[-1] != long[-1] or not set(short) <= set(long):
        return False
    return not (set(long) - set(short)) & CONFLICT_TOKENS


def local_verdict(question: DreamQuestion) -> DreamVerdict:
    """The deterministic decision: alias or key containment, equal numbers, no conflicting tokens."""
    first, second = question.first, question.second
    if not may_denote_same(first.name, second.name):
        return DreamVerdict(same_entity=False, representative=None)
    same = any(set(a) == set(b) or _contained(a, b) or _contained(b, a) for a in _forms(first) for b in _forms(second))
    if not same:
        return DreamVerdict(same_entity=False, representative=None)
    # The better-attested name represents the pair; on a tie the more specific (longer) one.
    chosen = max(
        (first, second),
        key=lambda anchor: (anchor.mention_count, len(key_tokens(anchor.name)), anchor.name == min(question.names)),
    )
    return DreamVerdict(same_entity=True, representative=chosen.name)


class LocalDreamJudge:
    model = DREAM_JUDGE

    def dream_decide(self, question: DreamQuestion, *, metering: MeteringContext) -> DreamVerdict:
        record_local(metering, purpose=Purpose.DREAM, model=self.model, texts=question.names)  # ADR 0049
        return local_verdict(question)
