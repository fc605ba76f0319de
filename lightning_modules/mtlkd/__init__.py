"""MTL-KD (NeurIPS 2025): POMO teachers, heavy-decoder student, distillation, R3C."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.mtlkd.rollout import Rollout
    from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
    from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
    from optiforge.lightning_modules.mtlkd.teacher_module import POMOTeacher, pomo_advantage
    from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy

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
        "optiforge.lightning_modules.mtlkd.rollout": ("Rollout",),
        "optiforge.lightning_modules.mtlkd.student_module": ("MTLKDStudent",),
        "optiforge.lightning_modules.mtlkd.student_policy": ("HeavyDecoderPolicy",),
        "optiforge.lightning_modules.mtlkd.teacher_module": ("POMOTeacher", "pomo_advantage"),
        "optiforge.lightning_modules.mtlkd.teacher_policy": ("POMOPolicy",),
    },
)
