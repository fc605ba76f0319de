"""Equality-constrained learning experiments (Barthakur & Chamon): fairness, PINN, interpolation."""

from lightning_modules.constrained.convection_pinn import ConvectionPINN
from lightning_modules.constrained.fair_classifier import FairClassifier

__all__ = ["ConvectionPINN", "FairClassifier"]
