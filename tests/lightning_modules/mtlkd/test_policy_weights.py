"""MTL-KD weights files: the shipped teachers load and solve, round trips, refusal of mismatches."""

from __future__ import annotations

import shlex
from pathlib import Path

import lightning as L
import pytest
import torch
import yaml

from optiforge.lightning_modules import MTLKDStudent, POMOTeacher
from optiforge.lightning_modules.mtlkd.policy_weights import (
    SHIPPED_DIR,
    build_module,
    export_checkpoint,
    load_policy,
    read_weights,
    save_weights,
    shipped_teacher_path,
)
from optiforge.lightning_modules.mtlkd.student_policy import HeavyDecoderPolicy
from optiforge.lightning_modules.mtlkd.teacher_inference import solve
from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.validator import validate_batch
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS
from tests.cli_helpers import PROJECT_ROOT, run_cli

TINY = {"embed_dim": 16, "num_layers": 2, "num_heads": 4, "ff_dim": 32}


@pytest.mark.parametrize("convention", ["mvmoe", "routefinder"])
@pytest.mark.parametrize("name", SEEN_VARIANTS)
def test_shipped_teacher_loads_and_beats_a_random_policy(name: str, convention: str) -> None:
    """Each shipped teacher of each convention loads through `weights=` and its greedy solutions
    on 8 instances of its variant and convention validate and cost less on average than those of
    an untrained policy of the same feature scaling."""
    path = shipped_teacher_path(name, convention=convention)
    assert path.name == f"teacher_{name.lower()}{'_mvmoe' if convention == 'mvmoe' else ''}_n50.pt"
    scaling = "instance" if convention == "mvmoe" else "raw"
    trained = POMOTeacher(weights=str(path), feature_scaling=scaling)
    torch.manual_seed(0)
    untrained = POMOTeacher(feature_scaling=scaling)
    batch = generate(name, 20, 8, seed=11, convention=convention)
    costs = {}
    for label, module in (("trained", trained), ("untrained", untrained)):
        solutions, env_costs = solve(module.policy, batch, "greedy")
        costs[label] = torch.from_numpy(validate_batch(batch, solutions))
        assert torch.allclose(costs[label], env_costs.double(), atol=1e-5)
    assert costs["trained"].mean() < 0.9 * costs["untrained"].mean()
    assert read_weights(path).metadata["feature_layout"] == {
        "customer": 7,
        "depot": 5,
        "context": 6,
    }


def test_save_and_export_round_trip_decode_identically(tmp_path: Path) -> None:
    """A module saved with `save_weights`, and a Lightning checkpoint exported with
    `export_checkpoint`, reload into modules whose greedy decodings are identical."""
    torch.manual_seed(1)
    module = POMOTeacher(**TINY)
    save_weights(module, tmp_path / "saved.pt")
    trainer = L.Trainer(logger=False, enable_checkpointing=False, max_epochs=0)
    trainer.strategy.connect(module)
    trainer.save_checkpoint(tmp_path / "module.ckpt")
    export_checkpoint(tmp_path / "module.ckpt", tmp_path / "exported.pt")
    exported = torch.load(tmp_path / "exported.pt", weights_only=True)
    assert set(exported) == {
        "format",
        "version",
        "class_path",
        "init_args",
        "state_dict",
        "metadata",
    }
    batch = generate("VRPTW", 10, 4, seed=2)
    expected, _ = solve(module.policy, batch, "multistart")
    for name in ("saved.pt", "exported.pt"):
        reloaded = POMOTeacher(**TINY, weights=str(tmp_path / name))
        assert torch.equal(solve(reloaded.policy, batch, "multistart")[0], expected)


