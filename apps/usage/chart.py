"""A daily bar chart's geometry, for a server-rendered SVG (no script, no CDN). Framework-free.

The value axis is rounded up to a "nice" number (1, 2 or 5 times a power of ten) so its
gridlines read as round figures; every day gets a bar slot, the quiet ones included, so gaps
in activity show as gaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT = 720, 200
LEFT, RIGHT, TOP, BOTTOM = 48, 8, 10, 24
GRID_STEPS = (5, 4, 2, 1)  # the most gridlines that split the axis into whole steps


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Tick:
    value: int
    y: float


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    baseline: float
    bars: list[Bar]
    ticks: list[Tick]
    first_label: str
    last_label: str
    peak: int


def nice_ceiling(value: int) -> int:
    """The smallest 1, 2 or 5 × 10^k at or above ``value`` (at least 1)."""
    if value <= 1:
        return 1
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= value:
                return step * scale
        scale *= 10


def bar_chart(points: Sequence[tuple[str, int]]) -> Chart:
    """``points`` as (label, value), one per day, oldest first."""
    peak = max((value for _, value in points), default=0)
    top = nice_ceiling(peak)
    steps = next(n for n in GRID_STEPS if top % n == 0)  # gridlines at whole, round values
    plot_height = HEIGHT - TOP - BOTTOM
    baseline = TOP + plot_height
    slot = (WIDTH - LEFT - RIGHT) / max(len(points), 1)
    bars = []
    for index, (label, value) in enumerate(points):
        height = plot_height * value / top
        bars.append(
            Bar(
                label=label,
                value=value,
                x=round(LEFT + index * slot + slot * 0.15, 2),
                y=round(baseline - height, 2),
                width=round(slot * 0.7, 2),
                height=round(height, 2),
            )
        )
    ticks = [Tick(value=top * i // steps, y=round(baseline - plot_height * i / steps, 2)) for i in range(steps + 1)]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        baseline=baseline,
        bars=bars,
        ticks=ticks,
        first_label=points[0][0] if points else "",
        last_label=points[-1][0] if points else "",
        peak=peak,
    )
