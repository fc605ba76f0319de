"""MTL-KD student: identical states for student and teacher, learning, checkpoints, R3C eval."""

from __future__ import annotations

import re
from pathlib import Path

import lightning as L
import pytest
import torch

from optiforge.lightning_modules import MTLKDStudent, POMOTeacher
from optiforge.lightning_modules.mtlkd.features import context_features
from optiforge.lightning_modules.mtlkd.policy_weights import (
    read_weights,
    save_weights,
    shipped_teacher_path,
)
from optiforge.lightning_modules.mtlkd.rollout import sample
from optiforge.lightning_modules.mtlkd.teacher_inference import solve
from optiforge.lightning_modules.mtlkd.teacher_policy import POMOPolicy
from optiforge.problems.vrp import env
from optiforge.problems.vrp.generator import generate
from optiforge.problems.vrp.validator import validate_batch
from optiforge.problems.vrp.variants import ALL_VARIANTS, SEEN_VARIANTS
from tests.cli_helpers import run_cli

STUDENT = "optiforge.lightning_modules.mtlkd.student_module.MTLKDStudent"
VRP_DATA = "optiforge.datamodules.vrp.VRPDataModule"
TINY = {"embed_dim": 16, "encoder_layers": 1, "decoder_layers": 2, "num_heads": 4, "ff_dim": 32}


def tiny_student(**changes: object) -> MTLKDStudent:
    torch.manual_seed(0)
    module = MTLKDStudent(**{**TINY, **changes})  # type: ignore[arg-type]
    module.log = lambda *args, **kwargs: None  # type: ignore[method-assign]
    return module


def test_student_and_teacher_score_the_same_states() -> None:
    """In a KD step, the student reads the very same state objects as the teacher scored,
    and those states are the replay of the teacher's sampled trajectory."""
    module = tiny_student(window=None)
    teacher = module.teachers["VRPTW"]
    seen: dict[str, list[env.VRPState]] = {"student": [], "teacher": []}
    student_rows, teacher_step = module.policy.rows, teacher.step

    def record_student(state, mask):  # type: ignore[no-untyped-def]
        seen["student"].append(state)
        return student_rows(state, mask)

    def record_teacher(cache, state, mask):  # type: ignore[no-untyped-def]
        seen["teacher"].append(state)
        return teacher_step(cache, state, mask)

    module.policy.rows = record_student  # type: ignore[method-assign]
    teacher.step = record_teacher  # type: ignore[method-assign]
    batch = generate("VRPTW", 8, 3, seed=1)
    torch.manual_seed(5)
    module.training_step(batch, 0)
    teacher_states = seen["teacher"][-len(seen["student"]) :]  # after the trajectory rollout
    assert all(a is b for a, b in zip(seen["student"], teacher_states, strict=True))
    torch.manual_seed(5)
    actions = teacher_step.__self__(batch, 1, "sampling").actions  # the same trajectory
    replay = env.reset(batch)
    for t, state in enumerate(seen["student"]):
        assert torch.equal(state.current, replay.current) and torch.equal(
            state.visited, replay.visited
        )
        replay = env.step(replay, actions[:, t])


def test_decoder_attends_to_the_remaining_nodes_only() -> None:
    """The batched, padded decoder step equals decoding each row alone on its depot and
    unvisited customers (no padding, no mask), at several depths of a route and for rows
    that differ in how much is left."""
    torch.manual_seed(0)
    policy = tiny_student().policy
    batch = generate("OVRPBLTW", 12, 4, seed=3)
    h = policy.encode(batch)
    state = env.reset(batch, 2)
    for depth in range(8):
        log_p = policy.step(h, state, env.action_mask(state))
        for row in range(state.num_rows):
            keep = (~state.visited[row]).nonzero().squeeze(1)
            current = h[state.instance[row], state.current[row]]
            context = context_features(state, policy.feature_scaling)[row]
            x = torch.cat(
                [
                    policy.embed_state(torch.cat([current, context]))[None],
                    h[state.instance[row], keep],
                ]
            )
            x = x[None]
            for layer in policy.decoder:
                x = layer(x, torch.ones(x.shape[:2], dtype=torch.bool))
            scores = torch.full((batch.num_nodes,), float("-inf"))
            scores[keep] = policy.score(policy.norm_out(x[0, 1:])).squeeze(-1)
            scores = scores.masked_fill(~env.action_mask(state)[row], float("-inf"))
            torch.testing.assert_close(log_p[row], torch.log_softmax(scores, -1), atol=1e-5, rtol=0)
        state = env.step(state, log_p.argmax(-1) if depth % 2 else sample(log_p))
    assert len(set((~state.visited).sum(1).tolist())) > 1  # rows had different widths


