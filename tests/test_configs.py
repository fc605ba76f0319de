"""Every experiment under configs/ parses, keeps its frozen values, and survives a fast_dev_run.

An experiment is one YAML file, or, in a folder that holds a `base.yaml`, that base followed by
one other file of the folder (its overlay): `--config base.yaml --config <overlay>.yaml`.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.cli_helpers import PROJECT_ROOT, run_cli

CONFIG_DIR = PROJECT_ROOT / "configs"
BASE_NAME = "base.yaml"
# Per experiment, the values its single file resolved to before the base/overlay split, at
# every path that file, the base or the overlay sets; since then one schema change: the VRP
# data's reference_time_limit 0.05 (s) became reference_iterations 100 (its measured equivalent),
# and one path change: Hephaestus checkpoints moved from a fixed checkpoints/hephaestus/<name>/
# (checkpoint.dirpath) into each run's own folder (dirpath null), so Morph's and Refine's weights
# are now the previous run's last.ckpt given on the command line (the YAML holds the pattern
# optiforge/<phase run id>/checkpoints/last.ckpt, which fails with one line if not replaced).
FROZEN = Path(__file__).with_name("frozen_config_values.json")
ABSENT = "<absent>"
LIST_LENGTH = "#"


def experiment_files(path: Path) -> list[Path]:
    """The `--config` files of the experiment named by `path`: its folder's base first, if any."""
    base = path.with_name(BASE_NAME)
    return [base, path] if base.is_file() and path != base else [path]


def experiment_id(files: list[Path]) -> str:
    """The experiment's name: its own file (the overlay) relative to configs/."""
    return str(files[-1].relative_to(CONFIG_DIR))


EXPERIMENTS = [
    experiment_files(path) for path in sorted(CONFIG_DIR.rglob("*.yaml")) if path.name != BASE_NAME
]

# Per config folder: arguments that keep a fast_dev_run fast (FSNet's and MTL-KD's evaluation
# splits would otherwise solve hundreds of reference instances before the first step).
FAST_DEV_OVERRIDES = {
    "fsnet": [
        *("--data.init_args.train_size", "16", "--data.init_args.val_size", "4"),
        *("--data.init_args.test_size", "4", "--data.init_args.batch_size", "8"),
        *("--data.init_args.cache_dir", "null"),
    ],
    "hephaestus": [
        *("--data.init_args.train_size", "4", "--data.init_args.val_size", "2"),
        *("--data.init_args.test_size", "2", "--data.init_args.batch_size", "2"),
    ],
    "mtlkd": [
        *("--data.init_args.batch_size", "12", "--data.init_args.val_instances", "2"),
        *("--data.init_args.test_instances", "2"),
    ],
}
# Configs that load the previous phase's weights: a clean clone has none, so the smoke run
# starts from untrained weights (the chain itself is tested in
# tests/lightning_modules/hephaestus/test_cli_chain.py).
WEIGHT_OVERRIDES = {
    "morph": ["--model.init_args.forge_weights", "null"],
    "refine": ["--model.init_args.morph_weights", "null"],
}
# The GPU recipe: on CPU, from the shipped n = 50 teachers (its n = 100 ones are trained by the
# model card's recipe), at n = 20 with cheap references.
FILE_OVERRIDES = {
    "mtlkd/student_gpu_n100.yaml": [
        *("--trainer.accelerator", "cpu", "--model.init_args.teachers", "null"),
        *("--data.init_args.num_customers", "20", "--data.init_args.reference_iterations"),
        *("10", "--data.init_args.reference_workers", "1"),
    ],
}


def leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted path -> value of every leaf of a YAML tree; a list holding mappings is walked
    entry by entry (path.<index>) and records its length under path.#."""
    if isinstance(node, dict) and node:
        found: dict[str, Any] = {}
        for key, value in node.items():
            found.update(leaves(value, f"{prefix}.{key}" if prefix else str(key)))
        return found
    if isinstance(node, list) and any(isinstance(item, dict) for item in node):
        found = {f"{prefix}.{LIST_LENGTH}": len(node)}
        for index, item in enumerate(node):
            found.update(leaves(item, f"{prefix}.{index}"))
        return found
    return {prefix: node}


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
    """The discovery finds the default config and pairs each system's overlays with its base."""
    ids = {experiment_id(files): files for files in EXPERIMENTS}
    assert ids["default.yaml"] == [CONFIG_DIR / "default.yaml"]
    for system, overlay in (("fsnet", "convex_qp"), ("mtlkd", "student"), ("hephaestus", "")):
        overlay = overlay or "forge_er100_linear"
        assert ids[f"{system}/{overlay}.yaml"][0] == CONFIG_DIR / system / BASE_NAME


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
    """`--print_config` of the experiment's files gives the values its single file had before the
    base/overlay split at every path that file or the base or the overlay sets (class paths
    compared as the objects they name); new experiments only need model and data classes."""
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


@pytest.mark.parametrize("files", EXPERIMENTS, ids=experiment_id)
def test_class_paths_use_the_shortest_public_path(files: list[Path]) -> None:
    """Every class_path is the shortest package path that re-exports the class (e.g.
    optiforge.lightning_modules.FSNet, not optiforge.lightning_modules.fsnet.FSNet)."""
    for path in files:
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
    overlay = files[-1]
    overrides = [
        *FAST_DEV_OVERRIDES.get(overlay.parent.name, []),
        *WEIGHT_OVERRIDES.get(overlay.name.split("_")[0], []),
        *FILE_OVERRIDES.get(experiment_id(files), []),
    ]
    config_args = [arg for path in files for arg in ("--config", str(path))]
    cli = run_cli("fit", *config_args, "--trainer.fast_dev_run", "true", *overrides)
    assert cli.trainer.global_step == 1
    losses = [v for k, v in cli.trainer.callback_metrics.items() if k.startswith("train/loss")]
    assert losses and all(bool(v.isfinite()) for v in losses)
