"""Equality-constrained learning experiments (Barthakur & Chamon): fairness, PINN, interpolation."""

from lightning_modules.constrained.convection_pinn import ConvectionPINN
from lightning_modules.constrained.fair_classifier import FairClassifier
from lightning_modules.constrained.interpolating_classifier import InterpolatingClassifier

__all__ = ["ConvectionPINN", "FairClassifier", "InterpolatingClassifier"]
