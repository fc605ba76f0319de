"""How the default W&B logger picks its mode, takes a run id, and how checkpoints record it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from optiforge.callbacks import resolve_wandb_mode
from optiforge.callbacks.wandb_logger import OptiforgeWandbLogger
from optiforge.callbacks.wandb_run_id import WandbRunId, checkpoint_run_id


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))


def test_auto_without_credentials_is_offline(no_credentials: None) -> None:
    """Mode 'auto' with no API key and no netrc login resolves to offline."""
    assert resolve_wandb_mode("auto") == "offline"


def test_auto_with_api_key_is_online(no_credentials: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mode 'auto' with WANDB_API_KEY set resolves to online."""
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    assert resolve_wandb_mode("auto") == "online"


def test_auto_with_netrc_login_is_online(no_credentials: None, tmp_path: Path) -> None:
    """Mode 'auto' with an api.wandb.ai login in the netrc file resolves to online."""
    (tmp_path / ".netrc").write_text("machine api.wandb.ai\n  login user\n  password " + "k" * 40)
    (tmp_path / ".netrc").chmod(0o600)
    assert resolve_wandb_mode("auto") == "online"


def test_env_mode_wins_over_credentials(
    no_credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WANDB_MODE=dryrun wins over an API key: mode 'auto' resolves to offline."""
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    monkeypatch.setenv("WANDB_MODE", "dryrun")
    assert resolve_wandb_mode("auto") == "offline"


def test_explicit_mode_is_kept_and_bad_mode_named(no_credentials: None) -> None:
    """An explicit mode is returned unchanged; an unknown mode raises naming 'mode'."""
    assert resolve_wandb_mode("disabled") == "disabled"
    with pytest.raises(ValueError, match="mode"):
        resolve_wandb_mode("sometimes")  # type: ignore[arg-type]


def test_logger_accepts_a_run_id_and_sends_no_anonymous_setting(tmp_path: Path) -> None:
    """`id` reaches wandb.init (resume="allow"), and the deprecated `anonymous` key does not."""
    logger = OptiforgeWandbLogger(save_dir=str(tmp_path), mode="disabled", id="run42")
    assert logger._wandb_init["id"] == "run42"
    assert logger._wandb_init["resume"] == "allow"
    assert "anonymous" not in logger._wandb_init


def test_checkpoints_record_the_wandb_run_id(tmp_path: Path) -> None:
    """WandbRunId writes the started run's id into a checkpoint; checkpoint_run_id reads it,
    and a checkpoint without one (no W&B run) gives None."""
    logger = OptiforgeWandbLogger(save_dir=str(tmp_path), mode="disabled", id="run42")
    checkpoint: dict = {}
    WandbRunId().on_save_checkpoint(SimpleNamespace(loggers=[logger]), None, checkpoint)
    assert checkpoint_run_id(checkpoint) is None  # the run has not started: nothing to continue
    _ = logger.experiment
    WandbRunId().on_save_checkpoint(SimpleNamespace(loggers=[logger]), None, checkpoint)
    assert checkpoint_run_id(checkpoint) == logger.version
    assert checkpoint_run_id({"state_dict": {}}) is None
