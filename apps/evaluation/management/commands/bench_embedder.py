"""The local embedder's pipelines in one run: ONNX Runtime with int8 weights (now, ADR 0091),
ONNX Runtime with float32 weights (ADR 0063) and sentence-transformers on torch (before ADR
0063), each with one inference thread, as API and worker processes run them (ADR 0052).

Two workloads from the LoCoMo dev split (read in place, ``apps.evaluation.locomo``):

- **query**: the questions, one per call, as a search embeds its query;
- **worker batch**: the turns as ``Speaker: text``, 64 per call, as a worker embeds the rows of
  a batch of writes in one call (ADR 0054).

The pipelines run alternately, call by call, so the machine's load falls on all alike; the
figures are texts per second and p50 per call, and each pipeline's rate over the next's. Each
pipeline's vectors are compared with the torch pipeline's (lowest and mean cosine).

``--write-docs`` records the table in docs/benchmarks.md.
"""

from __future__ import annotations

import itertools
import os
import platform
import time
from argparse import ArgumentParser
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand
from tqdm import tqdm

from apps.evaluation.locomo import load_conversations
from apps.evaluation.report import write_section
from apps.platform.stats import percentile
from apps.providers.minilm_onnx import FLOAT32, INT8, MiniLM, weights_path

WORKER_BATCH = 64

Encoder = Callable[[Sequence[str]], np.ndarray]


def _reference() -> Encoder:
    """The pipeline before ADR 0063: sentence-transformers on torch, batches of 64."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model = SentenceTransformer(str(weights_path()), device="cpu", local_files_only=True)
    return lambda texts: model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)


REFERENCE = "torch (before ADR 0063)"


class Command(BaseCommand):
    help = "The local embedder on ONNX Runtime (int8 and float32) against sentence-transformers, in one run."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--queries", type=int, default=200, help="Questions embedded one per call.")
        parser.add_argument("--batches", type=int, default=12, help="Calls of 64 turns.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        conversations = load_conversations()
        questions = [q.question for c in conversations for q in c.questions][: options["queries"]]
        turns = [f"{t.speaker}: {t.text}" for c in conversations for s in c.sessions for t in s.turns]
        batches = [turns[i : i + WORKER_BATCH] for i in range(0, len(turns), WORKER_BATCH)][: options["batches"]]
        pipelines: dict[str, Encoder] = {
            "onnx runtime, int8 (now)": MiniLM(threads=1, precision=INT8).encode,
            "onnx runtime, float32 (ADR 0063)": MiniLM(threads=1, precision=FLOAT32).encode,
            REFERENCE: _reference(),
        }
        names = list(pipelines)
        rows: list[tuple[str, str, int, int, float, float]] = []
        cosines: dict[str, list[float]] = {name: [] for name in names if name != REFERENCE}
        for workload, calls in (("query", [[q] for q in questions]), ("worker batch", batches)):
            seconds: dict[str, list[float]] = {name: [] for name in names}
            for encode in pipelines.values():
                encode(calls[0])  # warm
            for call in tqdm(calls, desc=workload, unit="call"):
                vectors = {}
                for name, encode in pipelines.items():
                    start = time.perf_counter()
                    vectors[name] = encode(call)
                    seconds[name].append(time.perf_counter() - start)
                for name in cosines:
                    cosines[name].extend((vectors[name] * vectors[REFERENCE]).sum(axis=1).tolist())
            texts = sum(len(call) for call in calls)
            rate = {name: texts / sum(spent) for name, spent in seconds.items()}
            for name, spent in seconds.items():
                rows.append((workload, name, len(calls), texts, rate[name], 1000 * percentile(spent, 0.5)))
            for faster, slower in itertools.pairwise(names):
                rows.append((workload, f"{faster} ÷ {slower}", len(calls), texts, rate[faster] / rate[slower], 0))
        report = self._report(rows, cosines)
        self.stdout.write(report)
        if options["write_docs"]:
            write_section("bench_embedder", report)

    @staticmethod
    def _report(rows: list[tuple[str, str, int, int, float, float]], cosines: dict[str, list[float]]) -> str:
        agreement = "; ".join(
            f"{name}: lowest {min(values):.6f}, mean {sum(values) / len(values):.6f}"
            for name, values in cosines.items()
        )
        lines = [
            "## The local embedder (`python manage.py bench_embedder --write-docs`)",
            "",
            f"all-MiniLM-L6-v2, one inference thread each, {platform.machine()}, {os.cpu_count()} cores; "
            f"load average {os.getloadavg()[0]:.1f} at the end. The pipelines run alternately, call by call. "
            f"Cosine of each pipeline's vectors with the torch pipeline's, {agreement}.",
            "",
            "| workload | pipeline | calls | texts | texts/s | p50 ms per call |",
            "|---|---|---|---|---|---|",
        ]
        for workload, name, calls, texts, rate, p50 in rows:
            if "÷" in name:
                lines.append(f"| {workload} | **{name}** | | | **{rate:.2f}×** | |")
            else:
                lines.append(f"| {workload} | {name} | {calls} | {texts} | {rate:.1f} | {p50:.1f} |")
        return "\n".join(lines) + "\n"
