"""Bad input fails with one ValueError naming the argument."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from optiforge.algorithms.diverse.communicator import DenseCommunicator, Mixer
from optiforge.algorithms.diverse.data import split_shards
from optiforge.algorithms.diverse.diverse import Diverse
from optiforge.algorithms.diverse.problem import RobustRegression
from optiforge.algorithms.diverse.sampling import BatchSampler
from optiforge.algorithms.diverse.settings import RunSettings
from optiforge.algorithms.diverse.topology import make_topology
from tests.algorithms.diverse.conftest import random_shards

FEATURES, TARGETS = random_shards(2, 10, 2)
RING = DenseCommunicator(make_topology("ring", 2))


def diverse(**overrides: object) -> Diverse:
    arguments = {"step_size": 0.1, **overrides}
    return Diverse(RobustRegression(0.1, 0.1), FEATURES, TARGETS, RING, **arguments)


CASES: list[tuple[str, Callable[[], object]]] = [
    ("nodes", lambda: make_topology("ring", 0)),
    ("nodes", lambda: RunSettings(nodes=0)),
    ("nodes", lambda: split_shards(torch.ones(3, 2), torch.ones(3), 0)),
    ("topology", lambda: make_topology("star", 4)),
    ("topology", lambda: RunSettings(topology="hypercube")),
    ("edge_probability", lambda: make_topology("erdos_renyi", 4, 0.0)),
    ("step_size", lambda: diverse(step_size=0.0)),
    ("step_size", lambda: RunSettings(step_size=-1.0)),
    ("batch_size", lambda: diverse(batch_size=0.5)),
    ("batch_size", lambda: diverse(batch_size=11.0)),
    ("batch_size", lambda: BatchSampler("uniform", 6.0, 10)),
    ("batch_size", lambda: BatchSampler("fixed", 2.5, 10)),
    ("batch_distribution", lambda: diverse(batch_distribution="poisson")),
    ("alpha", lambda: diverse(alpha=-0.1)),
    ("beta", lambda: diverse(beta=1.5)),
    ("snapshot_probability", lambda: diverse(snapshot_probability=2.0)),
    ("mix_rounds", lambda: Mixer(RING, 0, True)),
    ("method", lambda: RunSettings(method="sgda")),
    ("lambda_x", lambda: RobustRegression(0.0, 1.0)),
]


@pytest.mark.parametrize(("name", "build"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_the_argument(name: str, build: Callable[[], object]) -> None:
    """The error message starts with the argument's name."""
    with pytest.raises(ValueError, match=f"^{name}: "):
        build()
