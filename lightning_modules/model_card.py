"""Model cards generated from the metadata of the shipped weights files, and metadata edits.

Each `lightning_modules/<system>/weights/MODEL_CARD.md` holds hand-written prose and one table
between `BEGIN` and `END`: one row per `*.pt` beside it (class, parameters, training command,
commit, data convention, measured results), written from the files themselves, so the card
cannot disagree with the weights (a test regenerates every card and compares).

    python -m optiforge.lightning_modules.model_card            # rewrite every card's table
    python -m optiforge.lightning_modules.model_card --check    # exit 1 if a card is stale
    python -m optiforge.lightning_modules.model_card record FILE \\
        [--training-command TEXT] [--commit SHA] [--data TEXT] [--result METRIC VALUE COMMAND]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from optiforge.lightning_modules.weights_file import (
    WeightsFile,
    read_weights_file,
    save_weights_file,
)

LIGHTNING_MODULES = Path(__file__).resolve().parent
COMMAND = "python -m optiforge.lightning_modules.model_card"
BEGIN = f"<!-- weights table: generated from the files' metadata by `{COMMAND}`; do not edit -->"
END = "<!-- end of the generated weights table -->"
COLUMNS = ("file", "class", "parameters", "training command", "commit", "data", "measured")


def shipped_cards() -> list[Path]:
    """Every model card of a shipped weights folder."""
    return sorted(LIGHTNING_MODULES.glob("*/weights/MODEL_CARD.md"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def row(weights: WeightsFile) -> str:
    """One table row: what a user needs to choose, load and reproduce the file."""
    metadata = weights.metadata
    results = "<br>".join(
        f"{_cell(r['metric'])}: **{r['value']}** (`{_cell(r['command'])}`)"
        for r in metadata["results"]
    )
    cells = (
        f"`{weights.path.name}`",
        f"`{weights.class_path}`",
        f"{weights.parameter_count:,}",
        f"`{_cell(metadata['training_command'])}`",
        f"`{metadata['commit']}`",
        _cell(metadata["data"]),
        results or "none recorded",
    )
    return "| " + " | ".join(cells) + " |"


def table(directory: Path) -> str:
    """The markdown table of every weights file in `directory`, sorted by name."""
    files = [read_weights_file(path, "weights file") for path in sorted(directory.glob("*.pt"))]
    header = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS)
    return "\n".join([header, *(row(weights) for weights in files)])


def generated(card: Path) -> str:
    """`card` with its table between `BEGIN` and `END` regenerated from the files beside it."""
    text = card.read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ValueError(f"{card}: needs one {BEGIN!r} and one {END!r} line")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table(card.parent)}\n{END}{tail}"


def record(
    path: str | Path,
    training_command: str | None = None,
    commit: str | None = None,
    data: str | None = None,
    results: Sequence[tuple[str, float, str]] = (),
) -> WeightsFile:
    """Rewrite the file at `path` with metadata fields set and `results` (metric, value,
    command) appended; class, init args and weights stay as they are."""
    weights = read_weights_file(path, "weights file")
    metadata = dict(weights.metadata)
    for key, value in (("training_command", training_command), ("commit", commit), ("data", data)):
        if value is not None:
            metadata[key] = value
    metadata["results"] = [
        *metadata["results"],
        *({"metric": m, "value": float(v), "command": c} for m, v, c in results),
    ]
    return save_weights_file(
        path, weights.model_class, weights.init_args, weights.state_dict, metadata
    )


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"--result VALUE must be a number, got {value!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("action", nargs="?", choices=["write", "record"], default="write")
    parser.add_argument("file", nargs="?", help="the weights file to `record` into")
    parser.add_argument("--check", action="store_true", help="exit 1 if a card is stale")
    parser.add_argument("--training-command")
    parser.add_argument("--commit")
    parser.add_argument("--data")
    parser.add_argument("--result", nargs=3, action="append", default=[])
    return parser


def main(argv: list[str] | None = None) -> None:
    """Regenerate (or `--check`) every card, or `record` metadata in one file; a bad file or
    card ends in one line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.action == "record":
            if args.file is None:
                parser.error("record needs the weights FILE")
            results = [(metric, _number(value), command) for metric, value, command in args.result]
            record(args.file, args.training_command, args.commit, args.data, results)
            return
        stale = [card for card in shipped_cards() if generated(card) != card.read_text()]
        if args.check and stale:
            parser.exit(1, f"{COMMAND}: stale (run it without --check): {stale}\n")
        for card in [] if args.check else stale:
            card.write_text(generated(card))
    except ValueError as error:
        parser.exit(2, f"{COMMAND}: error: {error}\n")


if __name__ == "__main__":
    main()
