"""Bad input fails by name, in one line."""

from __future__ import annotations

import numpy as np
import pytest

from optiforge.algorithms.submodular_streaming import (
    KnownVisitsSwap,
    LinearMemoryGreedy,
    OnDemandStreaming,
    SieveStreaming,
    Stream,
    SwapStreaming,
    expected_coverage,
    offline_greedy,
    synthetic_stream,
)

CASES = [
    ("k", lambda: OnDemandStreaming(0, 5, 3)),
    ("k", lambda: SwapStreaming(0, 5)),
    ("k", lambda: offline_greedy(synthetic_stream(10, 5, 2), 0)),
    ("visits_bound", lambda: OnDemandStreaming(2, 5, 0)),
    ("visits_bound", lambda: SieveStreaming(2, 5, 0)),
    ("num_visits", lambda: KnownVisitsSwap(2, 5, 0)),
    ("delta", lambda: OnDemandStreaming(2, 5, 3, delta=0.5)),
    ("capacity", lambda: LinearMemoryGreedy(2, 5, capacity=0)),
    ("probs", lambda: expected_coverage(np.array([1.5]), np.ones((1, 2), dtype=bool))),
    ("probs", lambda: Stream(np.array([-0.1]), np.ones((1, 2), dtype=bool), np.array([1]))),
    ("probs", lambda: expected_coverage(np.array([np.nan]), np.ones((1, 2), dtype=bool))),
    ("topics", lambda: Stream(np.array([0.5]), np.ones((1, 2)), np.array([1]))),
    ("visits", lambda: Stream(np.array([0.5]), np.ones((1, 2), dtype=bool), np.array([2]))),
]


@pytest.mark.parametrize(
    ("field", "make"), CASES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(CASES)]
)
def test_bad_input_names_the_field_in_one_line(field: str, make: object) -> None:
    """Each out-of-range argument raises ValueError whose one-line message names it."""
    with pytest.raises(ValueError, match=field) as error:
        make()  # type: ignore[operator]
    assert "\n" not in str(error.value)
