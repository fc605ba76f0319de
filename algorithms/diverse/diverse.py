"""DIVERSE: decentralized variance-reduced optimistic gradient with stochastic mini-batch sizes.

Node i holds z_i, a snapshot v_i with its full local operator g_i(v_i), a gradient tracker s_i and
its last estimate delta_i. With Mix = FastMix (Chebyshev-accelerated gossip, `communicator.py`),
iteration k is (matrix rows = nodes, reference notes of the paper):

    delta^k  = g(V^{k-1}) + (1/b) sum_{j in B^k} [g_j(Z^k) - g_j(V^{k-1})
                                                 + alpha (g_j(Z^k) - g_j(Z^{k-1}))]
    S^k      = Mix(S^{k-1} + Delta^k - Delta^{k-1})
    V^k      = Mix(Z^{k-1}) with probability p (one coin shared by all nodes), else V^{k-1}
    Z^{k+1}  = Mix((1 - beta) Z^k + beta V^k - eta S^k)

B^k is a random-size mini-batch (`sampling.py`), so delta is an unbiased loopless-SVRG estimate
of the optimistic direction g(Z^k) + alpha (g(Z^k) - g(Z^{k-1})). When the coin lands, the
snapshot mix travels in the same messages as the tracker mix, so an iteration always costs
2 x mix_rounds gossip rounds; a refreshed snapshot costs n oracle calls per node.
"""

from __future__ import annotations

import torch
from torch import Tensor

from optiforge.algorithms.diverse.communicator import Communicator, Mixer
from optiforge.algorithms.diverse.method import NodeMethod
from optiforge.algorithms.diverse.problem import RobustRegression
from optiforge.algorithms.diverse.sampling import BatchSampler, node_generator, shared_generator


class Diverse(NodeMethod):
    """DIVERSE on the nodes held by `communicator` (see the module docstring for the update).

    Args:
        step_size: eta (the paper's analysis asks eta <= 1 / (4 L)).
        alpha: optimism weight (the paper's deterministic regime uses 1 - mu eta).
        beta: pull towards the snapshot, in [0, 1]; None means beta = p.
        snapshot_probability: p, in [0, 1]; None means batch_size / n (a snapshot then costs
            as many oracle calls per iteration, in expectation, as the mini-batch).
        batch_size: expected mini-batch size b per node, in [1, n].
        batch_distribution: "binomial" (the paper's), "fixed" or "uniform".
        mix_rounds, accelerated: gossip rounds per Mix, and whether Mix is Chebyshev FastMix.
        seed: seeds node i's batches by (seed, i) and the shared snapshot coin by seed.
    """

    def __init__(
        self,
        problem: RobustRegression,
        features: Tensor,
        targets: Tensor,
        communicator: Communicator,
        step_size: float,
        alpha: float = 1.0,
        beta: float | None = None,
        snapshot_probability: float | None = None,
        batch_size: float = 1.0,
        batch_distribution: str = "binomial",
        mix_rounds: int = 1,
        accelerated: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__(problem, features, targets, communicator, step_size)
        self.sampler = BatchSampler(batch_distribution, batch_size, self.shard_size)
        p = batch_size / self.shard_size if snapshot_probability is None else snapshot_probability
        beta = p if beta is None else beta
        for name, value in (("snapshot_probability", p), ("alpha", alpha), ("beta", beta)):
            low, high = (0.0, float("inf")) if name == "alpha" else (0.0, 1.0)
            if not low <= value <= high:
                raise ValueError(f"{name}: must be in [{low}, {high}], got {value}")
        self.alpha, self.beta, self.snapshot_probability = alpha, beta, p
        self.mix = Mixer(communicator, mix_rounds, accelerated)
        self.generators = [node_generator(seed, node) for node in communicator.nodes]
        self.coin = shared_generator(seed)
        self.previous = self.z.clone()
        self.snapshot = self.z.clone()
        self.snapshot_operator = self.full_operator(self.snapshot)
        self.tracker = torch.zeros_like(self.z)
        self.estimate = torch.zeros_like(self.z)

    def estimator(self) -> Tensor:
        """delta^k: the snapshot operator plus the weighted mini-batch correction."""
        index, weight = self.sampler.draw_rows(self.generators)
        index, weight = index.to(self.z.device), weight.to(self.z.device, self.z.dtype)
        rows = torch.arange(index.shape[0], device=index.device)[:, None]
        features, targets = self.features[rows, index], self.targets[rows, index]
        at_z = self.problem.components(self.z, features, targets)
        at_snapshot = self.problem.components(self.snapshot, features, targets)
        at_previous = self.problem.components(self.previous, features, targets)
        correction = at_z - at_snapshot + self.alpha * (at_z - at_previous)
        self.evaluations += 3 * (weight > 0).sum(dim=1).cpu().to(torch.float64)
        return self.snapshot_operator + (weight[..., None] * correction).sum(dim=1)

    def step(self) -> None:
        estimate = self.estimator()
        tracked = self.tracker + estimate - self.estimate
        refresh = bool(torch.rand((), generator=self.coin) < self.snapshot_probability)
        if refresh:
            mixed = self.mix(torch.cat([tracked, self.previous], dim=1))
            self.tracker, self.snapshot = mixed.split(self.z.shape[1], dim=1)
        else:
            self.tracker = self.mix(tracked)
        anchor = (1.0 - self.beta) * self.z + self.beta * self.snapshot
        self.previous, self.z = self.z, self.mix(anchor - self.step_size * self.tracker)
        self.estimate = estimate
        if refresh:
            self.snapshot_operator = self.full_operator(self.snapshot)
