"""Which hidden representation a trained two-layer network is near, up to relabeling neurons.

An MLP is unchanged by permuting its hidden neurons, so "the network is equivariant with hidden
representation R" means: some relabeling of the hidden neurons puts the dense weights on R's
equivariant subspace. The distance to that union of subspaces is

    min over neuron relabelings pi of || theta(pi) - proj_R(theta(pi)) ||,

a quadratic assignment problem. For a neuron placed at hidden point p, the squared distance
splits into (a) its residual to the weights invariant under the permutations fixing p (a
linear cost per neuron and point) and (b) the spread of its per-orbit means ("signature")
around the mean signature of p's orbit of points (the points of one orbit share the orbit
values). It is minimized k-means style: given each orbit's mean signature, place the neurons
by a linear assignment; given the placement, recompute the means; neither step increases the
distance. Starts: the identity relabeling, one seeded by farthest-point signatures, and random
seeds; the best is kept. The result is an upper bound on the exact distance; it is 0 for every
relabeled tied network tested (pairs, set and trivial blocks, n = 3..5, up to 6 copies) and
matches brute force over all relabelings of small free networks.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from scipy.optimize import linear_sum_assignment

from optiforge.problems.equivariant.permutation_linear import reynolds
from optiforge.problems.equivariant.permutation_rep import (
    PermutationRep,
    bias_labels,
    equality_pattern,
    orbit_labels,
)

NAME_ORDER = ("pairs", "set", "trivial")


def candidate_reps(n: int, dim: int) -> list[list[str]]:
    """Every hidden representation of dimension `dim` built from pairs, set and trivial blocks."""
    candidates = []
    for pairs in range(dim // n**2 + 1):
        for sets in range((dim - pairs * n**2) // n + 1):
            trivial = dim - pairs * n**2 - sets * n
            candidates.append(["pairs"] * pairs + ["set"] * sets + ["trivial"] * trivial)
    return candidates


def rep_name(blocks: Sequence[str]) -> str:
    """Short name of a block list: ["trivial", "set", "set"] -> "2 set + 1 trivial"."""
    return " + ".join(f"{blocks.count(b)} {b}" for b in NAME_ORDER if b in blocks)


def point_signatures(
    params: list[torch.Tensor],
    hidden_rep: PermutationRep,
    in_rep: PermutationRep,
    out_rep: PermutationRep,
) -> tuple[torch.Tensor, torch.Tensor]:
    """For every neuron h and hidden point p: the squared residual of h's weights to those
    invariant under the stabilizer of p [H, P], and h's signature at p [H, P, K]: its orbit means
    scaled by sqrt(class size), so that squared signature distances are weight distances."""
    weight1, bias1, weight2, _ = params
    labels1, count1 = orbit_labels(hidden_rep, in_rep)
    labels_b1, count_b1 = bias_labels(hidden_rep)
    labels2, count2 = orbit_labels(out_rep, hidden_rep)
    residuals, signatures = [], []
    for point in range(hidden_rep.dim):
        residual = torch.zeros(weight1.shape[0], dtype=weight1.dtype)
        parts = []
        for vectors, labels, count in (
            (weight1, labels1[point], count1),
            (weight2.T, labels2[:, point], count2),
        ):
            onehot = torch.nn.functional.one_hot(labels, count).to(vectors.dtype)
            sizes = onehot.sum(0)
            means = (vectors @ onehot) / sizes.clamp(min=1)
            residual = residual + (vectors - means @ onehot.T).square().sum(1)
            parts.append(means * sizes.sqrt())
        onehot_bias = torch.nn.functional.one_hot(labels_b1[point], count_b1).to(bias1.dtype)
        parts.append(bias1[:, None] * onehot_bias)
        residuals.append(residual)
        signatures.append(torch.cat(parts, dim=1))
    return torch.stack(residuals, dim=1), torch.stack(signatures, dim=1)


def place(
    residual: torch.Tensor,
    signature: torch.Tensor,
    orbit_means: torch.Tensor,
    orbit_of: torch.Tensor,
) -> tuple[torch.Tensor, float]:
    """Neuron placed at each point (linear assignment for fixed orbit means) and its cost."""
    cost = residual + (signature - orbit_means[orbit_of][None]).square().sum(-1)
    neurons, points = linear_sum_assignment(cost.numpy())
    neuron_at = torch.empty(residual.shape[1], dtype=torch.long)
    neuron_at[torch.as_tensor(points)] = torch.as_tensor(neurons)
    return neuron_at, float(cost[neurons, points].sum())


def mean_signatures(
    signature: torch.Tensor, neuron_at: torch.Tensor, orbit_of: torch.Tensor, orbits: int
) -> torch.Tensor:
    """Mean signature of each orbit of hidden points for a placement."""
    placed = signature[neuron_at, torch.arange(len(neuron_at))]
    sums = torch.zeros(orbits, placed.shape[1], dtype=placed.dtype).index_add(0, orbit_of, placed)
    return sums / torch.bincount(orbit_of, minlength=orbits)[:, None].to(placed.dtype)


def seeded_means(
    residual: torch.Tensor,
    signature: torch.Tensor,
    orbit_of: torch.Tensor,
    kinds: list[tuple],
    freedom: list[int],
    generator: torch.Generator | None,
    anywhere: bool = False,
) -> torch.Tensor:
    """Initial mean signatures of the point orbits from one seed neuron each, at its best-fitting
    point of the orbit. Orbits whose stabilizer leaves the fewest weights free (`freedom`) go
    first, since the neurons fitting them fit every less restricted orbit too. Without a
    generator, the seed is, among the unused neurons fitting the orbit's kind best, the one
    farthest from the seeds of earlier orbits of the same kind; with one, a random one of them
    (`anywhere`: of all unused neurons)."""
    means: dict[int, torch.Tensor] = {}
    seeds: dict[int, int] = {}
    used: set[int] = set()
    for orbit in sorted(range(len(kinds)), key=lambda o: freedom[o]):
        kind = kinds[orbit]
        points = torch.nonzero(orbit_of == orbit).squeeze(1)
        fit, best = residual[:, points].min(dim=1)
        same_kind = [seeds[o] for o in means if kinds[o] == kind]
        fitting = len(points) * kinds.count(kind)
        ranked = [h for h in torch.argsort(fit).tolist() if h not in used][:fitting]
        if generator is not None:
            pool = [h for h in range(residual.shape[0]) if h not in used] if anywhere else ranked
            seed = pool[int(torch.randint(len(pool), (1,), generator=generator))]
        elif not same_kind:
            seed = ranked[0]
        else:
            # compared at this orbit's points, where all signatures share coordinates
            spread = [
                min(
                    float(
                        (signature[h, points[best[h]]] - signature[s, points[best[s]]])
                        .square()
                        .sum()
                    )
                    for s in same_kind
                )
                for h in ranked
            ]
            seed = ranked[max(range(len(ranked)), key=spread.__getitem__)]
        used.add(seed)
        seeds[orbit] = seed
        means[orbit] = signature[seed, points[best[seed]]]
    return torch.stack([means[o] for o in range(len(kinds))])


def distance_to_rep(
    params: list[torch.Tensor],
    in_rep: PermutationRep,
    out_rep: PermutationRep,
    hidden_blocks: Sequence[str],
    restarts: int = 32,
    iterations: int = 50,
    seed: int = 0,
) -> float:
    """Distance of dense [W1, b1, W2, b2] to the equivariant networks with hidden representation
    `hidden_blocks`, minimized over hidden-neuron relabelings (see the module docstring);
    `restarts` starts in all (identity, farthest-point seeded, the rest randomly seeded: among
    the best-fitting neurons and among all, alternately)."""
    params = [p.detach().double() for p in params]
    hidden_rep = PermutationRep.of(in_rep.n, hidden_blocks)
    if hidden_rep.dim != params[0].shape[0]:
        raise ValueError(
            f"hidden_blocks has dimension {hidden_rep.dim}, "
            f"the network {params[0].shape[0]} neurons"
        )
    labels_b2, count_b2 = bias_labels(out_rep)
    fixed = (params[3] - reynolds(params[3], labels_b2, count_b2)).square().sum().item()
    residual, signature = point_signatures(params, hidden_rep, in_rep, out_rep)
    orbit_of, orbits = bias_labels(hidden_rep)
    first = [int(torch.nonzero(orbit_of == o)[0]) for o in range(orbits)]
    kinds = [
        (hidden_rep.blocks[hidden_rep.points[p][0]], equality_pattern(hidden_rep.points[p][1]))
        for p in first
    ]
    labels1, _ = orbit_labels(hidden_rep, in_rep)
    labels2, _ = orbit_labels(out_rep, hidden_rep)
    freedom = [labels1[p].unique().numel() + labels2[:, p].unique().numel() for p in first]
    generator = torch.Generator().manual_seed(seed)
    identity = torch.arange(hidden_rep.dim)
    starts = [mean_signatures(signature, identity, orbit_of, orbits)]
    starts += [
        seeded_means(
            residual, signature, orbit_of, kinds, freedom, generator if start else None, start % 2
        )
        for start in range(max(restarts - 1, 0))
    ]
    best = float("inf")
    for means in starts:
        previous = float("inf")
        for _ in range(iterations):
            neuron_at, value = place(residual, signature, means, orbit_of)
            means = mean_signatures(signature, neuron_at, orbit_of, orbits)
            if value >= previous - 1e-12:
                break
            previous = value
        best = min(best, previous)
    return (max(best, 0.0) + fixed) ** 0.5