def test_mismatched_architecture_or_layout_is_refused(tmp_path: Path) -> None:
    """Loading into another width, or a file with another feature layout, raises naming the
    field; a missing file and a file not in the weights format raise too."""
    save_weights(POMOTeacher(**TINY), tmp_path / "tiny.pt")
    with pytest.raises(ValueError, match="embed_dim=16"):
        POMOTeacher(**{**TINY, "embed_dim": 32}, weights=str(tmp_path / "tiny.pt"))
    blob = torch.load(tmp_path / "tiny.pt", weights_only=True)
    blob["metadata"]["feature_layout"]["context"] = 5
    torch.save(blob, tmp_path / "old_layout.pt")
    with pytest.raises(ValueError, match="5 context features"):
        POMOTeacher(**TINY, weights=str(tmp_path / "old_layout.pt"))
    torch.save({"state_dict": {}}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not an optiforge-weights file"):
        POMOTeacher(**TINY, weights=str(tmp_path / "other.pt"))
    with pytest.raises(FileNotFoundError, match="weights: no file"):
        POMOTeacher(**TINY, weights=str(tmp_path / "absent.pt"))


@pytest.mark.parametrize(
    ("module_class", "architecture"),
    [(POMOTeacher, TINY), (MTLKDStudent, {"embed_dim": 16, "decoder_layers": 1, "num_heads": 4})],
)
def test_weights_round_trip_keeps_the_feature_scaling(
    module_class: type, architecture: dict, tmp_path: Path
) -> None:
    """A file saved from an "instance" model records it, rebuilds as "instance" (policy and
    module), and is refused by a "raw" model."""
    torch.manual_seed(4)
    module = module_class(**architecture, feature_scaling="instance")
    save_weights(module, tmp_path / "instance.pt")
    assert read_weights(tmp_path / "instance.pt").init_args["feature_scaling"] == "instance"
    assert load_policy(tmp_path / "instance.pt").feature_scaling == "instance"
    rebuilt = build_module(tmp_path / "instance.pt")
    assert rebuilt.policy.feature_scaling == "instance"
    batch = generate("VRPBLTW", 8, 3, seed=6)
    with torch.no_grad():
        expected = solve(module.policy, batch, "greedy")[0]
        assert torch.equal(solve(rebuilt.policy, batch, "greedy")[0], expected)
    with pytest.raises(ValueError, match="feature_scaling='instance'.*feature_scaling='raw'"):
        module_class(**architecture, weights=str(tmp_path / "instance.pt"))


def test_student_file_rebuilds_the_student_and_refuses_a_teacher_file(tmp_path: Path) -> None:
    """`build_module` rebuilds a saved student with its architecture (greedy decodings equal);
    a teacher file is refused by the student, naming both classes."""
    torch.manual_seed(2)
    architecture = {"embed_dim": 16, "decoder_layers": 2, "num_heads": 4, "ff_dim": 32}
    student = MTLKDStudent(**architecture)
    save_weights(student, tmp_path / "student.pt")
    rebuilt = build_module(tmp_path / "student.pt")
    assert isinstance(rebuilt, MTLKDStudent) and rebuilt.hparams["decoder_layers"] == 2
    batch = generate("OVRPBLTW", 10, 4, seed=3)
    assert torch.equal(
        solve(rebuilt.policy, batch, "greedy")[0], solve(student.policy, batch, "greedy")[0]
    )
    save_weights(POMOTeacher(**TINY), tmp_path / "teacher.pt")
    with pytest.raises(ValueError, match="holds a POMOTeacher, this model is a MTLKDStudent"):
        MTLKDStudent(**architecture, weights=str(tmp_path / "teacher.pt"))


def recipe_config(config_name: str, capsys: pytest.CaptureFixture[str]) -> dict:
    """The resolved config of the model card's bash block that trains with `config_name`."""
    card = (SHIPPED_DIR / "MODEL_CARD.md").read_text()
    blocks = [part.split("```", 1)[0] for part in card.split("```bash\n")[1:]]
    (block,) = [b for b in blocks if config_name in b]
    words = shlex.split(block.replace("\\\n", " "))
    assert words[:3] == ["python", "train.py", "fit"]
    with pytest.raises(SystemExit):
        run_cli(*words[2:], "--print_config")
    return yaml.safe_load(capsys.readouterr().out)


def test_the_model_cards_student_recipe_parses(capsys: pytest.CaptureFixture[str]) -> None:
    """The student's GPU command resolves to the paper-sized student at n = 100, distilling
    every step from the six n = 100 teachers."""
    model = recipe_config("student_gpu_n100.yaml", capsys)["model"]["init_args"]
    size = [model[k] for k in ("embed_dim", "decoder_layers", "num_heads", "ff_dim")]
    assert size == [128, 6, 8, 512] and model["window"] is None
    assert model["teachers"] == {
        name: f"weights/mtlkd/teacher_{name.lower()}_n100.pt" for name in SEEN_VARIANTS
    }


def test_the_model_cards_gpu_recipe_parses(capsys: pytest.CaptureFixture[str]) -> None:
    """The n = 100 GPU command in weights/mtlkd/MODEL_CARD.md resolves (`--print_config`) to
    n = 100, batch 256, 300 epochs, lr 3e-4 and a MultiStepLR at epochs 270 and 295."""
    config = recipe_config("teacher_cvrp.yaml", capsys)
    data = config["data"]["init_args"]
    assert (data["num_customers"], data["batch_size"], data["batches_per_epoch"]) == (100, 256, 391)
    assert config["trainer"]["max_epochs"] == 300
    assert config["optimizer"]["init_args"]["lr"] == 0.0003
    assert config["lr_scheduler"]["init_args"]["milestones"] == [270, 295]


def test_shipped_student_evaluates_through_train_py_test(in_tmp_dir: Path) -> None:
    """`train.py test` with the student config, the shipped weights and their "raw" feature
    scaling (the config trains "instance") reports, for a seen and an unseen variant, 100 %
    feasible solutions whose mean cost equals the weights' own greedy decoding checked by the
    validator."""
    cli = run_cli(
        "test",
        "--config",
        str(PROJECT_ROOT / "configs" / "mtlkd" / "base.yaml"),
        "--config",
        str(PROJECT_ROOT / "configs" / "mtlkd" / "student.yaml"),
        "--model.init_args.weights",
        str(SHIPPED_DIR / "student_n50.pt"),
        "--model.init_args.feature_scaling",
        "raw",
        "--data.init_args.num_customers",
        "12",
        "--data.init_args.eval_variants",
        "[CVRP, OVRPBLTW]",
        "--data.init_args.test_instances",
        "4",
        "--data.init_args.reference_iterations",
        "20",
        "--trainer.logger",
        "false",
        "--trainer.callbacks",
        "[]",
    )
    metrics = cli.trainer.callback_metrics
    assert float(metrics["test/feasible"]) == 1.0
    student = build_module(SHIPPED_DIR / "student_n50.pt")
    data = cli.datamodule
    for name in ("CVRP", "OVRPBLTW"):
        instances = data.load_set("test", name, 12).instances
        costs = validate_batch(instances, solve(student.policy, instances, "greedy")[0])
        assert float(metrics[f"test/{name}/n12/cost"]) == pytest.approx(costs.mean(), rel=1e-6)


def test_load_policy_builds_the_network_alone(tmp_path: Path) -> None:
    """`load_policy` gives the shipped student's HeavyDecoderPolicy (no LightningModule) with
    the weights of `build_module`'s student, and a teacher file's POMOPolicy; both decode the
    same greedy solutions as the modules."""
    student = build_module(SHIPPED_DIR / "student_n50.pt")
    policy = load_policy(SHIPPED_DIR / "student_n50.pt")
    assert type(policy) is HeavyDecoderPolicy and not policy.training
    batch = generate("OVRPTW", 8, 3, seed=4)
    expected = student.solve(batch, "greedy", r3c_iterations=0)
    assert torch.equal(solve(policy, batch, "greedy")[0], expected)
    torch.manual_seed(3)
    teacher = POMOTeacher(**TINY)
    save_weights(teacher, tmp_path / "t.pt", variants=["OVRPTW"])
    loaded = load_policy(tmp_path / "t.pt")
    variants = read_weights(tmp_path / "t.pt").metadata["variants"]
    assert type(loaded) is POMOPolicy and variants == ["OVRPTW"]
    assert torch.equal(
        solve(loaded, batch, "multistart")[0], solve(teacher.policy, batch, "multistart")[0]
    )


@pytest.mark.parametrize(
    ("train_variants", "expected"),
    [("VRPTW", ["VRPTW"]), (["CVRP", "OVRP"], ["CVRP", "OVRP"]), ("mixed", list(ALL_VARIANTS))],
)
def test_export_records_the_training_variants(
    tmp_path: Path, train_variants: str | list[str], expected: list[str]
) -> None:
    """`export_checkpoint` records the datamodule's `train_variants` as a list of names ("mixed"
    = all 16), which the student checks its teachers against; without a datamodule, None."""
    trainer = L.Trainer(logger=False, enable_checkpointing=False, max_epochs=0)
    trainer.strategy.connect(POMOTeacher(**TINY))
    trainer.save_checkpoint(tmp_path / "plain.ckpt")
    export_checkpoint(tmp_path / "plain.ckpt", tmp_path / "plain.pt")
    assert read_weights(tmp_path / "plain.pt").metadata["variants"] is None
    checkpoint = torch.load(tmp_path / "plain.ckpt", weights_only=False)
    checkpoint["datamodule_hyper_parameters"] = {"train_variants": train_variants}
    torch.save(checkpoint, tmp_path / "data.ckpt")
    export_checkpoint(tmp_path / "data.ckpt", tmp_path / "data.pt")
    assert read_weights(tmp_path / "data.pt").metadata["variants"] == expected


def test_shipped_teacher_path_needs_a_known_convention() -> None:
    """The convention is named, never implied: an unknown one lists the allowed ones."""
    with pytest.raises(ValueError, match=r"convention must be one of \['mvmoe', 'routefinder'\]"):
        shipped_teacher_path("CVRP", convention="rl4co")
    with pytest.raises(TypeError):
        shipped_teacher_path("CVRP", 50)  # type: ignore[call-arg]
