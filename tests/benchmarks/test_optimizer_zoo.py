"""The optimizer zoo's protocol: lr chosen on validation, aggregation over seeds, ratios to
AdamW, defaults read from the config files, optimizer state and peak step memory measured
(hand-computed values)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optiforge.benchmarks.optimizer_zoo import run_testbed, tables
from optiforge.benchmarks.optimizer_zoo_runs import (
    TESTBEDS,
    RunResult,
    median_step,
    peak_step_bytes,
    state_bytes,
)
from optiforge.benchmarks.optimizer_zoo_select import (
    choose_lr,
    lr_grid,
    mean_and_std,
    needs_tags,
    ratio,
)
from optiforge.benchmarks.optimizer_zoo_specs import Entrant, config_defaults, entrants
from optiforge.optimizers import SAM, MeZO, NSGDHess


def test_choose_lr_on_validation_accuracy_and_loss() -> None:
    """Accuracy: the highest wins; loss: the lowest wins."""
    val = {0.01: 0.90, 0.04: 0.95, 0.16: 0.93}
    assert choose_lr(val, higher_is_better=True) == 0.04
    loss = {0.01: 2.5, 0.04: 2.1, 0.16: 2.3}
    assert choose_lr(loss, higher_is_better=False) == 0.04


def test_choose_lr_never_picks_a_diverged_run() -> None:
    """NaN / inf never win, a tie goes to the lr listed first, all diverged is None."""
    assert choose_lr({0.1: math.nan, 0.2: 3.0, 0.4: math.inf}, higher_is_better=False) == 0.2
    assert choose_lr({0.1: 0.5, 0.2: 0.5}, higher_is_better=True) == 0.1
    assert choose_lr({0.1: math.nan, 0.2: -math.inf}, higher_is_better=True) is None


@given(st.dictionaries(st.floats(1e-5, 1.0), st.floats(-10, 10), min_size=1, max_size=6))
def test_choose_lr_value_is_the_best_value(val: dict[float, float]) -> None:
    """Whatever the grid, the chosen lr's value is the max (accuracy) / min (loss)."""
    assert val[choose_lr(val, higher_is_better=True)] == max(val.values())
    assert val[choose_lr(val, higher_is_better=False)] == min(val.values())


def test_mean_and_population_std_by_hand() -> None:
    """[0.9, 0.8, 1.0]: mean 0.9, population std sqrt(0.02 / 3); a NaN seed makes both NaN."""
    mean, std = mean_and_std([0.9, 0.8, 1.0])
    assert mean == pytest.approx(0.9)
    assert std == pytest.approx(math.sqrt(0.02 / 3))
    assert mean_and_std([0.5]) == (0.5, 0.0)
    assert all(math.isnan(v) for v in mean_and_std([0.5, math.nan]))


def test_ratio_and_grid() -> None:
    """Ratios to the reference; nothing to compare to a zero reference; grid = factors x lr."""
    assert ratio(0.03, 0.02) == pytest.approx(1.5)
    assert ratio(0, 1024) == 0.0
    assert ratio(1.0, 0.0) is None
    assert lr_grid(0.05, (0.25, 1.0, 4.0)) == ([0.0125, 0.05, 0.2], [])
    # HessianReuseAGD's eta must be <= 1: 4 x 0.5 is left out, and listed
    assert lr_grid(0.5, (0.25, 1.0, 4.0), bound=1.0) == ([0.125, 0.5], [2.0])


def test_median_step_drops_warmup() -> None:
    """The first 3 steps (state allocation) are left out; fewer steps: all of them."""
    assert median_step([9.0, 9.0, 9.0, 1.0, 2.0, 3.0]) == 2.0
    assert median_step([5.0, 1.0]) == 3.0


def test_state_bytes_by_hand() -> None:
    """AdamW on 10 floats: two moments (2 x 40 bytes) + a float32 step = 84; SAM over SGD with
    momentum: the base optimizer's buffer is counted; a forward-only MeZO holds no tensor."""
    w = torch.nn.Parameter(torch.randn(10))
    adamw = torch.optim.AdamW([w])
    w.grad = torch.ones(10)
    adamw.step()
    assert state_bytes(adamw) == 2 * 40 + 4
    sam = SAM([w], torch.optim.SGD, lr=0.1, momentum=0.9)

    def closure() -> torch.Tensor:
        sam.zero_grad()
        loss = (w**2).sum()
        loss.backward()
        return loss

    sam.step(closure)
    assert state_bytes(sam) >= 40  # the SGD momentum buffer, in the base optimizer
    assert state_bytes(sam) == state_bytes(sam.base_optimizer) + sum(
        t.numel() * t.element_size()
        for s in sam.state.values()
        for t in s.values()
        if isinstance(t, torch.Tensor)
    )
    mezo = MeZO([w], lr=0.01)
    with torch.no_grad():
        mezo.step(lambda: (w**2).sum())
    assert state_bytes(mezo) == 0


def test_config_defaults_read_the_stacked_files() -> None:
    """sam.yaml + rwsam.yaml: SGD base with its init_args flattened, rho and the overlay's
    temperature; AdamW on digits takes adamw.yaml's lr."""
    class_path, kwargs = config_defaults(("sam.yaml", "rwsam.yaml"))
    assert class_path == "optiforge.optimizers.RWSAM"
    assert kwargs["base_optimizer"] is torch.optim.SGD
    assert (kwargs["lr"], kwargs["momentum"], kwargs["rho"]) == (0.05, 0.9, 0.1)
    assert kwargs["temperature"] == 1.0
    zoo, _ = entrants("digits_cnn")
    by_name = {entrant.name: entrant for entrant in zoo}
    assert by_name["AdamW"].default_lr == 0.003
    assert by_name["NSGDHess"].default_lr == 0.03  # nsgd_hess.yaml
    assert by_name["MeZO"].default_lr == 0.001  # no file: the class default
    assert by_name["NSGDHess"].needs == NSGDHess.loop_needs
    assert by_name["HessianReuseAGD"].max_lr == 1.0 and by_name["SAM"].max_lr == math.inf
    assert needs_tags(by_name["MeZO"].needs) == "forward-only"
    assert needs_tags(by_name["AdamW"].needs) == "-"


