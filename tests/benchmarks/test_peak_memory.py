"""Peak tensor memory above the start of a measurement: hand-computed bytes on CPU (and CUDA
where there is one), max not sum of sequential allocations, Adam's two state buffers."""

from __future__ import annotations

import pytest
import torch

from optiforge.benchmarks.peak_memory import PeakMemory, window_peak

N = 1024  # floats: 4096 bytes, a multiple of the CUDA allocator's 512-byte granularity


def test_window_peak_by_hand() -> None:
    """Allocate 100, free it, allocate 60 and 30: peak 100 (max, not the 190 sum); a free of a
    block from before the window (address 9) does not lower the sum; no event: 0."""
    events = [(1, 100), (1, -100), (2, 60), (9, -500), (3, 30), (2, -60), (3, -30)]
    assert window_peak(events) == 100
    assert window_peak([(1, 40), (9, -500), (2, 70)]) == 110
    assert window_peak([(9, -500)]) == 0
    assert window_peak([]) == 0


def test_one_tensor_allocated_and_freed_peaks_at_its_bytes() -> None:
    """N float32 allocated and freed inside the window: peak 4N above the start, whatever was
    held before (a tensor allocated earlier and freed inside does not count either way)."""
    held = torch.ones(4 * N)
    with PeakMemory() as meter:
        block = torch.empty(N)
        del block
        del held
    assert meter.peak_bytes == 4 * N


def test_sequential_allocations_give_the_max_not_the_sum() -> None:
    """N floats freed before 2N floats are allocated: the peak is 8N bytes, not 12N; both held
    together: 12N."""
    with PeakMemory() as apart:
        first = torch.empty(N)
        del first
        second = torch.empty(2 * N)
        del second
    assert apart.peak_bytes == 8 * N
    with PeakMemory() as together:
        first, second = torch.empty(N), torch.empty(2 * N)
        del first, second
    assert together.peak_bytes == 12 * N


def _peak_of_steps(optimizer_cls: type[torch.optim.Optimizer], steps: int = 2) -> int:
    """Peak bytes of `steps` training steps of a 64 -> 16 linear model on a fixed batch."""
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 16)
    optimizer = optimizer_cls(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randn(32, 16)
    with PeakMemory() as meter:
        for _ in range(steps):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    assert meter.peak_bytes is not None
    return meter.peak_bytes


def test_adam_peaks_above_sgd_by_its_two_state_buffers() -> None:
    """Linear(64, 16): 64 * 16 + 16 = 1040 parameters; Adam keeps two buffers of them
    (2 * 1040 * 4 = 8320 bytes) through the second step's forward and backward, which plain SGD
    does in the same way without them. The peak counts the gradients too (allocated in the
    window): at least 1040 * 4 bytes for SGD."""
    sgd, adam = _peak_of_steps(torch.optim.SGD), _peak_of_steps(torch.optim.Adam)
    assert sgd >= 1040 * 4
    assert adam - sgd >= 2 * 1040 * 4
    assert _peak_of_steps(torch.optim.Adam) == adam  # deterministic to the byte


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_peak_of_one_tensor() -> None:
    """On CUDA: N floats allocated and freed: 4N bytes above what was held at the start."""
    held = torch.ones(N, device="cuda")
    with PeakMemory("cuda") as meter:
        block = torch.empty(N, device="cuda")
        del block
    assert meter.peak_bytes == 4 * N
    del held


def test_stop_before_start_and_other_devices_are_refused() -> None:
    """A measurement stopped before it started, or on a device other than cpu / cuda, raises."""
    with pytest.raises(RuntimeError, match="before start"):
        PeakMemory().stop()
    with pytest.raises(ValueError, match="cpu or cuda"):
        PeakMemory("meta")
