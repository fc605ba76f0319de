"""The claims registry: every system's headline claim, with its numbers' result files."""

from __future__ import annotations

from benchmarks.reproduction.claims_learned import CLAIMS_LEARNED
from benchmarks.reproduction.claims_methods import CLAIMS_METHODS
from benchmarks.reproduction.model import Claim

CLAIMS: tuple[Claim, ...] = (*CLAIMS_LEARNED, *CLAIMS_METHODS)
