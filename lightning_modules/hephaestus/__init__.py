"""Hephaestus for QoSD: Forge (edge-stress GNN + Predictive Path-Stressing)."""

from lightning_modules.hephaestus.forge import Forge
from lightning_modules.hephaestus.predictive_path_stressing import predictive_path_stressing
from lightning_modules.hephaestus.stress_gnn import EdgeStressGNN

__all__ = ["EdgeStressGNN", "Forge", "predictive_path_stressing"]
