"""MTL-KD (NeurIPS 2025): POMO teachers, heavy-decoder student, distillation, R3C."""

from lightning_modules.mtlkd.rollout import Rollout
from lightning_modules.mtlkd.student_module import MTLKDStudent
from lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from lightning_modules.mtlkd.teacher_module import POMOTeacher, pomo_advantage
from lightning_modules.mtlkd.teacher_policy import POMOPolicy

__all__ = [
    "HeavyDecoderPolicy",
    "MTLKDStudent",
    "POMOPolicy",
    "POMOTeacher",
    "Rollout",
    "pomo_advantage",
]