def test_training_step_mixes_tasks_and_lowers_the_kl() -> None:
    """A mixed batch of the 6 seen tasks gives a finite KL; 25 Adam steps on that batch (same
    trajectories and windows each time) lower it by a third."""
    module = tiny_student(window=6)
    batch = generate(list(SEEN_VARIANTS), 10, 12, seed=2)
    optimizer = torch.optim.Adam(module.policy.parameters(), lr=3e-3)
    losses = []
    for _ in range(25):
        torch.manual_seed(0)
        loss = module.training_step(batch, 0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < 0.67 * losses[0]


def test_an_instance_without_a_teacher_is_refused() -> None:
    """Training instances of an unseen variant name the variant and the available teachers."""
    module = tiny_student()
    with pytest.raises(ValueError, match="variant VRPBTW have no teacher"):
        module.training_step(generate("VRPBTW", 8, 2, seed=0), 0)


def test_checkpoint_round_trip_decodes_identically_and_refuses_another_layout(
    tmp_path: Path,
) -> None:
    """A saved and reloaded student decodes identically (augmented multi-start); a checkpoint
    whose feature layout differs is refused with a message naming the layout."""
    module = tiny_student()
    trainer = L.Trainer(logger=False, enable_checkpointing=False, max_epochs=0)
    trainer.strategy.connect(module)
    trainer.save_checkpoint(tmp_path / "student.ckpt")
    reloaded = MTLKDStudent.load_from_checkpoint(tmp_path / "student.ckpt")
    batch = generate(list(ALL_VARIANTS), 8, 16, seed=3)
    expected = solve(module.policy, batch, "augment")[0]
    assert torch.equal(solve(reloaded.policy, batch, "augment")[0], expected)
    checkpoint = torch.load(tmp_path / "student.ckpt", weights_only=False)
    checkpoint["feature_layout"] = {"customer": 9, "depot": 5, "context": 6}
    torch.save(checkpoint, tmp_path / "old.ckpt")
    with pytest.raises(ValueError, match="feature layout"):
        MTLKDStudent.load_from_checkpoint(tmp_path / "old.ckpt")


def test_evaluation_with_r3c_is_feasible_and_not_worse_than_greedy() -> None:
    """Greedy then R3C on all 16 variants: validator-feasible and never above greedy."""
    batch = generate(list(ALL_VARIANTS), 10, 16, seed=6)
    greedy = tiny_student(val_inference="greedy")
    refined = tiny_student(val_inference="greedy", r3c_iterations=5, r3c_segment=(2, 6))
    with torch.no_grad():
        base = validate_batch(batch, greedy.solve_instances(batch, "val"))
        improved = validate_batch(batch, refined.solve_instances(batch, "val"))
    assert (improved <= base + 1e-9).all()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"kd_direction": "sideways"}, "kd_direction"),
        ({"temperature": 0.0}, "temperature"),
        ({"trajectory": "solver"}, "trajectory"),
        ({"window": 0}, "window"),
        ({"test_inference": "beam"}, "test_inference"),
        ({"r3c_iterations": -1}, "r3c_iterations"),
        ({"r3c_segment": (5, 2)}, "r3c_segment"),
        ({"teachers": {"VRPX": "x.pt"}}, "variant must be one of"),
        ({"embed_dim": 18}, "multiple of num_heads"),
    ],
)
def test_bad_arguments_name_the_field(changes: dict, message: str) -> None:
    """Each invalid MTLKDStudent argument raises a ValueError naming it."""
    with pytest.raises(ValueError, match=message):
        MTLKDStudent(**{**TINY, **changes})


def teacher_file(path: Path, variants: list[str] | None, **architecture: int) -> str:
    """A tiny POMOTeacher weights file recording `variants` as its training variants."""
    torch.manual_seed(0)
    sizes = {"embed_dim": 16, "num_layers": 1, "num_heads": 4, "ff_dim": 32, **architecture}
    save_weights(POMOTeacher(**sizes), path, variants=variants)
    return str(path)