def test_entrants_cover_the_registry() -> None:
    """Every registered optimizer is an entrant, AdamW first (the reference)."""
    from optiforge.optimizers import available

    zoo, missing = entrants("compas_mlp")
    names = [entrant.name for entrant in zoo] + list(missing)
    assert names[0] == "AdamW"
    assert set(available()) <= set(names)
    assert {"SGD (momentum)", "pytorch-optimizer SAM", "pytorch-optimizer SCION"} <= set(names)


def test_ratios_and_table_from_hand_made_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_testbed divides each entrant's step time, peak step memory and state by AdamW's; the
    table prints them, AdamW's peak bytes, and lists what was skipped."""
    made = {
        "AdamW": {
            "test_mean": 0.9,
            "test_std": 0.01,
            "seconds_per_step": 0.02,
            "state_bytes": 800,
            "lr": 0.003,
        },
        "SAM": {
            "test_mean": 0.92,
            "test_std": 0.0,
            "seconds_per_step": 0.05,
            "state_bytes": 400,
            "lr": 0.05,
        },
    }
    monkeypatch.setattr(
        "optiforge.benchmarks.optimizer_zoo.run_entrant",
        lambda entrant, *a: dict(made.get(entrant.name, {"skipped": "not in this test"})),
    )

    class Silent:
        @staticmethod
        def log(message: str) -> None:
            pass

    step = {"AdamW": 0.02, "SAM": 0.05}  # the interleaved timing's step seconds
    monkeypatch.setattr(
        "optiforge.benchmarks.optimizer_zoo.train_once",
        lambda testbed, entrant, *a, **k: RunResult(0.0, 0.0, [step[entrant.name]] * 10),
    )
    peak = {"AdamW": 2_000_000, "SAM": 3_000_000}  # bytes of the memory measurement
    monkeypatch.setattr(
        "optiforge.benchmarks.optimizer_zoo.peak_step_bytes",
        lambda testbed, entrant, lr, steps: peak[entrant.name],
    )
    from optiforge.benchmarks.optimizer_zoo import Config

    rows = run_testbed("digits_cnn", 1, Config(), Silent())
    assert rows["SAM"]["time_ratio"] == pytest.approx(2.5)
    assert rows["SAM"]["state_ratio"] == pytest.approx(0.5)
    assert rows["SAM"]["peak_ratio"] == pytest.approx(1.5)
    assert rows["AdamW"]["time_ratio"] == 1.0
    assert rows["AdamW"]["peak_bytes"] == 2_000_000
    assert "peak_ratio" not in rows["MeZO"]
    text, flat = tables({"digits_cnn": rows})
    assert "| SAM | closure, extra passes | 0.9200 ± 0.0000 | 2.50 | 1.50 | 0.50 |" in text
    assert "AdamW's peak (peak mem × = 1): digits CNN 2 MB." in text
    assert "- MeZO on digits CNN: not in this test" in text
    assert {row["optimizer"] for row in flat} >= {"AdamW", "SAM", "MeZO"}


def test_interleaved_ratio_cancels_a_load_that_changes_between_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The machine slows 1x, 2x, 4x over three rounds; SAM always costs 2.5x AdamW within a
    round: the ratio is 2.5 exactly, where dividing medians taken at different loads would not
    be."""
    from optiforge.benchmarks.optimizer_zoo import Config, interleaved_ratios

    calls: list[str] = []

    def fake_train_once(testbed: object, entrant: Entrant, *a: object, **k: object) -> RunResult:
        calls.append(entrant.name)
        load = 2.0 ** ((len(calls) - 1) // 2)  # 1, 1, 2, 2, 4, 4: one load per round
        base = {"AdamW": 0.02, "SAM": 0.05}[entrant.name]
        return RunResult(0.0, 0.0, [base * load] * 8)

    monkeypatch.setattr("optiforge.benchmarks.optimizer_zoo.train_once", fake_train_once)
    zoo = {e.name: e for e in entrants("digits_cnn")[0] if e.name in ("AdamW", "SAM")}
    timed = {name: (zoo[name], 0.01) for name in ("AdamW", "SAM")}
    ratios = interleaved_ratios(TESTBEDS["digits_cnn"], timed, Config(timing_rounds=3))
    assert calls == ["AdamW", "SAM"] * 3  # alternating, one of each per round
    assert ratios == {"AdamW": pytest.approx(1.0), "SAM": pytest.approx(2.5)}


def test_peak_step_memory_counts_adamws_second_moment() -> None:
    """COMPAS MLP (5506 parameters), 3 steps: AdamW keeps two moments, SGD with momentum one
    buffer, so AdamW's peak is at least 5506 * 4 bytes higher; the measurement repeats to the
    byte."""
    testbed = TESTBEDS["compas_mlp"]
    zoo = {entrant.name: entrant for entrant in entrants("compas_mlp")[0]}
    model, _ = testbed.build()
    assert sum(p.numel() for p in model.parameters()) == 5506
    adamw = peak_step_bytes(testbed, zoo["AdamW"], 0.001, 3)
    sgd = peak_step_bytes(testbed, zoo["SGD (momentum)"], 0.05, 3)
    assert adamw - sgd >= 5506 * 4
    assert peak_step_bytes(testbed, zoo["AdamW"], 0.001, 3) == adamw
