"""Leaves of YAML configs and how many of them repeat a setting made in another config file.

A leaf is one (dotted key path, value) of a file. It is repeated when ANOTHER file sets the same
key path to the same value; the repeated share is repeated leaves / all leaves. Composing configs
by axis (testbed, optimizer, phase, problem) keeps each value in one file, so the share is low.

    python -m tests.config_leaves     # the share of configs/, overall and per folder
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
LIST_LENGTH = "#"


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


def repetition(trees: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per file name of `trees` (name -> parsed YAML): (its repeated leaves, all its leaves)."""
    file_leaves = {name: leaves(tree) if tree else {} for name, tree in trees.items()}
    setters: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name, found in file_leaves.items():
        for path, value in found.items():
            setters[(path, repr(value))].add(name)
    return {
        name: (sum(len(setters[(p, repr(v))]) > 1 for p, v in found.items()), len(found))
        for name, found in file_leaves.items()
    }


def share(counts: list[tuple[int, int]]) -> float:
    """Repeated leaves / all leaves over `counts` (pairs from `repetition`); 0 when empty."""
    total = sum(count for _, count in counts)
    return sum(repeated for repeated, _ in counts) / total if total else 0.0


def config_trees(config_dir: Path = CONFIG_DIR) -> dict[str, Any]:
    """Every YAML file under `config_dir` (relative name -> parsed tree)."""
    return {
        str(path.relative_to(config_dir)): yaml.safe_load(path.read_text())
        for path in sorted(config_dir.rglob("*.yaml"))
    }


def report(config_dir: Path = CONFIG_DIR) -> str:
    """One line per folder (repeated / all leaves, share), then the overall line."""
    counts = repetition(config_trees(config_dir))
    folders: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for name, count in counts.items():
        folders[str(Path(name).parent)].append(count)
    lines = [
        f"{folder:16} {sum(r for r, _ in c):4} / {sum(n for _, n in c):4}  {share(c):.2f}"
        for folder, c in sorted(folders.items())
    ]
    every = list(counts.values())
    total = sum(n for _, n in every)
    lines.append(f"{'all':16} {sum(r for r, _ in every):4} / {total:4}  {share(every):.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
