"""Seeded draws: the generator's own numbers, on the device asked for, for any generator."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge.problems.seeded_draws import categorical, integers, normal, uniform


@given(seed=st.integers(0, 2**31), rows=st.integers(1, 5), cols=st.integers(1, 7))
def test_draws_are_the_generators_own_numbers_on_the_device(
    seed: int, rows: int, cols: int
) -> None:
    """Each helper returns exactly what torch draws from the same generator state, moved to the
    target device (so a CPU generator gives the same numbers on CPU and CUDA)."""
    for device in ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]:
        reference = torch.Generator().manual_seed(seed)
        expected = [
            torch.rand(rows, cols, generator=reference),
            torch.randint(2, 9, (rows, cols), generator=reference),
            torch.randn(rows, cols, generator=reference, dtype=torch.float64),
            torch.multinomial(torch.full((rows, 3), 1 / 3), cols, True, generator=reference),
        ]
        generator = torch.Generator().manual_seed(seed)
        drawn = [
            uniform((rows, cols), generator, device),
            integers(2, 9, (rows, cols), generator, device),
            normal((rows, cols), generator, device, dtype=torch.float64),
            categorical(torch.full((rows, 3), 1 / 3, device=device), cols, generator),
        ]
        for got, want in zip(drawn, expected, strict=True):
            assert got.device.type == device
            assert torch.equal(got.cpu(), want)
        assert ((drawn[1] >= 2) & (drawn[1] < 9)).all()


def test_without_a_generator_the_global_stream_is_used() -> None:
    """`generator=None` draws from torch's global stream (seeded by `torch.manual_seed`)."""
    torch.manual_seed(5)
    expected = torch.randn(3, 2)
    probabilities = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    torch.manual_seed(5)
    assert torch.equal(normal((3, 2), None, "cpu"), expected)
    assert categorical(probabilities, 4, None).tolist() == [[1] * 4, [0] * 4]
