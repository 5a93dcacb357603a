"""The ``local`` semantic AutoDream decision: deterministic and offline, no tokens metered.

The rules of ``apps.dream.evidence`` (ADR 0059) over what the question carries: the names,
their aliases, a few texts that mention each anchor, the frames each is an arm of and the
namesakes of the type. Framework-free.
"""

from __future__ import annotations

from apps.dream.evidence import Decision, Question, Side, decide
from apps.providers.dream_schemas import DreamAnchor, DreamQuestion, DreamVerdict
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.local_usage import DREAM_JUDGE, record_local


def _side(anchor: DreamAnchor) -> Side:
    return Side(
        name=anchor.name,
        aliases=tuple(anchor.aliases),
        mention_count=anchor.mention_count,
        mentions=tuple(anchor.mentions),
        frames=frozenset(anchor.frames),
    )


def local_decision(question: DreamQuestion) -> Decision:
    """The decision with its reason."""
    return decide(
        Question(
            anchor_type=question.type,
            first=_side(question.first),
            second=_side(question.second),
            namesakes=tuple(question.namesakes),
        )
    )


def local_verdict(question: DreamQuestion) -> DreamVerdict:
    decision = local_decision(question)
    return DreamVerdict(same_entity=decision.same, representative=decision.representative if decision.same else None)


class LocalDreamJudge:
    model = DREAM_JUDGE

    def dream_decide(self, question: DreamQuestion, *, metering: MeteringContext) -> DreamVerdict:
        record_local(metering, purpose=Purpose.DREAM, model=self.model, texts=question.names)  # ADR 0049
        return local_verdict(question)
