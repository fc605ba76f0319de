"""optiforge inside someone else's project: a non-editable install used from another folder,
beside the user's own `callbacks.py`, `optimizers.py` and `datamodules.py`."""

from __future__ import annotations

from pathlib import Path

from tests.installed_copy import InstalledCopy

USER_CALLBACKS = """
import lightning as L

class CountSteps(L.Callback):
    steps = 0

    def on_train_batch_end(self, *args):
        CountSteps.steps += 1
"""
USER_SCRIPT = """
import importlib
import sys

import lightning as L
import torch

from optiforge.callbacks import LatestCheckpoint
from optiforge.optimizers import BayesCurvature

# The user's own modules beside this script, named as optiforge's folders are: they must win.
datamodules = importlib.import_module("datamodules")
optimizers = importlib.import_module("optimizers")
CountSteps = importlib.import_module("callbacks").CountSteps


class Regression(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x).squeeze(-1), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return BayesCurvature(self.parameters(), lr=0.05)


torch.manual_seed(0)
x = torch.randn(256, 4)
y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0])
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32)
module = Regression()
before = torch.nn.functional.mse_loss(module.net(x).squeeze(-1), y).item()
trainer = L.Trainer(
    max_epochs=5, logger=False, enable_progress_bar=False, enable_model_summary=False,
    callbacks=[CountSteps(), LatestCheckpoint(dirpath="ckpt", save_last=True)],
)
trainer.fit(module, loader)
after = torch.nn.functional.mse_loss(module.net(x).squeeze(-1), y).item()
print(datamodules.MINE, optimizers.MINE, CountSteps.steps, before, after)
print(sys.modules["optiforge"].__file__)
"""


def test_user_project_with_its_own_callbacks_optimizers_datamodules(
    installed_copy: InstalledCopy, tmp_path: Path
) -> None:
    """A script beside its own `callbacks.py`, `optimizers.py` and `datamodules.py` imports
    optiforge's optimizer and callback, trains (loss falls > 4x in 40 steps) and still gets its
    own modules; optiforge comes from the install, not from a source tree."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "callbacks.py").write_text(USER_CALLBACKS, encoding="utf-8")
    (project / "optimizers.py").write_text("MINE = 'user optimizers'\n", encoding="utf-8")
    (project / "datamodules.py").write_text("MINE = 'user datamodules'\n", encoding="utf-8")
    (project / "train_mine.py").write_text(USER_SCRIPT, encoding="utf-8")
    done = installed_copy.run(str(project / "train_mine.py"))
    assert done.returncode == 0, done.stderr[-3000:]
    result, location = done.stdout.strip().splitlines()[-2:]
    words = result.split()
    assert words[:4] == ["user", "datamodules", "user", "optimizers"]
    assert int(words[4]) == 5 * 8
    before, after = float(words[5]), float(words[6])
    assert after < before / 4
    assert location.startswith(str(installed_copy.site))
    assert (installed_copy.elsewhere / "ckpt" / "last.ckpt").is_file()


def test_console_script_runs_packaged_configs_from_any_folder(
    installed_copy: InstalledCopy,
) -> None:
    """`optiforge` (the installed console script) run from an empty folder stacks packaged
    configs named without any path (`testbeds/digits_cnn.yaml` + `optimizers/adamw.yaml`, the
    default experiment's two halves) and trains and tests them. (.ci/run also prints the
    stacked FSNet config with this install; tests/test_cli_args.py checks the name lookup.)"""
    script = str(installed_copy.site / "bin" / "optiforge")
    configs = ["--config", "testbeds/digits_cnn.yaml", "--config", "optimizers/adamw.yaml"]
    caps = ["--trainer.max_steps", "2", "--trainer.limit_val_batches", "1"]
    caps += ["--trainer.limit_test_batches", "1", "--trainer.logger", "false"]
    fit = installed_copy.run(
        script, "fit", *configs, *caps, "--trainer.enable_progress_bar", "false"
    )
    assert fit.returncode == 0, fit.stderr[-2000:]
    assert "test/acc = " in fit.stdout + fit.stderr


def test_installed_copy_finds_the_shipped_data_and_leaves_the_source_clean(
    installed_copy: InstalledCopy,
) -> None:
    """The shipped data is package data of the install (COMPAS read from it), and `pip install`
    wrote no build/ or *.egg-info folder into the tree it installed from."""
    code = (
        "from optiforge.problems.data_paths import data_path; "
        "p = data_path('compas/compas.csv'); print(p, sum(1 for _ in open(p)))"
    )
    done = installed_copy.run("-c", code)
    assert done.returncode == 0, done.stderr[-2000:]
    path, lines = done.stdout.split()
    assert path.startswith(str(installed_copy.site))
    source = Path(__file__).parents[1] / "data" / "compas" / "compas.csv"
    source_lines = len(source.read_text(encoding="utf-8").splitlines())
    assert int(lines) == source_lines > 1000
    leftovers = [p.name for p in installed_copy.source.iterdir() if p.name.endswith("egg-info")]
    assert not (installed_copy.source / "build").exists() and leftovers == []
