"""MTL-KD (NeurIPS 2025): single-task POMO teachers (policy, inference, LightningModule)."""

from lightning_modules.mtlkd.rollout import Rollout
from lightning_modules.mtlkd.teacher_module import POMOTeacher, pomo_advantage
from lightning_modules.mtlkd.teacher_policy import POMOPolicy

__all__ = ["POMOPolicy", "POMOTeacher", "Rollout", "pomo_advantage"]
