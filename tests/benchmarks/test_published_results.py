"""Every published result carries a provenance record and names no machine path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from optiforge.benchmarks.harness.registry import RESULTS

MACHINE_PATH = re.compile(r"(?<![\w.<>])/(?:tmp|home|Users|work|root|mnt|scratch)/")


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_result_json_has_provenance(path: Path) -> None:
    """A 40-hex commit, and a command unless the record is an annotation of an older run."""
    record = json.loads(path.read_text())["provenance"]
    assert re.fullmatch(r"[0-9a-f]{40}", record["git"]["commit"])
    assert record["command"] or record["annotated"] is True


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.*")), ids=lambda p: p.name)
def test_result_names_no_machine_path(path: Path) -> None:
    """No absolute path of the machine the run was made on, in JSON or markdown."""
    match = MACHINE_PATH.search(path.read_text())
    assert match is None, path.read_text()[match.start() - 40 : match.end() + 40]
