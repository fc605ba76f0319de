"""LightningDataModules: data generation, loading, splits and collation."""

from datamodules.compas import CompasDataModule
from datamodules.compas_fairness import CompasFairnessDataModule
from datamodules.constrained_problems import ConstrainedProblemDataModule
from datamodules.convection import ConvectionDataModule
from datamodules.digits import DigitsDataModule
from datamodules.digits_interpolation import DigitsInterpolationDataModule
from datamodules.permutation_teacher import PermutationTeacherDataModule
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
    "QoSDDataModule",
    "TensorClassificationDataModule",
    "TinyShakespeareDataModule",
    "VRPDataModule",
]
