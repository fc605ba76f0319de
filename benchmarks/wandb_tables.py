"""Log a benchmark's result tables as one W&B run (offline without credentials)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def log_tables(
    name: str,
    config: Mapping[str, object],
    tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[object]]]],
) -> None:
    """One W&B run `name` (job type "benchmark") with `config` and a `wandb.Table` per entry of
    `tables` (table name -> (columns, rows))."""
    import wandb

    from optiforge.callbacks.wandb_logger import resolve_wandb_mode

    run = wandb.init(
        project="optiforge",
        job_type="benchmark",
        name=name,
        mode=resolve_wandb_mode("auto"),
        config=dict(config),
    )
    run.log(
        {
            table: wandb.Table(columns=list(columns), data=[list(row) for row in rows])
            for table, (columns, rows) in tables.items()
        }
    )
    run.finish()
