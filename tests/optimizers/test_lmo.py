"""Linear minimization oracles: hand-computed directions, dual norms, radii, registry errors."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.optimizers.lmo import (
    LMOS,
    NEWTON_SCHULZ_COEFFICIENTS,
    Auto,
    BiasRMS,
    ColNorm,
    RowNorm,
    Sign,
    Spectral,
    make_lmo,
)

SQRT2 = math.sqrt(2.0)
# Measured range of the singular values after 5 quintic Newton-Schulz steps on matrices whose
# Frobenius-normalized singular values are >= 0.01: [0.6818, 1.1344]; the scalar map
# s -> a s + b s^3 + c s^5 applied 5 times has exactly this range, so the bounds are tight.
NS5_SINGULAR_VALUE_RANGE = (0.68, 1.14)
# The same map never exceeds 1.2024 on (0, 1], whatever the conditioning.
NS5_MAX = 1.2024


def test_sign_matches_hand_values() -> None:
    """Sign gives -sign(d) / d_in and the dual norm ||d||_1 / d_in."""
    d = torch.tensor([[0.5, -2.0, 0.0], [3.0, -1.0, 4.0]])
    expected = torch.tensor([[-1.0, 1.0, 0.0], [-1.0, 1.0, -1.0]]) / 3
    torch.testing.assert_close(Sign()(d), expected)
    torch.testing.assert_close(Sign().dual_norm(d), torch.tensor(10.5 / 3))


def test_sign_on_vectors_and_conv_weights() -> None:
    """A vector uses d_in = 1; a conv weight [out, in, kh, kw] uses d_in = in * kh * kw."""
    torch.testing.assert_close(Sign()(torch.tensor([2.0, -0.1])), torch.tensor([-1.0, 1.0]))
    conv = torch.ones(2, 3, 2, 2)
    torch.testing.assert_close(Sign()(conv), -torch.ones(2, 3, 2, 2) / 12)


def test_colnorm_matches_hand_values() -> None:
    """ColNorm maps each column to -sqrt(d_out) col / ||col||; dual norm sqrt(d_out) sum ||col||."""
    d = torch.tensor([[3.0, 0.0], [4.0, 1.0]])
    out = ColNorm()(d)
    torch.testing.assert_close(out, -SQRT2 * torch.tensor([[0.6, 0.0], [0.8, 1.0]]))
    torch.testing.assert_close(torch.linalg.vector_norm(out, dim=0), torch.full((2,), SQRT2))
    torch.testing.assert_close(ColNorm().dual_norm(d), torch.tensor(6 * SQRT2))


def test_colnorm_transpose_normalizes_embedding_rows() -> None:
    """With transpose=True each row of an embedding table [vocab, dim] gets norm sqrt(dim)."""
    table = torch.tensor([[3.0, 4.0], [0.0, -2.0], [1.0, 1.0]])
    out = ColNorm(transpose=True)(table)
    torch.testing.assert_close(torch.linalg.vector_norm(out, dim=1), torch.full((3,), SQRT2))
    torch.testing.assert_close(out[0], -SQRT2 * torch.tensor([0.6, 0.8]))


def test_rownorm_matches_hand_values() -> None:
    """RowNorm maps each row to -row / (sqrt(d_in) ||row||); dual norm sum ||row|| / sqrt(d_in)."""
    d = torch.tensor([[3.0, 4.0], [0.0, -2.0]])
    expected = torch.tensor([[-0.6, -0.8], [0.0, 1.0]]) / SQRT2
    torch.testing.assert_close(RowNorm()(d), expected)
    torch.testing.assert_close(RowNorm().dual_norm(d), torch.tensor(7 / SQRT2))


def test_bias_rms_matches_hand_values() -> None:
    """BiasRMS gives -sqrt(n) d / ||d|| (unit RMS) and the dual norm sqrt(n) ||d||."""
    d = torch.tensor([3.0, 4.0])
    torch.testing.assert_close(BiasRMS()(d), -SQRT2 * torch.tensor([0.6, 0.8]))
    torch.testing.assert_close(BiasRMS().dual_norm(d), torch.tensor(5 * SQRT2))


def test_spectral_on_diagonal_follows_the_scalar_newton_schulz_map() -> None:
    """On diag(3, 0.5) each normalized singular value goes through p(s) = a s + b s^3 + c s^5."""
    a, b, c = NEWTON_SCHULZ_COEFFICIENTS
    values = [3.0 / math.sqrt(9.25), 0.5 / math.sqrt(9.25)]
    for _ in range(5):
        values = [a * s + b * s**3 + c * s**5 for s in values]
    out = Spectral()(torch.diag(torch.tensor([3.0, 0.5])))
    torch.testing.assert_close(out, -torch.diag(torch.tensor(values)), atol=1e-5, rtol=0)


def test_spectral_scales_by_sqrt_fan_ratio_and_flattens_conv() -> None:
    """A conv weight is orthogonalized as [out, in*kh*kw] and scaled by sqrt(out / (in*kh*kw))."""
    weight = torch.randn(4, 2, 3, 3, generator=torch.Generator().manual_seed(0))
    flat = weight.reshape(4, 18)
    expected = -math.sqrt(4 / 18) * Spectral().orthogonalize(flat)
    out = Spectral()(weight)
    assert out.shape == weight.shape
    torch.testing.assert_close(out.reshape(4, 18), expected)


def test_spectral_keeps_input_dtype_and_zero() -> None:
    """bfloat16 in, bfloat16 out (the iteration runs in float32); a zero matrix stays zero."""
    out = Spectral()(torch.randn(3, 5).to(torch.bfloat16))
    assert out.dtype == torch.bfloat16
    assert torch.equal(Spectral()(torch.zeros(3, 5)), torch.zeros(3, 5))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 8),
    cols=st.integers(1, 8),
    seed=st.integers(0, 2**31 - 1),
    low=st.floats(0.1, 1.0),
)
def test_newton_schulz_singular_values_near_one(
    rows: int, cols: int, seed: int, low: float
) -> None:
    """5 steps put every singular value of a matrix with condition number <= 10 in
    [0.68, 1.14] and keep its singular vectors (U^T O V diagonal to 1e-5)."""
    generator = torch.Generator().manual_seed(seed)
    k = min(rows, cols)
    u, _ = torch.linalg.qr(torch.randn(rows, k, generator=generator))
    v, _ = torch.linalg.qr(torch.randn(cols, k, generator=generator))
    singular = low + (1 - low) * torch.rand(k, generator=generator)
    matrix = u @ torch.diag(singular) @ v.T
    out = Spectral().orthogonalize(matrix)
    values = torch.linalg.svdvals(out)
    low_bound, high_bound = NS5_SINGULAR_VALUE_RANGE
    assert values.min() >= low_bound and values.max() <= high_bound
    core = u.T @ out @ v
    torch.testing.assert_close(core, torch.diag(torch.diagonal(core)), atol=1e-5, rtol=0)


def norm_in_own_geometry(name: str, v: torch.Tensor) -> float:
    """The norm whose unit ball the LMO `name` minimizes over (radius folded in)."""
    matrix = v.reshape(v.shape[0], -1) if v.ndim >= 2 else v
    if name == "Sign":
        d_in = matrix.shape[1] if v.ndim >= 2 else 1
        return float(v.abs().max() * d_in)
    if name == "ColNorm":
        return float(torch.linalg.vector_norm(matrix, dim=0).max() / math.sqrt(matrix.shape[0]))
    if name == "RowNorm":
        return float(torch.linalg.vector_norm(matrix, dim=1).max() * math.sqrt(matrix.shape[1]))
    return float(torch.linalg.vector_norm(v) / math.sqrt(v.numel()))  # BiasRMS


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(["Sign", "ColNorm", "RowNorm", "BiasRMS"]),
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=4),
    seed=st.integers(0, 2**31 - 1),
    factor=st.floats(1e-3, 1e3),
)
def test_exact_lmos_are_unit_norm_minimizers(
    name: str, shape: list[int], seed: int, factor: float
) -> None:
    """lmo(d) lies on its unit sphere, beats random points of the ball on <d, .>, and the
    dual norm is >= 0, equal to -<d, lmo(d)> and positively homogeneous."""
    lmo = make_lmo(name)
    if len(shape) < lmo.min_ndim:
        shape = [*shape, 2]
    generator = torch.Generator().manual_seed(seed)
    d = torch.randn(shape, generator=generator, dtype=torch.float64)
    v = lmo(d)
    assert math.isclose(norm_in_own_geometry(name, v), 1.0, rel_tol=1e-9)
    dual = float(lmo.dual_norm(d))
    assert dual >= 0
    assert math.isclose(dual, -float(torch.sum(d * v)), rel_tol=1e-12)
    assert math.isclose(float(lmo.dual_norm(factor * d)), factor * dual, rel_tol=1e-9)
    for _ in range(5):
        w = torch.randn(shape, generator=generator, dtype=torch.float64)
        w = w / norm_in_own_geometry(name, w)
        assert float(torch.sum(d * v)) <= float(torch.sum(d * w)) + 1e-9


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=2, max_size=4),
    seed=st.integers(0, 2**31 - 1),
    factor=st.floats(1e-2, 1e2),
)
def test_spectral_dual_norm_homogeneous_and_near_nuclear(
    shape: list[int], seed: int, factor: float
) -> None:
    """Spectral's dual norm is >= 0, homogeneous, and at most 1.2024 times
    sqrt(d_out / d_in) ||d||_nuclear (the exact value if Newton-Schulz were exact)."""
    d = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    lmo = Spectral()
    dual = float(lmo.dual_norm(d))
    assert dual >= 0
    assert math.isclose(float(lmo.dual_norm(factor * d)), factor * dual, rel_tol=1e-4)
    matrix = d.reshape(shape[0], -1)
    nuclear = math.sqrt(matrix.shape[0] / matrix.shape[1]) * float(
        torch.linalg.matrix_norm(matrix, ord="nuc")
    )
    assert dual <= NS5_MAX * nuclear * (1 + 1e-5)


def test_zero_direction_stays_zero() -> None:
    """No LMO divides by zero: a zero gradient gives a zero direction and a zero dual norm."""
    for name in LMOS:
        lmo = make_lmo(name)
        zero = torch.zeros(3, 4)
        assert torch.equal(lmo(zero), zero), name
        assert float(lmo.dual_norm(zero)) == 0.0, name


def test_auto_picks_by_rank() -> None:
    """Auto uses BiasRMS for vectors and Spectral for matrices and conv weights."""
    vector, matrix, conv = torch.randn(5), torch.randn(3, 4), torch.randn(2, 3, 3, 3)
    assert torch.equal(Auto()(vector), BiasRMS()(vector))
    assert torch.equal(Auto()(matrix), Spectral()(matrix))
    assert torch.equal(Auto(steps=2)(conv), Spectral(steps=2)(conv))


def test_make_lmo_is_case_insensitive_and_passes_kwargs() -> None:
    """make_lmo("spectral", steps=3) builds Spectral with 3 steps; "AUTO" builds Auto."""
    lmo = make_lmo("spectral", steps=3)
    assert isinstance(lmo, Spectral) and lmo.steps == 3
    assert isinstance(make_lmo("AUTO"), Auto)


def test_make_lmo_rejects_unknown_name_listing_choices() -> None:
    """An unknown norm raises a ValueError naming the field and every allowed name."""
    with pytest.raises(ValueError, match="norm must be one of") as info:
        make_lmo("frobenius")
    assert all(name in str(info.value) for name in LMOS)


def test_make_lmo_rejects_unknown_kwargs_and_bad_steps() -> None:
    """Keywords an LMO does not take, and steps < 1, raise naming the field."""
    with pytest.raises(ValueError, match="norm_kwargs"):
        make_lmo("Sign", steps=5)
    with pytest.raises(ValueError, match="steps must be > 0"):
        make_lmo("Spectral", steps=0)


def test_matrix_norms_reject_vectors() -> None:
    """Spectral, ColNorm and RowNorm refuse 1-D tensors with a message naming the field."""
    for name in ("Spectral", "ColNorm", "RowNorm"):
        with pytest.raises(ValueError, match="bias: norm"):
            make_lmo(name).check_shape(torch.Size([4]), "bias")


def test_spectral_bfloat16_iteration_stays_near_orthogonal() -> None:
    """bf16 Newton-Schulz (the reference code's choice): singular values in [0.6, 1.2] (measured
    0.68..1.11 on a 64x32 Gaussian), output in the input's dtype; unknown dtypes are refused."""
    torch.manual_seed(0)
    d = torch.randn(64, 32)
    u = Spectral(dtype="bfloat16")(d)
    assert u.dtype == torch.float32
    singular_values = torch.linalg.svdvals(u / (64 / 32) ** 0.5)
    assert float(singular_values.min()) >= 0.6 and float(singular_values.max()) <= 1.2
    with pytest.raises(ValueError, match="norm_kwargs.dtype"):
        Spectral(dtype="float16")  # type: ignore[arg-type]
