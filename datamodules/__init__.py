"""LightningDataModules: data generation, loading, splits and collation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.datamodules.compas import CompasDataModule
    from optiforge.datamodules.compas_fairness import CompasFairnessDataModule
    from optiforge.datamodules.constrained_problems import ConstrainedProblemDataModule
    from optiforge.datamodules.convection import ConvectionDataModule
    from optiforge.datamodules.copying_text import CopyingDataModule
    from optiforge.datamodules.digits import DigitsDataModule
    from optiforge.datamodules.digits_interpolation import DigitsInterpolationDataModule
    from optiforge.datamodules.permutation_teacher import PermutationTeacherDataModule
    from optiforge.datamodules.preferences import PreferenceDataModule
    from optiforge.datamodules.qosd import QoSDDataModule
    from optiforge.datamodules.tensor_classification import TensorClassificationDataModule
    from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule
    from optiforge.datamodules.vrp import VRPDataModule

__all__ = [
    "CopyingDataModule",
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
        "optiforge.datamodules.copying_text": ("CopyingDataModule",),
        "optiforge.datamodules.compas": ("CompasDataModule",),
        "optiforge.datamodules.compas_fairness": ("CompasFairnessDataModule",),
        "optiforge.datamodules.constrained_problems": ("ConstrainedProblemDataModule",),
        "optiforge.datamodules.convection": ("ConvectionDataModule",),
        "optiforge.datamodules.digits": ("DigitsDataModule",),
        "optiforge.datamodules.digits_interpolation": ("DigitsInterpolationDataModule",),
        "optiforge.datamodules.permutation_teacher": ("PermutationTeacherDataModule",),
        "optiforge.datamodules.preferences": ("PreferenceDataModule",),
        "optiforge.datamodules.qosd": ("QoSDDataModule",),
        "optiforge.datamodules.tensor_classification": ("TensorClassificationDataModule",),
        "optiforge.datamodules.tinyshakespeare": ("TinyShakespeareDataModule",),
        "optiforge.datamodules.vrp": ("VRPDataModule",),
    },
)
