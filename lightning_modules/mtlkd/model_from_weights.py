"""The MTL-KD LightningModule a weights file describes (for evaluation scripts and tests).

Kept apart from `policy_weights` because it needs the module classes, which import
`policy_weights` themselves; the classes are named here, not looked up in a package.
"""

from __future__ import annotations

from pathlib import Path

from optiforge.lightning_modules.mtlkd.policy_weights import read_weights
from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
from optiforge.lightning_modules.mtlkd.teacher_module import POMOTeacher
from optiforge.lightning_modules.mtlkd.vrp_evaluation import VRPEvaluationModule

MODELS: dict[str, type[VRPEvaluationModule]] = {
    "POMOTeacher": POMOTeacher,
    "MTLKDStudent": MTLKDStudent,
}


def build_module(path: str | Path, **settings: object) -> VRPEvaluationModule:
    """The model a weights file describes, built with its architecture (plus `settings`, other
    constructor arguments such as `r3c_segment`) and loaded, in eval mode:
    `build_module("weights/mtlkd/student_n50.pt")`."""
    blob = read_weights(path)
    model = MODELS[blob["model"]]
    return model(weights=str(path), **blob["hyper_parameters"], **settings).eval()
