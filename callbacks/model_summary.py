"""The model summary printed when fit starts, without the FLOPs Lightning cannot count.

Lightning counts FLOPs only for a module with an `example_input_array`; for every other module
its summary prints a FLOPs column of zeros and `Total FLOPs: 0`, which reads as a measurement.
This summary shows the FLOPs column and total only when they were counted (total above 0), and
is otherwise Lightning's rich summary: layers, types, parameter counts, modes, sizes.

    >>> from optiforge.callbacks import CompactModelSummary
    >>> summary = CompactModelSummary(max_depth=1)
"""

from __future__ import annotations

from typing import Any

from lightning.pytorch.callbacks import RichModelSummary
from lightning.pytorch.utilities.model_summary import get_human_readable_count
from lightning.pytorch.utilities.model_summary.model_summary import get_formatted_model_size
from typing_extensions import override

FLOPS_COLUMN = "FLOPs"


class CompactModelSummary(RichModelSummary):
    """`RichModelSummary` that leaves out FLOPs when none were counted."""

    @staticmethod
    @override
    def summarize(
        summary_data: list[tuple[str, list[str]]],
        total_parameters: int,
        trainable_parameters: int,
        model_size: float,
        total_training_modes: dict[str, int],
        total_flops: int,
        **summarize_kwargs: Any,
    ) -> None:
        from rich import get_console
        from rich.table import Table

        columns = [(name, values) for name, values in summary_data]
        if total_flops <= 0:
            columns = [(name, values) for name, values in columns if name != FLOPS_COLUMN]
        table = Table(header_style=summarize_kwargs.get("header_style", "bold magenta"))
        for index, (name, _) in enumerate(columns):
            numeric = name in ("Params", FLOPS_COLUMN, "Params per Device")
            table.add_column(name if index else " ", justify="right" if numeric else "left")
        for row in zip(*(values for _, values in columns), strict=True):
            table.add_row(*row)
        console = get_console()
        console.print(table)
        frozen = total_parameters - trainable_parameters
        lines = [
            f"Trainable params: {get_human_readable_count(int(trainable_parameters))}",
            f"Non-trainable params: {get_human_readable_count(int(frozen))}",
            f"Total params: {get_human_readable_count(int(total_parameters))}",
            f"Total estimated model params size (MB): {get_formatted_model_size(model_size)}",
            f"Modules in train mode: {total_training_modes['train']}",
            f"Modules in eval mode: {total_training_modes['eval']}",
        ]
        if total_flops > 0:
            lines.append(f"Total FLOPs: {get_human_readable_count(total_flops)}")
        console.print("\n".join(lines), highlight=False)
