"""MTL-KD (NeurIPS 2025): POMO teachers, heavy-decoder student, distillation, R3C."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "lightning_modules.mtlkd.rollout": ("Rollout",),
        "lightning_modules.mtlkd.student_module": ("MTLKDStudent",),
        "lightning_modules.mtlkd.student_policy": ("HeavyDecoderPolicy",),
        "lightning_modules.mtlkd.teacher_module": ("POMOTeacher", "pomo_advantage"),
        "lightning_modules.mtlkd.teacher_policy": ("POMOPolicy",),
    },
)
