"""Model cards: the per-file tables are generated from the weights files' metadata."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from optiforge.lightning_modules.classifier import Classifier
from optiforge.lightning_modules.model_card import (
    BEGIN,
    END,
    generated,
    main,
    record,
    shipped_cards,
)
from optiforge.lightning_modules.weights_file import read_weights_file, save_weights_file

SMALL = {"input_shape": (1, 2, 2), "num_classes": 3, "architecture": "mlp", "widths": (5,)}
METADATA = {"training_command": "python train.py fit", "commit": "abc1234", "data": "toy"}


def test_every_committed_card_equals_the_generated_one() -> None:
    """The cards of the MTL-KD and KV LM weights are what the generator writes from the files
    (edit the files' metadata and run the generator, never the table)."""
    cards = shipped_cards()
    assert {card.parent.parent.name for card in cards} >= {"mtlkd", "kv_lm"}
    for card in cards:
        assert card.read_text() == generated(card), f"{card} is stale: run the generator"


def test_the_table_has_one_row_per_file_with_its_parameter_count() -> None:
    """Each shipped file has a row whose parameter count is the number of numbers in its state
    dict, counted here straight from `torch.load`."""
    for card in shipped_cards():
        table = card.read_text().split(BEGIN)[1].split(END)[0]
        for path in sorted(card.parent.glob("*.pt")):
            (line,) = [line for line in table.splitlines() if line.startswith(f"| `{path.name}`")]
            state = torch.load(path, weights_only=True)["state_dict"]
            assert f" | {sum(v.numel() for v in state.values()):,} | " in line


def small_card(folder: Path) -> Path:
    """A folder with one small weights file and a card holding an empty generated table."""
    model = Classifier(**SMALL)
    save_weights_file(
        folder / "small.pt", Classifier, SMALL, model.state_dict(), METADATA | {"results": []}
    )
    card = folder / "MODEL_CARD.md"
    card.write_text(f"# Small\n\nprose kept\n\n{BEGIN}\n{END}\n\nmore prose\n")
    return card


def test_record_adds_results_and_the_card_shows_them(tmp_path: Path) -> None:
    """`record` sets the training command and appends a result, keeping the weights; the
    regenerated card keeps its prose and shows both."""
    card = small_card(tmp_path)
    before = read_weights_file(tmp_path / "small.pt").state_dict
    main(["record", str(tmp_path / "small.pt"), "--training-command", "python train.py fit -c x"])
    record(tmp_path / "small.pt", results=[("accuracy %", 91.5, "python train.py test")])
    after = read_weights_file(tmp_path / "small.pt")
    assert after.metadata["training_command"] == "python train.py fit -c x"
    assert after.metadata["results"] == [
        {"metric": "accuracy %", "value": 91.5, "command": "python train.py test"}
    ]
    assert all(torch.equal(before[k], after.state_dict[k]) for k in before)
    text = generated(card)
    assert text.startswith("# Small\n\nprose kept\n") and text.endswith(f"{END}\n\nmore prose\n")
    assert "accuracy %: **91.5** (`python train.py test`)" in text
    assert "`python train.py fit -c x`" in text and "| 43 |" in text  # 4 x 5 + 5 + 5 x 3 + 3


def test_bad_input_ends_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A result value that is no number, and a card without the markers, end in one line."""
    card = small_card(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["record", str(tmp_path / "small.pt"), "--result", "acc", "high", "cmd"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(lines) == 1
    assert "--result VALUE must be a number, got 'high'" in lines[0]
    card.write_text("# no table\n")
    with pytest.raises(ValueError, match="MODEL_CARD.md: needs one"):
        generated(card)
