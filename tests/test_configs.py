"""Every experiment under configs/ parses, keeps its frozen values, and survives a fast_dev_run.

An experiment is a list of `--config` files stacked by axis (a testbed and an optimizer; a base,
a phase and an edge function; ...). Each YAML file's header comment shows the commands that run
it; the experiments are the `--config` lists of those commands, and every file is in one.
"""

from __future__ import annotations

import importlib
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.cli_helpers import PROJECT_ROOT, run_cli
from tests.config_leaves import LIST_LENGTH, leaves

CONFIG_DIR = PROJECT_ROOT / "configs"
# Per experiment (its files joined by " + "), the values its single file resolved to before
# configs were composed (first a base plus overlays, then by axis), at every path that file, the
# base or the overlay set (resolved from the files of that time, also for the experiments frozen
# only when composed by axis); since then one schema change: the VRP data's reference_time_limit
# 0.05 (s) became reference_iterations 100 (its measured equivalent), and one path change:
# Hephaestus checkpoints moved from a fixed checkpoints/hephaestus/<name>/ (checkpoint.dirpath)
# into each run's own folder (dirpath null), so Morph's and Refine's weights are now the previous
# run's last.ckpt given on the command line (the YAML holds the pattern
# optiforge/<phase run id>/checkpoints/last.ckpt, which fails with one line if not replaced).
FROZEN = Path(__file__).with_name("frozen_config_values.json")
ABSENT = "<absent>"
HEADER_COMMAND = re.compile(r"python train\.py (?:fit|validate|test)\b[^\n]*")


def header(path: Path) -> str:
    """The leading comment block of a YAML file, without the `#` marks, continuations joined."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:])
    return re.sub(r"\\\n\s*", " ", "\n".join(lines))


def header_experiments(path: Path) -> list[list[Path]]:
    """The `--config` lists of the commands in `path`'s header (template paths skipped)."""
    found = []
    for command in HEADER_COMMAND.findall(header(path)):
        args = shlex.split(command)
        files = [value for flag, value in zip(args, args[1:], strict=False) if flag == "--config"]
        if files and not any("<" in value for value in files):
            found.append([CONFIG_DIR / value.removeprefix("configs/") for value in files])
    return found


def experiment_id(files: list[Path]) -> str:
    """The experiment's name: its files relative to configs/, joined by " + "."""
    return " + ".join(str(path.relative_to(CONFIG_DIR)) for path in files)


EXPERIMENTS = sorted(
    {
        tuple(files)
        for path in sorted(CONFIG_DIR.rglob("*.yaml"))
        for files in header_experiments(path)
    }
)
EXPERIMENTS = [list(files) for files in EXPERIMENTS]

# Per config folder: arguments that keep a fast_dev_run fast (FSNet's and MTL-KD's evaluation
# splits would otherwise solve hundreds of reference instances before the first step; the
# Llama LM's evaluation batch is 128 windows of 512 characters).
FAST_DEV_OVERRIDES = {
    "fsnet": [
        *("--data.init_args.train_size", "16", "--data.init_args.val_size", "2"),
        *("--data.init_args.test_size", "2", "--data.init_args.batch_size", "8"),
        *("--data.init_args.cache_dir", "null"),
    ],
    "hephaestus": [
        *("--data.init_args.train_size", "4", "--data.init_args.val_size", "2"),
        *("--data.init_args.test_size", "2", "--data.init_args.batch_size", "2"),
    ],
    "kv": ["--data.init_args.batch_size", "2", "--data.init_args.eval_batch_size", "2"],
    "mtlkd": [
        *("--data.init_args.batch_size", "12", "--data.init_args.val_instances", "2"),
        *("--data.init_args.test_instances", "2", "--data.init_args.reference_iterations", "10"),
        *("--data.init_args.num_customers", "20"),
    ],
}
# Configs that load the previous phase's weights: a clean clone has none, so the smoke run
# starts from untrained weights (the chain itself is tested in
# tests/lightning_modules/hephaestus/test_cli_chain.py).
WEIGHT_OVERRIDES = {
    "morph": ["--model.init_args.forge_weights", "null"],
    "refine": ["--model.init_args.morph_weights", "null"],
}
# The multi-task models validate on two of their 16 variants (one seen, one unseen); the GPU
# recipe runs on CPU without its n = 100 teachers (trained by the model card's recipe).
TWO_VARIANTS = ("--data.init_args.eval_variants", "[CVRP, OVRPBLTW]")
FILE_OVERRIDES = {
    "kv/needle_copying.yaml": ["--data.init_args.retrieval_tasks", "2"],
    "mtlkd/student.yaml": [*TWO_VARIANTS],
    "mtlkd/mtpomo.yaml": [*TWO_VARIANTS],
    "mtlkd/student_gpu_n100.yaml": [
        *TWO_VARIANTS,
        *("--trainer.accelerator", "cpu", "--model.init_args.teachers", "null"),
        *("--data.init_args.reference_workers", "1"),
    ],
}


