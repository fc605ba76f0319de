"""Plain torch optimizers (never import lightning here)."""

from optimizers.nsgd_hess import ClipNSGDHess, NSGDHess

__all__ = [
    "ClipNSGDHess",
    "NSGDHess",
]
