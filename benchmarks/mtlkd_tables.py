"""Markdown tables of the MTL-KD evaluation parts (`benchmarks/mtlkd_evaluation.py`)."""

from __future__ import annotations

from optiforge.benchmarks.harness.record import scrub_path


def settings(args: object) -> str:
    """The run's arguments, one `name=value` each, for a table's header (no machine path)."""
    return scrub_path(", ".join(f"{k}={v}" for k, v in vars(args).items()))


def markdown(part: str, result: dict, args: object) -> tuple[str, list, list]:
    """The part's Markdown table, and its columns and rows for W&B."""
    if part in ("suite", "generalization"):
        methods = list(dict.fromkeys(m for row in result["rows"].values() for m in row))
        columns = ["set", *[f"{m} gap %" for m in methods], "feasible", "student ms", "MTPOMO ms"]
        table = []
        for key, by_method in result["rows"].items():
            table.append(
                [
                    key,
                    *[round(by_method[m]["gap"], 2) if m in by_method else "" for m in methods],
                    min(row["feasible"] for row in by_method.values()),
                    round(by_method["student greedy"]["ms_per_instance"], 1),
                    round(by_method["MTPOMO greedy"]["ms_per_instance"], 1),
                ]
            )
        if part == "generalization":
            columns.append("student peak RSS + MiB")
            for row, by_method in zip(table, result["rows"].values(), strict=True):
                row.append(round(by_method["student greedy"]["peak_rss_increase_mib"], 1))
        lines = [f"MTL-KD {part}: {settings(args)}", ""]
        if part == "suite":
            for group, means in result["means"].items():
                lines.append(f"- mean gap over the {group} variants: {means}")
            lines.append("")
    elif part == "r3c":
        budgets = [0, *result["budgets"]]
        columns = ["variant", *[f"gap % @{b}" for b in budgets], "feasible", "ms @max"]
        table = [
            [
                name,
                *[round(row[f"gap@{b}"], 2) for b in budgets],
                min(row[f"feasible@{b}"] for b in budgets),
                round(row[f"ms@{budgets[-1]}"], 1),
            ]
            for name, row in result["rows"].items()
        ]
        lines = [f"MTL-KD R3C budget curve: {settings(args)}", ""]
    else:
        keys = [k for k in next(iter(result["bands"].values())) if k != "instances"]
        columns = [
            "group",
            "instances",
            *[k if k.endswith((" feasible", " s")) else f"{k} gap %" for k in keys],
        ]
        table = [
            [group, values["instances"], *[round(values[k], 2) for k in keys]]
            for group, values in result["bands"].items()
        ]
        lines = [f"MTL-KD {part} (gap to BKS): {settings(args)}", ""]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in table]
    return "\n".join(lines) + "\n", columns, table
