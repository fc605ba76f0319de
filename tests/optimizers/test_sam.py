"""SAM family: hand-computed steps, independent references, closure contract, state, errors."""

from __future__ import annotations

import copy
import functools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.optimizers.msam import MSAM
from optiforge.optimizers.nsam import NSAM
from optiforge.optimizers.rwsam import RWSAM, rademacher, sign_buffer
from optiforge.optimizers.sam import SAM
from optiforge.optimizers.sharpness_pass import SharpnessPass, sharpness_pass

SGD = functools.partial(torch.optim.SGD, lr=0.1)


def quadratic_closure(w: torch.Tensor, a: torch.Tensor, optimizer: torch.optim.Optimizer):
    """Closure of f(w) = 0.5 w^T diag(a) w that counts its calls."""
    calls = []

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = 0.5 * (a * w * w).sum()
        loss.backward()
        calls.append(1)
        return loss

    return closure, calls


@pytest.mark.parametrize(
    "build",
    [lambda p: SAM(p, SGD, rho=0.1), lambda p: SAM(p, torch.optim.SGD, rho=0.1, lr=0.1)],
    ids=["partial", "keywords"],
)
def test_sam_step_by_hand(build) -> None:
    """w=(1,1), A=diag(1,3), rho=0.1, lr=0.1: w' = w - lr * A(w + rho Aw/||Aw||), with the base
    optimizer's lr in a partial or as a keyword of SAM."""
    w = torch.tensor([1.0, 1.0], requires_grad=True)
    a = torch.tensor([1.0, 3.0])
    optimizer = build([w])
    closure, calls = quadratic_closure(w, a, optimizer)
    loss = optimizer.step(closure)
    e = 0.1 * torch.tensor([1.0, 3.0]) / math.sqrt(10.0)
    expected = torch.tensor([1.0, 1.0]) - 0.1 * a * (torch.tensor([1.0, 1.0]) + e)
    assert torch.allclose(w.detach(), expected, atol=1e-7)
    assert expected.tolist() == pytest.approx([0.8968377, 0.6715395], abs=1e-6)
    assert loss.item() == pytest.approx(2.0)
    assert len(calls) == 2


def test_asam_perturbation_by_hand() -> None:
    """ASAM: e = rho T^2 g / ||T g|| with T = |w|; checked on w=(2, 0.5), f = 0.5||w||^2."""
    w = torch.tensor([2.0, 0.5], requires_grad=True)
    optimizer = SAM([w], SGD, rho=0.1, adaptive=True)
    closure, _ = quadratic_closure(w, torch.ones(2), optimizer)
    closure()
    saved = optimizer.perturb()
    norm = math.sqrt(16.0 + 0.0625)
    expected_e = torch.tensor([0.1 * 8.0 / norm, 0.1 * 0.125 / norm])
    assert torch.allclose(w.detach() - torch.tensor([2.0, 0.5]), expected_e, atol=1e-7)
    optimizer.restore(saved)
    assert torch.equal(w.detach(), torch.tensor([2.0, 0.5]))


def test_rho_zero_is_the_base_optimizer() -> None:
    """rho = 0 gives exactly one SGD step."""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    optimizer = SAM([w], SGD, rho=0.0)
    closure, _ = quadratic_closure(w, torch.tensor([1.0, 3.0]), optimizer)
    optimizer.step(closure)
    assert torch.allclose(w.detach(), torch.tensor([0.9, -1.4]))


# --- contract-based variants on a least-squares problem ---------------------------------------

torch.manual_seed(0)
X = torch.randn(16, 3)
Y = torch.randn(16)


def make(variant: type, **kwargs) -> tuple[torch.nn.Linear, torch.optim.Optimizer]:
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 1)
    return model, variant(model.parameters(), SGD, **kwargs)


def contract_closure(model: torch.nn.Module, optimizer: torch.optim.Optimizer, calls: list):
    """A closure that follows the sharpness-pass contract, on (X, Y)."""

    def closure():
        optimizer.zero_grad()
        sharp = sharpness_pass(optimizer)
        x, y = sharp.select((X, Y))
        losses = (model(x).squeeze(-1) - y) ** 2
        loss = sharp.reduce(losses)
        if loss is not None:
            loss.backward()
        calls.append(sharp)
        return loss

    return closure


