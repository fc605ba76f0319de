"""How the default W&B logger picks its mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from callbacks import resolve_wandb_mode


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))


def test_auto_without_credentials_is_offline(no_credentials: None) -> None:
    assert resolve_wandb_mode("auto") == "offline"


def test_auto_with_api_key_is_online(no_credentials: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    assert resolve_wandb_mode("auto") == "online"


def test_auto_with_netrc_login_is_online(no_credentials: None, tmp_path: Path) -> None:
    (tmp_path / ".netrc").write_text("machine api.wandb.ai\n  login user\n  password " + "k" * 40)
    (tmp_path / ".netrc").chmod(0o600)
    assert resolve_wandb_mode("auto") == "online"


def test_env_mode_wins_over_credentials(
    no_credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    monkeypatch.setenv("WANDB_MODE", "dryrun")
    assert resolve_wandb_mode("auto") == "offline"


def test_explicit_mode_is_kept_and_bad_mode_named(no_credentials: None) -> None:
    assert resolve_wandb_mode("disabled") == "disabled"
    with pytest.raises(ValueError, match="mode"):
        resolve_wandb_mode("sometimes")  # type: ignore[arg-type]