def test_wrong_teacher_files_are_refused_when_the_student_is_built(tmp_path: Path) -> None:
    """A missing file, a file that is not torch weights, a student file, a teacher of another
    variant and a teacher whose tensors do not fit its architecture each raise a ValueError
    naming model.teachers[<variant>] and the file, in the constructor."""
    good = teacher_file(tmp_path / "cvrp.pt", ["CVRP"])
    (tmp_path / "notes.pt").write_text("not weights")
    save_weights(MTLKDStudent(**TINY), tmp_path / "student.pt")
    other = teacher_file(tmp_path / "vrptw.pt", ["VRPTW"])
    blob = torch.load(good, weights_only=True)
    blob["state_dict"]["policy.encoder.embed_depot.weight"] = torch.zeros(3, 5)
    torch.save(blob, tmp_path / "reshaped.pt")
    cases = {
        str(tmp_path / "absent.pt"): "no file",
        str(tmp_path / "notes.pt"): "not a readable torch file",
        str(tmp_path / "student.pt"): "holds a MTLKDStudent, not a POMOTeacher",
        other: r"is a teacher of \['VRPTW'\], not of CVRP",
        str(tmp_path / "reshaped.pt"): "does not fit its architecture",
    }
    for path, message in cases.items():
        with pytest.raises(ValueError, match=r"^model\.teachers\[CVRP\]: ") as error:
            MTLKDStudent(**TINY, teachers={"CVRP": path})
        assert path in str(error.value) and re.search(message, str(error.value))
    student = MTLKDStudent(**TINY, teachers={"CVRP": good, "VRPTW": other})
    assert set(student.teachers) == {"CVRP", "VRPTW"}


def test_teachers_load_without_a_lightning_module_and_keep_the_seed() -> None:
    """The student's teachers are plain POMOPolicy networks equal to the shipped weights, and
    loading them does not move the global seed (a seeded student initialises as before)."""
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    module = MTLKDStudent(**TINY)
    torch.manual_seed(0)
    assert torch.equal(torch.rand(3), expected)
    teacher = module.teachers["VRPL"]
    assert type(teacher) is POMOPolicy and not teacher.training
    blob = read_weights(shipped_teacher_path("VRPL", convention="routefinder"))
    for name, value in teacher.state_dict().items():
        assert torch.equal(value, blob.state_dict[f"policy.{name}"])


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        (
            "--model.init_args.teachers",
            '{"CVRP": "absent.pt"}',
            "model.teachers[CVRP]: no file absent.pt",
        ),
        ("--data.init_args.cvrplib_instances", "[CVRP/X-n9-k1]", "cvrplib_instances: 'CVRP/X-n9"),
    ],
)
def test_cli_refuses_bad_inputs_before_writing_anything(
    in_tmp_dir: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, named: str
) -> None:
    """`train.py fit` with a missing teacher file or a missing CVRPLIB instance stops with an
    error naming the field and the value, and writes nothing (no wandb/, optiforge/, data/)."""
    with pytest.raises(SystemExit) as stopped:
        run_cli("fit", "--model", STUDENT, "--data", VRP_DATA, option, value)
    assert stopped.value.code != 0
    assert named in capsys.readouterr().err
    assert list(in_tmp_dir.iterdir()) == []


def test_default_teachers_stay_unnamed_in_the_hyperparameters() -> None:
    """Without `teachers` the student loads the 6 shipped teachers but records None, so its
    checkpoints do not carry this machine's absolute paths; an explicit map is recorded as is."""
    module = MTLKDStudent(**TINY)
    assert module.hparams["teachers"] is None and set(module.teachers) == set(SEEN_VARIANTS)
    assert module.teacher_files["VRPB"] == str(
        shipped_teacher_path("VRPB", convention="routefinder")
    )
    chosen = {"VRPB": "weights/mtlkd/teacher_vrpb_n50.pt"}
    assert MTLKDStudent(**TINY, teachers=chosen).hparams["teachers"] == chosen


def test_student_and_teachers_keep_their_own_feature_scaling() -> None:
    """An "instance" student distils from the shipped "raw" teachers: each scores a state with
    its own features (the teacher's log-probabilities equal those of its file's policy)."""
    module = tiny_student(feature_scaling="instance")
    assert module.policy.feature_scaling == module.hparams["feature_scaling"] == "instance"
    assert {policy.feature_scaling for policy in module.teachers.values()} == {"raw"}
    batch = generate("VRPTW", 8, 3, seed=2)
    teacher = module.teachers["VRPTW"]
    reference = POMOPolicy(
        **read_weights(shipped_teacher_path("VRPTW", convention="routefinder")).init_args
    )
    reference.load_state_dict(teacher.state_dict())
    state = env.reset(batch)
    mask = env.action_mask(state)
    with torch.no_grad():
        expected = reference.step(reference.precompute(batch), state, mask)
        assert torch.equal(teacher.step(teacher.precompute(batch), state, mask), expected)
    torch.manual_seed(0)
    loss = module.training_step(batch, 0)
    assert torch.isfinite(loss) and loss > 0