def reference_sam_gradient(
    model: torch.nn.Module, ascent_rows: slice, descent_rows: slice, rho: float
) -> list[torch.Tensor]:
    """SAM's descent gradient written out with autograd, independent of the optimizer code."""
    params = list(model.parameters())

    def loss_at(weights: list[torch.Tensor], rows: slice) -> torch.Tensor:
        prediction = X[rows] @ weights[0].T + weights[1]
        return ((prediction.squeeze(-1) - Y[rows]) ** 2).mean()

    g = torch.autograd.grad(loss_at(params, ascent_rows), params)
    norm = torch.sqrt(sum((x**2).sum() for x in g))
    perturbed = [p.detach() + rho * x / norm for p, x in zip(params, g, strict=True)]
    perturbed = [p.requires_grad_() for p in perturbed]
    return list(torch.autograd.grad(loss_at(perturbed, descent_rows), perturbed))


@pytest.mark.parametrize("m", [2, 4, 8, 16])
def test_msam_matches_a_written_out_micro_batch_loop(m: int) -> None:
    """m-SAM's update is lr times the mean over micro-batches of each one's SAM gradient."""
    model, optimizer = make(MSAM, rho=0.05, micro_batch_size=m)
    start = [p.detach().clone() for p in model.parameters()]
    chunks = [slice(j * m, (j + 1) * m) for j in range(16 // m)]
    grads = [reference_sam_gradient(model, c, c, 0.05) for c in chunks]
    mean = [torch.stack(parts).mean(0) for parts in zip(*grads, strict=True)]
    calls: list = []
    optimizer.step(contract_closure(model, optimizer, calls))
    assert len(calls) == 2 * (16 // m)
    for p, p0, g in zip(model.parameters(), start, mean, strict=True):
        assert torch.allclose(p.detach(), p0 - 0.1 * g, atol=1e-6)


def test_msam_with_the_whole_batch_is_sam() -> None:
    """m = batch size reproduces SAM bit for bit."""
    model_a, msam = make(MSAM, rho=0.05, micro_batch_size=16)
    model_b, sam = make(SAM, rho=0.05)
    for _ in range(3):
        msam.step(contract_closure(model_a, msam, []))
        sam.step(contract_closure(model_b, sam, []))
    for a, b in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.equal(a, b)


def test_nsam_uses_separate_ascent_rows() -> None:
    """n-SAM ascends on rows [B:] and descends on rows [:B]."""
    model, optimizer = make(NSAM, rho=0.05, descent_batch_size=4)
    start = [p.detach().clone() for p in model.parameters()]
    expected = reference_sam_gradient(model, slice(4, None), slice(0, 4), 0.05)
    calls: list = []
    optimizer.step(contract_closure(model, optimizer, calls))
    assert len(calls) == 2
    for p, p0, g in zip(model.parameters(), start, expected, strict=True):
        assert torch.allclose(p.detach(), p0 - 0.1 * g, atol=1e-6)


def test_rwsam_with_zero_temperature_is_sam() -> None:
    """lambda = 0 makes the weights uniform; the probe leaves the weights bit-exact."""
    model_a, rwsam = make(RWSAM, rho=0.05, temperature=0.0)
    model_b, sam = make(SAM, rho=0.05)
    calls: list = []
    for _ in range(3):
        rwsam.step(contract_closure(model_a, rwsam, calls))
        sam.step(contract_closure(model_b, sam, []))
    assert len(calls) == 9
    assert [c.probe for c in calls[:3]] == [True, False, False]
    for a, b in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-7)


def test_rwsam_weights_by_hand() -> None:
    """probe (1, 2), losses (0.9, 1.0), delta 0.1: norms (1, 10); lambda 0.1: softmax(0.1, 1)."""
    sharp = SharpnessPass(
        reweight=True, probe_losses=torch.tensor([1.0, 2.0]), temperature=0.1, delta=0.1
    )
    weights = sharp.sample_weights(torch.tensor([0.9, 1.0]))
    e = math.exp(0.9)
    assert weights.tolist() == pytest.approx([1 / (1 + e), e / (1 + e)], abs=1e-6)
    loss = sharp.reduce(torch.tensor([0.9, 1.0]))
    assert float(loss) == pytest.approx(0.9 / (1 + e) + e / (1 + e), abs=1e-6)


def test_rademacher_signs_are_seeded_balanced_and_uncorrelated() -> None:
    """200,003 draws (not a multiple of 8): only +-1, the same for the same seed, mean and
    neighbour / stride-8 / stride-64 correlations within 5 standard errors of 0."""
    z = rademacher(200_003, torch.Generator().manual_seed(7), torch.float64)
    assert z.shape == (200_003,) and set(z.unique().tolist()) == {-1.0, 1.0}
    assert torch.equal(z, rademacher(200_003, torch.Generator().manual_seed(7), torch.float64))
    out = sign_buffer(200_003, torch.float64).fill_(5.0)
    written = rademacher(200_003, torch.Generator().manual_seed(7), torch.float64, out)
    assert written.data_ptr() == out.data_ptr() and torch.equal(written, z)
    with pytest.raises(ValueError, match="out must be a 1-D"):
        rademacher(200_003, torch.Generator(), torch.float64, torch.empty(200_003))
    bound = 5 / math.sqrt(len(z))
    assert abs(float(z.mean())) < bound
    for lag in (1, 8, 64):
        assert abs(float((z[:-lag] * z[lag:]).mean())) < bound


def test_weight_copies_are_reused_and_restore_bit_for_bit() -> None:
    """`copy_weights` keeps one buffer per parameter across steps (no fresh allocation), and
    after several SAM steps the buffers are still the ones first allocated."""
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 3)
    optimizer = SAM(model.parameters(), functools.partial(torch.optim.SGD, lr=0.1), rho=0.1)
    x, y = torch.randn(8, 5), torch.randn(8, 3)

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    optimizer.step(closure)
    buffers = [optimizer._weight_buffers[p].data_ptr() for p in model.parameters()]
    before = [p.detach().clone() for p in model.parameters()]
    saved = optimizer.copy_weights(list(model.parameters()))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    SAM.restore(saved)
    assert all(torch.equal(p, b) for p, b in zip(model.parameters(), before, strict=True))
    optimizer.step(closure)
    assert [optimizer._weight_buffers[p].data_ptr() for p in model.parameters()] == buffers


def test_rwsam_probe_estimates_per_sample_gradient_norms() -> None:
    """For linear f_i(w) = a_i.w the probe gives delta a_i.z; its mean square over directions
    is ||a_i||^2 (Rademacher z), the quantity RW-SAM's weights need."""
    a = torch.tensor([[3.0, 4.0, 0.0], [1.0, 0.0, 0.0]])
    w = torch.zeros(3, requires_grad=True)
    optimizer = RWSAM([w], SGD, delta=0.01, seed=3)
    squares = []
    for _ in range(2000):
        saved = optimizer._probe_direction()
        estimate = (a @ w.detach()) / 0.01
        optimizer.restore(saved)
        squares.append(estimate**2)
    mean_square = torch.stack(squares).mean(0)
    assert mean_square.tolist() == pytest.approx([25.0, 1.0], rel=0.05)


@pytest.mark.parametrize(
    ("variant", "kwargs", "closures"),
    [
        (SAM, {}, 2),
        (MSAM, {"micro_batch_size": 4}, 8),
        (NSAM, {"descent_batch_size": 8}, 2),
        (RWSAM, {}, 3),
    ],
)
def test_state_dict_round_trip_continues_identically(variant, kwargs, closures) -> None:
    """5 steps, save, load into a fresh optimizer, 5 steps == 10 uninterrupted steps."""
    momentum_sgd = functools.partial(torch.optim.SGD, lr=0.05, momentum=0.9)
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 1)
    optimizer = variant(model.parameters(), momentum_sgd, **kwargs)
    calls: list = []
    for _ in range(5):
        optimizer.step(contract_closure(model, optimizer, calls))
    assert len(calls) == 5 * closures
    state = copy.deepcopy(optimizer.state_dict())  # state_dict holds live references
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    for _ in range(5):
        optimizer.step(contract_closure(model, optimizer, []))
    uninterrupted = [p.detach().clone() for p in model.parameters()]
    model.load_state_dict(weights)
    fresh = variant(model.parameters(), momentum_sgd, **kwargs)
    fresh.load_state_dict(state)
    for _ in range(5):
        fresh.step(contract_closure(model, fresh, []))
    for p, q in zip(model.parameters(), uninterrupted, strict=True):
        assert torch.equal(p.detach(), q)
    assert fresh.base_optimizer.state is fresh.state