def smoke_overrides(files: list[Path]) -> list[str]:
    """The arguments a fast_dev_run of `files` adds: its folders' sizes (once per folder), the
    weights a phase would load, and per-file fixes."""
    folders = dict.fromkeys(path.parent.name for path in files)
    overrides = [arg for folder in folders for arg in FAST_DEV_OVERRIDES.get(folder, [])]
    for path in files:
        overrides += WEIGHT_OVERRIDES.get(path.stem.split("_")[0], [])
        overrides += FILE_OVERRIDES.get(str(path.relative_to(CONFIG_DIR)), [])
    return overrides


def value_at(tree: Any, path: str) -> Any:
    """The value at a dotted path of `leaves`, or ABSENT where the tree has none."""
    node = tree
    for key in path.split("."):
        if isinstance(node, list) and key == LIST_LENGTH:
            return len(node)
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            return ABSENT
    return node


def imported(dotted: str) -> object:
    """The object a class_path names."""
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def resolve(files: list[Path], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The full config LightningCLI resolves from `files` (`fit --print_config`)."""
    args = [arg for path in files for arg in ("--config", str(path))]
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", *args, "--print_config")
    assert exit_info.value.code in (None, 0)
    return yaml.safe_load(capsys.readouterr().out)


def test_configs_are_discovered() -> None:
    """The discovery finds the default config, a testbed with an optimizer, and a base with its
    phase and edge function, from the files' headers."""
    ids = {experiment_id(files) for files in EXPERIMENTS}
    assert "default.yaml" in ids
    assert "testbeds/digits_cnn.yaml + optimizers/sam.yaml" in ids
    assert "hephaestus/base.yaml + hephaestus/forge.yaml + hephaestus/linear.yaml" in ids
    assert "fsnet/base.yaml + fsnet/convex_qp.yaml" in ids


def test_header_experiments_read_wrapped_commands(tmp_path: Path) -> None:
    """A header's commands, wrapped or not, give their `--config` lists; a template path
    (`<experiment>`) is no experiment, and the YAML below the header is not read."""
    path = tmp_path / "x.yaml"
    path.write_text(
        "# What x is.\n#   python train.py fit --config configs/a.yaml \\\n"
        "#     --config configs/b.yaml --trainer.max_epochs 1\n"
        "#   python train.py fit --config configs/<experiment>.yaml\n"
        "trainer: {}  # python train.py fit --config configs/c.yaml\n"
    )
    assert header_experiments(path) == [[CONFIG_DIR / "a.yaml", CONFIG_DIR / "b.yaml"]]


def test_every_config_is_in_an_experiment_its_header_names() -> None:
    """Each YAML file's header runs it: one of its commands stacks the file itself, and every
    file of every experiment exists."""
    for path in sorted(CONFIG_DIR.rglob("*.yaml")):
        assert any(path in files for files in header_experiments(path)), path
    assert all(path.is_file() for files in EXPERIMENTS for path in files)


def test_every_frozen_experiment_is_run() -> None:
    """The frozen values are keyed by experiments the suite runs (none is silently skipped)."""
    ids = {experiment_id(files) for files in EXPERIMENTS}
    assert set(json.loads(FROZEN.read_text())) <= ids


def test_leaves_and_value_at_agree_on_a_small_tree() -> None:
    """Leaves of a tree with a list of mappings, read back by path; a missing path is absent."""
    tree = {"a": {"b": 1, "c": [1, 2]}, "d": [{"e": None}]}
    assert leaves(tree) == {"a.b": 1, "a.c": [1, 2], "d.#": 1, "d.0.e": None}
    assert all(value_at(tree, path) == value for path, value in leaves(tree).items())
    assert value_at(tree, "a.x") == ABSENT and value_at(tree, "d.3") == ABSENT


YAML_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
YAML_TREES = st.recursive(
    YAML_SCALARS | st.lists(YAML_SCALARS, max_size=3),
    lambda children: (
        st.dictionaries(st.from_regex(r"[a-z_]{1,6}", fullmatch=True), children, max_size=3)
        | st.lists(st.dictionaries(st.just("class_path"), children, min_size=1), max_size=3)
    ),
    max_leaves=12,
)


@given(tree=st.dictionaries(st.from_regex(r"[a-z_]{1,6}", fullmatch=True), YAML_TREES, min_size=1))
def test_every_leaf_reads_back_at_its_path(tree: dict[str, Any]) -> None:
    """For any YAML-like tree, value_at returns each leaf found by leaves at its path."""
    for path, value in leaves(tree, "").items():
        assert value_at(tree, path) == value


@pytest.mark.parametrize("files", EXPERIMENTS, ids=experiment_id)
def test_config_resolves_to_its_frozen_values(
    files: list[Path], capsys: pytest.CaptureFixture[str], in_tmp_dir: Path
) -> None:
    """`--print_config` of the experiment's files gives the values its single file had before
    configs were composed, at every path that file set (class paths compared as the objects
    they name); new experiments only need model and data classes."""
    resolved = resolve(files, capsys)
    assert resolved["model"]["class_path"] and resolved["data"]["class_path"]
    frozen = json.loads(FROZEN.read_text()).get(experiment_id(files))
    if frozen is None:
        return
    mismatches = {}
    for path, expected in frozen.items():
        actual = value_at(resolved, path)
        if path.endswith("class_path") and ABSENT not in (actual, expected):
            actual, expected = imported(actual), imported(expected)
        if actual != expected:
            mismatches[path] = (actual, expected)
    assert not mismatches


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.rglob("*.yaml")), ids=str)
def test_class_paths_use_the_shortest_public_path(path: Path) -> None:
    """Every class_path is the shortest package path that re-exports the class (e.g.
    optiforge.lightning_modules.FSNet, not optiforge.lightning_modules.fsnet.FSNet)."""
    for key, dotted in leaves(yaml.safe_load(path.read_text())).items():
        if not key.endswith("class_path"):
            continue
        target = imported(dotted)
        module, _, name = dotted.rpartition(".")
        parts = module.split(".")
        for length in range(1, len(parts)):
            shorter = ".".join(parts[:length])
            try:
                found = getattr(importlib.import_module(shorter), name, None)
            except ImportError:
                found = None
            assert found is not target, f"{path.name}: spell {dotted} as {shorter}.{name}"


@pytest.mark.parametrize("files", EXPERIMENTS, ids=experiment_id)
def test_config_fast_dev_run(files: list[Path], in_tmp_dir: Path) -> None:
    """One training and one validation batch run and produce a finite training loss."""
    config_args = [arg for path in files for arg in ("--config", str(path))]
    cli = run_cli("fit", *config_args, "--trainer.fast_dev_run", "true", *smoke_overrides(files))
    assert cli.trainer.global_step == 1
    losses = [v for k, v in cli.trainer.callback_metrics.items() if k.startswith("train/loss")]
    assert losses and all(bool(v.isfinite()) for v in losses)
