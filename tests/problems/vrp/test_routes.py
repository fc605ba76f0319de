"""The one route splitter of VRP solutions."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.vrp.routes import split_routes


def test_split_routes_drops_empty_routes() -> None:
    """Leading, trailing and repeated zeros give no empty routes."""
    assert split_routes([0, 2, 1, 0, 0, 3, 0, 0]) == [[2, 1], [3]]
    assert split_routes(torch.tensor([0, 0])) == []


@given(
    routes=st.lists(st.lists(st.integers(1, 50), min_size=1, max_size=6), max_size=6),
    padding=st.integers(0, 3),
)
def test_joining_routes_with_zeros_and_splitting_gives_them_back(
    routes: list[list[int]], padding: int
) -> None:
    """Routes joined by depot visits (and padded with zeros) split back into the same routes,
    from a list, a numpy array and a tensor alike."""
    sequence = [0]
    for route in routes:
        sequence += [*route, 0]
    sequence += [0] * padding
    for form in (sequence, np.asarray(sequence), torch.tensor(sequence)):
        assert split_routes(form) == routes
