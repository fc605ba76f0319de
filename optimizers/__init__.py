"""Plain torch optimizers (never import lightning here)."""