@settings(max_examples=30, deadline=None)
@given(
    rho=st.floats(0.001, 1.0),
    values=st.lists(
        st.floats(-5, 5).filter(lambda v: v == 0 or abs(v) > 1e-6), min_size=2, max_size=6
    ),
)
def test_perturbation_has_length_rho(rho: float, values: list[float]) -> None:
    """||e|| = rho for any nonzero gradient (SAM), and the weights come back exactly.
    (float64, so that w + e - w is exact enough; entries below 1e-6 are excluded because in
    float32 their squares underflow, the norm is 0 and SAM then does not perturb.)"""
    w = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    if not bool((w != 0).any()):
        return
    optimizer = SAM([w], SGD, rho=rho)
    closure, _ = quadratic_closure(w, torch.ones(len(values), dtype=torch.float64), optimizer)
    closure()
    start = w.detach().clone()
    saved = optimizer.perturb()
    assert float(torch.linalg.vector_norm(w.detach() - start)) == pytest.approx(rho, rel=1e-4)
    optimizer.restore(saved)
    assert torch.equal(w.detach(), start)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda p: SAM(p, torch.optim.SGD, lr=-0.1), r"^base_optimizer.lr must be >= 0, got -0.1$"),
        (
            lambda p: RWSAM(p, functools.partial(torch.optim.SGD, lr=-0.1)),
            r"^base_optimizer.lr must be >= 0, got -0.1$",
        ),
        (
            lambda p: MSAM(p, torch.optim.SGD, lr=0.1, momentum=-0.9),
            r"^base_optimizer.momentum must be >= 0, got -0.9$",
        ),
        (
            lambda p: NSAM(p, torch.optim.SGD, lr=0.1, momentun=0.9),
            r"^base_optimizer: .*unexpected keyword argument 'momentun'",
        ),
        (lambda p: SAM(p, SGD, rho=-0.1), "rho must be >= 0"),
        (lambda p: MSAM(p, SGD, micro_batch_size=0), "micro_batch_size must be > 0"),
        (lambda p: NSAM(p, SGD, descent_batch_size=0), "descent_batch_size must be > 0"),
        (lambda p: RWSAM(p, SGD, delta=0.0), "delta must be > 0"),
        (lambda p: RWSAM(p, SGD, temperature=-1.0), "temperature must be >= 0"),
    ],
)
def test_bad_arguments_name_the_field(build, message: str) -> None:
    """A bad value, also the base optimizer's, raises one ValueError naming the field."""
    with pytest.raises(ValueError, match=message):
        build([torch.zeros(2, requires_grad=True)])


def test_micro_batch_not_dividing_the_batch_is_an_error() -> None:
    """m = 5 on a batch of 16 fails with both numbers in the message."""
    model, optimizer = make(MSAM, micro_batch_size=5)
    with pytest.raises(ValueError, match="micro_batch_size=5 must divide the batch size.*16"):
        optimizer.step(contract_closure(model, optimizer, []))


def test_nsam_needs_rows_for_the_ascent() -> None:
    """NSAM raises when descent_batch_size leaves no rows for the ascent."""
    model, optimizer = make(NSAM, descent_batch_size=16)
    with pytest.raises(ValueError, match="descent_batch_size=16 must be smaller"):
        optimizer.step(contract_closure(model, optimizer, []))


def test_missing_closure_and_ignored_contract_fail_loudly() -> None:
    """No closure, or a closure that ignores the pass, is an error, not a silent SAM."""
    model, optimizer = make(MSAM, micro_batch_size=4)
    with pytest.raises(RuntimeError, match="needs a closure"):
        optimizer.step()

    def plain_closure():
        optimizer.zero_grad()
        loss = ((model(X).squeeze(-1) - Y) ** 2).mean()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="sharpness-pass contract"):
        optimizer.step(plain_closure)
