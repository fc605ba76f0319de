"""One JSON + markdown writer driven by column specs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from optiforge.benchmarks.harness.record import scrub_path, scrub_paths


@dataclass(frozen=True)
class Column:
    """A markdown column: `header`, the row's value (`key` or a function of the row) and a
    format spec (`".3f"`, `"+.1f"`, ...). A missing or None value prints as `missing`; `rule`
    is the column's alignment row (`"---:"` right-aligns)."""

    header: str
    key: str | Callable[[Mapping], object]
    fmt: str = ""
    missing: str = "-"
    rule: str = "---"

    def cell(self, row: Mapping) -> str:
        value = self.key(row) if callable(self.key) else row.get(self.key)
        if value is None:
            return self.missing
        if isinstance(value, bool):
            return "yes" if value else "no"
        return format(value, self.fmt)


def mean_std(values: Sequence[float], fmt: str = ".4f") -> str:
    """`mean +- population std` of `values`, each in format `fmt`."""
    import statistics

    return f"{statistics.fmean(values):{fmt}} +- {statistics.pstdev(values):{fmt}}"


def markdown_table(rows: Sequence[Mapping], columns: Sequence[Column]) -> str:
    """A markdown table: one header line, one rule, one line per row."""
    lines = [
        "| " + " | ".join(column.header for column in columns) + " |",
        "|" + "".join(f"{column.rule}|" for column in columns),
    ]
    lines += ["| " + " | ".join(column.cell(row) for column in columns) + " |" for row in rows]
    return "\n".join(lines)


def footer(provenance: Mapping) -> str:
    """One markdown line naming the command, commit, threads and device of a result."""
    dirty = " (uncommitted changes)" if provenance["git"]["dirty"] else ""
    seed = provenance["seed"]
    seed = ", ".join(map(str, seed)) if isinstance(seed, list | tuple) else seed
    return (
        f"_`{provenance['command']}` at commit {provenance['git']['commit'][:10]}{dirty}; "
        f"torch {provenance['versions'].get('torch')}, {provenance['torch_threads']} thread(s), "
        f"{provenance['device']}, seed {seed}, {provenance['wall_seconds']:.1f} s._"
    )


def write_result(
    folder: Path,
    stem: str,
    payload: Mapping,
    markdown: str | None,
    provenance: Mapping,
    indent: int | None = 1,
) -> list[Path]:
    """Write `<stem>.json` (provenance first, machine paths scrubbed) and `<stem>.md` (the
    markdown plus a provenance line) into `folder` (`indent` None: one line); returns the paths
    written."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"{stem}.json"
    record = scrub_paths(
        json.loads(json.dumps({"provenance": dict(provenance), **payload}, default=str))
    )
    json_path.write_text(json.dumps(record, indent=indent) + "\n")
    if markdown is None:
        return [json_path]
    md_path = folder / f"{stem}.md"
    md_path.write_text(markdown.rstrip("\n") + "\n\n" + scrub_path(footer(provenance)) + "\n")
    return [json_path, md_path]
