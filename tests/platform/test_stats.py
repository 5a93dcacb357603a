import math

import pytest

from apps.platform.stats import percentile

pytestmark = pytest.mark.unit


def test_percentiles_interpolate_between_the_closest_ranks() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # unordered input
    assert percentile(values, 0.5) == pytest.approx(50.5)
    assert percentile(values, 0.95) == pytest.approx(95.05)
    assert percentile(values, 0.0) == 1.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0
    assert math.isnan(percentile([], 0.5))
