"""The generalization diagnostic of a training config: check it, retrain it K times on
resampled training sets, and estimate the conditional variance of its loss and the bound."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from optiforge.algorithms.generalization.config_check import check_config
from optiforge.algorithms.generalization.estimate import (
    GeneralizationEstimate,
    estimate_generalization,
)
from optiforge.algorithms.generalization.retraining import (
    Distributions,
    MetricKind,
    Progress,
    Retraining,
    run_retrainings,
)

MIN_RETRAININGS = 3  # the fit of the test loss on the training loss has two coefficients


@dataclass(frozen=True)
class Diagnosis:
    """The estimate, the retrainings it came from, and the wall time of all of them."""

    configs: tuple[str, ...]
    estimate: GeneralizationEstimate
    runs: tuple[Retraining, ...]
    wall_seconds: float
    workers: int
    distributions: Distributions | None

    def to_json(self) -> dict[str, Any]:
        """Plain data for a JSON file."""
        return {
            "configs": list(self.configs),
            "estimate": asdict(self.estimate),
            "runs": [asdict(run) for run in self.runs],
            "wall_seconds": self.wall_seconds,
            "workers": self.workers,
            "distributions": asdict(self.distributions) if self.distributions else None,
        }


def check_arguments(retrainings: int, workers: int, delta: float) -> None:
    """Range checks of the diagnostic's own numbers; errors name the option."""
    if retrainings < MIN_RETRAININGS:
        raise ValueError(f"retrainings: must be >= {MIN_RETRAININGS}, got {retrainings}")
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta: must be in (0, 1), got {delta}")


def diagnose(
    configs: Sequence[Path],
    retrainings: int,
    *,
    workers: int = 1,
    delta: float = 0.1,
    seed: int = 0,
    distributions: Distributions | None = None,
    metric: str = "acc",
    kind: MetricKind = "accuracy",
    runs_dir: Path | None = None,
    progress: Progress | None = None,
) -> Diagnosis:
    """Check everything, then retrain `retrainings` times (logs under `runs_dir`, a temporary
    folder when None) and estimate the bound at failure probability `delta`."""
    check_arguments(retrainings, workers, delta)
    check_config(configs, metric)
    with tempfile.TemporaryDirectory(prefix="generalization-") as scratch:
        start = time.perf_counter()
        runs = run_retrainings(
            configs,
            retrainings,
            runs_dir or Path(scratch),
            workers=workers,
            seed=seed,
            distributions=distributions,
            metric=metric,
            kind=kind,
            progress=progress,
        )
        wall = time.perf_counter() - start
    estimate = estimate_generalization(
        [run.train_loss for run in runs], [run.test_loss for run in runs], delta
    )
    return Diagnosis(
        configs=tuple(str(path) for path in configs),
        estimate=estimate,
        runs=tuple(runs),
        wall_seconds=wall,
        workers=workers,
        distributions=distributions,
    )
