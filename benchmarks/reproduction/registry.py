"""The claims registry: every system's headline claim, with its numbers' result files."""

from __future__ import annotations

from optiforge.benchmarks.reproduction.claims_learned import CLAIMS_LEARNED
from optiforge.benchmarks.reproduction.claims_methods import CLAIMS_METHODS
from optiforge.benchmarks.reproduction.model import Claim

CLAIMS: tuple[Claim, ...] = (*CLAIMS_LEARNED, *CLAIMS_METHODS)
