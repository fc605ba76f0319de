"""The reproduction report: the claims registry as one markdown page (docs site: reproduction.md).

Every number, verdict, command and commit on the page is read from the published results and
derived by the registry's rules when the site is built; nothing on it is written by hand.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from optiforge.benchmarks.reproduction.model import Claim, Verdict, load
from optiforge.benchmarks.reproduction.registry import CLAIMS

# Front matter: the page hides the side bars (material's `hide`) so the table gets the width.
INTRO = """---
hide:
  - navigation
  - toc
---

# Reproduction report

For each paper claim: what the paper states, what this project measures, the number read from
the published result (`benchmarks/results/<name>.json`), the verdict its rule derives, and the
command and commit recorded in the result's `provenance`. A result whose provenance is marked
`annotated` was published before runs recorded their commit: its commit is the one that
published the file, and its command, where shown as not recorded, is on the system's page.
The project's own testbeds have no paper result to judge their numbers against: their verdict
is "no published result".
"""


def page_markdown(claims: tuple[Claim, ...] = CLAIMS) -> str:
    """The whole page: a count of verdicts and one table row per claim."""
    verdicts = [claim.verdict() for claim in claims]
    counts = Counter(verdicts)
    summary = ", ".join(f"{verdict.value}: {counts[verdict]}" for verdict in Verdict)
    header = (
        "| system | paper | claim (as the paper states it) | our metric | measured "
        "| verdict (rule) | result | command | commit |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(row(claim, verdict) for claim, verdict in zip(claims, verdicts, strict=True))
    return f"{INTRO}\n{len(claims)} claims; {summary}.\n\n{header}{body}"


def row(claim: Claim, verdict: Verdict) -> str:
    """One claim as a table row."""
    values = claim.values()
    measured = "; ".join(
        f"{number.what}: {number.text(value)}"
        for number, value in zip(claim.numbers, values, strict=True)
    )
    rule = f"<br><small>{claim.rule.text(claim.numbers)}</small>" if claim.rule else ""
    files = claim.files()
    cells = [
        f"[{claim.system}]({claim.system}.md)",
        claim.paper,
        claim.claim,
        claim.metric,
        measured or "-",
        f"**{verdict.value}**{rule}",
        "<br>".join(f"[{name}](../benchmarks/results/{name}.md)" for name in files),
        "<br>".join(command(load(name)) for name in files),
        "<br>".join(commit(load(name)) for name in files),
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |\n"


def command(result: dict[str, Any]) -> str:
    """The command a result's provenance records, or says it was not recorded."""
    provenance = result.get("provenance", {})
    if provenance.get("command"):
        return f"`{provenance['command']}`"
    arguments = provenance.get("arguments")
    return f"not recorded (arguments: `{arguments}` in the result)" if arguments else "not recorded"


def commit(result: dict[str, Any]) -> str:
    """The commit a result's provenance records, and whether it is the run's or the file's."""
    provenance = result.get("provenance", {})
    git = provenance.get("git") or {}
    sha = git.get("commit")
    if not sha:
        return "not recorded"
    note = " (publishing commit)" if provenance.get("annotated") else ""
    dirty = " (uncommitted changes)" if git.get("dirty") else ""
    return f"`{sha[:10]}`{note}{dirty}"
