"""LightningDataModules: data generation, loading, splits and collation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from datamodules.compas import CompasDataModule
    from datamodules.compas_fairness import CompasFairnessDataModule
    from datamodules.constrained_problems import ConstrainedProblemDataModule
    from datamodules.convection import ConvectionDataModule
    from datamodules.digits import DigitsDataModule
    from datamodules.digits_interpolation import DigitsInterpolationDataModule
    from datamodules.permutation_teacher import PermutationTeacherDataModule
    from datamodules.preferences import PreferenceDataModule
    from datamodules.qosd import QoSDDataModule
    from datamodules.tensor_classification import TensorClassificationDataModule
    from datamodules.tinyshakespeare import TinyShakespeareDataModule
    from datamodules.vrp import VRPDataModule

__all__ = [
    "CompasDataModule",
    "CompasFairnessDataModule",
    "ConstrainedProblemDataModule",
    "ConvectionDataModule",
    "DigitsDataModule",
    "DigitsInterpolationDataModule",
    "PermutationTeacherDataModule",
    "PreferenceDataModule",
    "QoSDDataModule",
    "TensorClassificationDataModule",
    "TinyShakespeareDataModule",
    "VRPDataModule",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "datamodules.compas": ("CompasDataModule",),
        "datamodules.compas_fairness": ("CompasFairnessDataModule",),
        "datamodules.constrained_problems": ("ConstrainedProblemDataModule",),
        "datamodules.convection": ("ConvectionDataModule",),
        "datamodules.digits": ("DigitsDataModule",),
        "datamodules.digits_interpolation": ("DigitsInterpolationDataModule",),
        "datamodules.permutation_teacher": ("PermutationTeacherDataModule",),
        "datamodules.preferences": ("PreferenceDataModule",),
        "datamodules.qosd": ("QoSDDataModule",),
        "datamodules.tensor_classification": ("TensorClassificationDataModule",),
        "datamodules.tinyshakespeare": ("TinyShakespeareDataModule",),
        "datamodules.vrp": ("VRPDataModule",),
    },
)
