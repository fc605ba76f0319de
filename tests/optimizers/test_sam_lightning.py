"""The SAM family under Lightning's automatic optimization, chosen purely from the CLI."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from optiforge.callbacks import OptimizerAdapter
from optiforge.optimizers import SAM, LoopHooks, NSGDHess
from tests.cli_helpers import DEFAULT_CONFIG, config_args, run_cli
from tests.trainers import fake_trainer

# The m-sharpness study with SAM: testbed, its budget overlay, the optimizer.
SAM_CONFIGS = config_args(
    "testbeds/digits_mlp_noisy", "testbeds/m_sharpness_digits", "optimizers/sam"
)

BASE = [
    "--optimizer.base_optimizer",
    "torch.optim.AdamW",
    "--optimizer.base_optimizer.lr",
    "0.003",
]
VARIANTS = {
    "SAM": ["--optimizer", "optiforge.optimizers.SAM", "--optimizer.rho", "0.05"],
    "ASAM": [
        "--optimizer",
        "optiforge.optimizers.SAM",
        "--optimizer.rho",
        "0.5",
        "--optimizer.adaptive",
        "true",
    ],
    "MSAM": [
        "--optimizer",
        "optiforge.optimizers.MSAM",
        "--optimizer.micro_batch_size",
        "16",
        "--data.drop_last",
        "true",
    ],
    "NSAM": ["--optimizer", "optiforge.optimizers.NSAM", "--optimizer.descent_batch_size", "32"],
    "RWSAM": ["--optimizer", "optiforge.optimizers.RWSAM", "--optimizer.temperature", "0.1"],
}
SHORT_RUN = [
    "--config",
    str(DEFAULT_CONFIG),
    "--trainer.max_epochs",
    "3",
    "--trainer.logger",
    "false",
    "--test_after_fit",
    "false",
]


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_variant_trains_the_reference_classifier(variant: str, in_tmp_dir: Path) -> None:
    """3 epochs on digits: each variant learns (val acc far above the 10 % of chance)."""
    cli = run_cli("fit", *SHORT_RUN, *VARIANTS[variant], *BASE)
    assert type(cli.trainer.optimizers[0]).__name__ == VARIANTS[variant][1].split(".")[-1]
    assert float(cli.trainer.callback_metrics["val/acc"]) > 0.5
    assert cli.trainer.global_step == 3 * (19 if variant == "MSAM" else 20)


def test_gradient_accumulation_fails_at_setup(in_tmp_dir: Path) -> None:
    """Gradient accumulation would train SAM wrongly: a clear error naming the flag instead."""
    with pytest.raises(ValueError, match="trainer.accumulate_grad_batches=2"):
        run_cli(
            "fit", *SHORT_RUN, *VARIANTS["SAM"], *BASE, "--trainer.accumulate_grad_batches", "2"
        )


@pytest.mark.parametrize("optimizer_class", [SAM, NSGDHess])
def test_fp16_with_a_gradient_scaler_fails_at_setup(optimizer_class: type) -> None:
    """GPU fp16 AMP (a GradScaler present) drops the closure: refused, naming the flag, for
    every optimizer that evaluates its closure several times."""
    optimizer = optimizer_class([torch.zeros(1, requires_grad=True)])
    trainer = fake_trainer([optimizer], precision="16-mixed")
    trainer.precision_plugin.scaler = object()
    with pytest.raises(ValueError, match="trainer.precision='16-mixed'"):
        OptimizerAdapter().on_fit_start(trainer, None)  # type: ignore[arg-type]


def test_adapter_hands_local_ascent_the_ddp_no_sync() -> None:
    """Under DDP (a model with `no_sync`, world size 2), the adapter binds the DDP model's
    `no_sync`; only a local-ascent optimizer enters it, once per step (its ascent pass)."""
    entered: list[str] = []

    @contextlib.contextmanager
    def no_sync() -> Iterator[None]:
        entered.append("no_sync")
        yield

    local = SAM([torch.ones(1, requires_grad=True)], local_ascent=True)
    shared = SAM([torch.ones(1, requires_grad=True)])
    trainer = fake_trainer([local, shared], world_size=2, model=SimpleNamespace(no_sync=no_sync))
    OptimizerAdapter().on_fit_start(trainer, torch.nn.Module())  # type: ignore[arg-type]
    assert local.loop_hooks.no_sync is no_sync and shared.loop_hooks.no_sync is no_sync
    for optimizer in (shared, local):
        weight = optimizer.param_groups[0]["params"][0]

        def closure(weight: torch.Tensor = weight, optimizer: SAM = optimizer) -> torch.Tensor:
            optimizer.zero_grad()
            loss = (weight**2).sum()
            loss.backward()
            return loss

        optimizer.step(closure)
        assert entered == ([] if optimizer is shared else ["no_sync"])
    local.bind_loop(None)
    assert local.loop_hooks == LoopHooks()


@pytest.mark.parametrize("variant", ["SAM", "MSAM", "NSAM", "RWSAM"])
def test_cli_base_optimizer_arguments_reach_the_base_optimizer(
    variant: str, in_tmp_dir: Path
) -> None:
    """`--optimizer optimizers.<variant> --optimizer.base_optimizer torch.optim.SGD
    --optimizer.base_optimizer.lr 0.02 ... momentum 0.7` builds SGD with exactly those values."""
    cli = run_cli(
        "fit",
        *SHORT_RUN,
        *VARIANTS[variant][:2],
        "--optimizer.base_optimizer",
        "torch.optim.SGD",
        "--optimizer.base_optimizer.lr",
        "0.02",
        "--optimizer.base_optimizer.momentum",
        "0.7",
        "--trainer.fast_dev_run",
        "1",
    )
    optimizer = cli.trainer.optimizers[0]
    assert type(optimizer).__name__ == variant
    assert isinstance(optimizer.base_optimizer, torch.optim.SGD)
    assert (optimizer.param_groups[0]["lr"], optimizer.param_groups[0]["momentum"]) == (0.02, 0.7)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--optimizer.base_optimizer.lr=-0.1"], "base_optimizer.lr must be >= 0, got -0.1"),
        (["--optimizer.base_optimizer.momentun", "0.9"], "'momentun' is not accepted"),
        (["--optimizer.rhoo", "0.1"], "'rhoo' is not accepted"),
        (["--optimizer.lr", "0.1"], "'lr' is not accepted"),
    ],
    ids=["negative-base-lr", "typo-in-base", "typo", "base-keyword-at-top-level"],
)
def test_cli_refuses_bad_sam_arguments_in_one_line(
    arguments: list[str], message: str, in_tmp_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A negative base lr or a misspelt key (SAM's keyword sink is not part of the CLI schema)
    ends in one line naming it, exit status 2, nothing written."""
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", *SAM_CONFIGS, *arguments)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert len(err.splitlines()) == 1
    assert list(in_tmp_dir.iterdir()) == []


def test_print_config_resolves_the_base_optimizer(capsys: pytest.CaptureFixture[str]) -> None:
    """`--print_config` shows the typed base optimizer with its arguments, and no keyword sink."""
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", *SAM_CONFIGS, "--print_config")
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out
    assert "class_path: torch.optim.SGD" in printed
    assert "lr: 0.05" in printed and "momentum: 0.9" in printed
    assert "base_kwargs" not in printed
