"""The non-dominated archive against brute force."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.multiobjective import ParetoArchive, non_dominated


def dominated_by(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """b is no worse than a everywhere and better somewhere."""
    pairs = list(zip(a, b, strict=True))
    return all(y <= x for x, y in pairs) and any(y < x for x, y in pairs)


def brute_force_front(f: torch.Tensor) -> set[tuple[float, ...]]:
    """Rows no other row dominates, by a double loop."""
    rows = [tuple(r) for r in f.tolist()]
    return {a for a in rows if not any(dominated_by(a, b) for b in rows)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), num_obj=st.integers(2, 3), chunks=st.integers(1, 4))
def test_archive_keeps_exactly_the_non_dominated_points(
    seed: int, num_obj: int, chunks: int
) -> None:
    """Fed in chunks, an unbounded archive holds the brute-force non-dominated set."""
    f = torch.rand(40, num_obj, generator=torch.Generator().manual_seed(seed)).round(decimals=1)
    archive = ParetoArchive(capacity=1000)
    for part in f.chunk(chunks):
        archive.update(part, part)
    assert {tuple(r) for r in archive.f.tolist()} == brute_force_front(f)
    assert non_dominated(archive.f).all()


def test_capacity_is_respected_and_extremes_kept() -> None:
    """A full archive of a front keeps `capacity` points including both extremes."""
    t = torch.linspace(0, 1, 50).unsqueeze(1)
    f = torch.cat([t, 1 - t], dim=1)
    archive = ParetoArchive(capacity=10)
    archive.update(f, f)
    assert len(archive.f) == 10
    assert {0.0, 1.0} <= set(archive.f[:, 0].tolist())
