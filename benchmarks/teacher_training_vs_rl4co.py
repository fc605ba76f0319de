"""Teacher training against RL4CO's POMO at equal CPU wall clock, CVRP n = 50.

    python -m optiforge.benchmarks run teacher_training_vs_rl4co [--minutes 20]
        [--test-instances 1000]
        [--reference-iterations 1000] [--work-dir artifacts/teacher_vs_rl4co]

Trains, concurrently and with one torch thread each, (a) our `POMOTeacher` through `train.py`
with `configs/mtlkd/base.yaml` + `teacher_cvrp.yaml` and (b) RL4CO 0.7's `POMO` on its
`CVRPEnv` with the same model size and hyperparameters (AttentionModelPolicy: 6 encoder
layers, d 128, 8 heads, FF 512, instance norm, tanh clip 10; REINFORCE with the shared
baseline over all n starts; Adam lr 1e-4, weight decay 1e-6, gradient clip 1; batch 64 x 20
batches per epoch; validation on 64 instances without augmentation each epoch, as ours), each
for `--minutes` of wall clock. Both generators draw uniform coordinates, demands 1..9 and
capacity 40 at n = 50. Then both final weights solve the same cached seeded test set
(multi-start over all n starts x 8 symmetric copies, best of the 8 n; 2 threads), every
solution checked by `optiforge.problems.vrp.validator`, against its PyVRP references. Needs the
bench extra (rl4co). Writes teacher_training_vs_rl4co.{json,md}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.datamodules.vrp import VRPDataModule
from optiforge.lightning_modules.mtlkd.policy_weights import load_policy, save_weights
from optiforge.lightning_modules.mtlkd.teacher_inference import solve
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate_batch

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = (
    ROOT / "configs" / "mtlkd" / "base.yaml",
    ROOT / "configs" / "mtlkd" / "teacher_cvrp.yaml",
)
NUM_CUSTOMERS = 50
BATCH_SIZE = 64
BATCHES_PER_EPOCH = 20
EVAL_CHUNK = 50
RL4CO_POLICY = {
    "embed_dim": 128,
    "num_encoder_layers": 6,
    "num_heads": 8,
    "feedforward_hidden": 512,
    "normalization": "instance",
    "tanh_clipping": 10.0,
    "use_graph_context": False,
}


def max_time(minutes: float) -> str:
    """Lightning's DD:HH:MM:SS for `minutes` (whole seconds)."""
    seconds = round(minutes * 60)
    return f"00:{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def train_ours(minutes: float, out: Path) -> dict[str, float]:
    """`train.py fit` of the CVRP teacher for `minutes`; its final weights go to out/ours.pt."""
    from optiforge.cli import main as train_main

    start = time.perf_counter()
    cli = train_main(
        [
            "fit",
            *(argument for path in CONFIGS for argument in ("--config", str(path))),
            "--trainer.max_time",
            max_time(minutes),
            "--trainer.max_epochs",
            "100000",
            "--trainer.logger",
            "false",
            "--trainer.enable_progress_bar",
            "false",
            "--test_after_fit",
            "false",
            "--checkpoint.dirpath",
            str(out / "ours_checkpoints"),
        ]
    )
    save_weights(cli.model, out / "ours.pt")  # the final weights, as for RL4CO
    return {"seconds": time.perf_counter() - start, "steps": cli.trainer.global_step}


def rl4co_model() -> tuple[object, object]:
    """RL4CO's CVRPEnv at n = 50 and its POMO with the settings of the module docstring."""
    from rl4co.envs.routing import CVRPEnv
    from rl4co.models import POMO

    env = CVRPEnv(generator_params={"num_loc": NUM_CUSTOMERS})
    model = POMO(
        env,
        policy_kwargs=RL4CO_POLICY,
        num_augment=1,
        batch_size=BATCH_SIZE,
        val_batch_size=BATCH_SIZE,
        train_data_size=BATCH_SIZE * BATCHES_PER_EPOCH,
        val_data_size=BATCH_SIZE,
        test_data_size=BATCH_SIZE,
        optimizer_kwargs={"lr": 1e-4, "weight_decay": 1e-6},
    )
    return env, model


def train_rl4co(minutes: float, out: Path) -> dict[str, float]:
    """RL4CO POMO training for `minutes`; its final policy weights go to out/rl4co.pt."""
    import lightning as L

    L.seed_everything(0)
    _, model = rl4co_model()
    trainer = L.Trainer(
        max_time={"seconds": round(minutes * 60)},
        max_epochs=100000,
        accelerator="cpu",
        gradient_clip_val=1.0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    start = time.perf_counter()
    trainer.fit(model)
    torch.save(model.policy.state_dict(), out / "rl4co.pt")
    return {"seconds": time.perf_counter() - start, "steps": trainer.global_step}


def rl4co_solve(policy: torch.nn.Module, env: object, batch: VRPBatch) -> torch.Tensor:
    """RL4CO's POMO inference (all n starts x 8 augmentations, greedy; best of 8 n) on our
    CVRP instances; node sequences [B, T] in the validator's format (0 = depot)."""
    from rl4co.data.transforms import StateAugmentation
    from rl4co.utils.ops import gather_by_index, unbatchify
    from tensordict import TensorDict

    capacity = batch.capacity[:, None].float()
    data = TensorDict(
        {
            "depot": batch.locs[:, 0].float(),
            "locs": batch.locs[:, 1:].float(),
            "demand": batch.linehaul_demand[:, 1:].float() / capacity,
            "capacity": capacity,
        },
        batch_size=[batch.batch_size],
    )
    td = StateAugmentation(num_augment=8)(env.reset(data))
    starts = batch.num_nodes - 1
    out = policy(
        td, env, phase="test", decode_type="multistart_greedy", num_starts=starts,
        return_actions=True,
    )  # fmt: skip
    reward = unbatchify(out["reward"], (8, starts)).reshape(batch.batch_size, -1)
    actions = unbatchify(out["actions"], (8, starts)).reshape(batch.batch_size, 8 * starts, -1)
    return gather_by_index(actions, reward.argmax(-1), dim=1)


def evaluate(out: Path, test: VRPBatch, reference: np.ndarray) -> dict[str, dict]:
    """Gap to the references, feasibility and inference seconds per instance of both."""
    from rl4co.models.zoo.am import AttentionModelPolicy

    torch.set_num_threads(2)  # both trainers have finished: inference uses the whole machine
    ours = load_policy(out / "ours.pt")
    env, _ = rl4co_model()
    peer = AttentionModelPolicy(env_name=env.name, **RL4CO_POLICY)
    peer.load_state_dict(torch.load(out / "rl4co.pt", weights_only=True))
    peer.eval()
    solvers = {
        "optiforge POMOTeacher": lambda chunk: solve(ours, chunk, "augment")[0],
        "RL4CO POMO": lambda chunk: rl4co_solve(peer, env, chunk),
    }
    results = {}
    for name, solver in solvers.items():
        costs, seconds = [], 0.0
        for first in range(0, test.batch_size, EVAL_CHUNK):
            chunk = test.index(slice(first, first + EVAL_CHUNK))
            start = time.perf_counter()
            with torch.no_grad():
                solutions = solver(chunk)
            seconds += time.perf_counter() - start
            costs.append(validate_batch(chunk, solutions))  # raises if any is infeasible
        cost = np.concatenate(costs)
        gap = 100.0 * (cost - reference) / reference
        results[name] = {
            "mean_cost": float(cost.mean()),
            "mean_gap_percent": float(gap.mean()),
            "feasible": 1.0,
            "inference_ms_per_instance": 1000.0 * seconds / test.batch_size,
        }
    return results


@dataclass(frozen=True)
class Config:
    """`work_dir` holds the two trainers' weights and summaries; `train` (internal) makes this
    process one of the two concurrent trainers."""

    minutes: float = 20.0
    test_instances: int = 1000
    reference_iterations: int = 1000  # ~1 s at n 50
    work_dir: Path = ROOT / "artifacts" / "teacher_vs_rl4co"
    train: Literal["ours", "rl4co"] | None = None


def main(run: Run, args: Config) -> None:
    args.work_dir.mkdir(parents=True, exist_ok=True)
    if args.train is not None:  # one of the two concurrent training processes
        torch.set_num_threads(1)
        trainer = train_ours if args.train == "ours" else train_rl4co
        summary = trainer(args.minutes, args.work_dir)
        (args.work_dir / f"{args.train}_training.json").write_text(json.dumps(summary))
        return
    data = VRPDataModule(
        train_variants="CVRP",
        num_customers=NUM_CUSTOMERS,
        test_instances=args.test_instances,
        reference_iterations=args.reference_iterations,
        reference_workers=2,
        cache_dir=str(ROOT / "data" / "vrp"),
    )
    data.prepare_split("test")
    test_set = data.load_set("test", "CVRP", NUM_CUSTOMERS)
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    command = [sys.executable, "-m", "optiforge.benchmarks.teacher_training_vs_rl4co"]
    workers = [
        subprocess.Popen(
            [
                *command,
                "--train",
                which,
                "--minutes",
                str(args.minutes),
                "--work-dir",
                str(args.work_dir),
            ],
            cwd=ROOT,
            env=environment,
        )
        for which in ("ours", "rl4co")
    ]
    if any(worker.wait() for worker in workers):
        raise SystemExit("a training process failed")
    results = evaluate(args.work_dir, test_set.instances, test_set.reference_cost.numpy())
    for which, name in (("ours", "optiforge POMOTeacher"), ("rl4co", "RL4CO POMO")):
        training = json.loads((args.work_dir / f"{which}_training.json").read_text())
        results[name].update({"train_seconds": training["seconds"], "steps": training["steps"]})
    config = {
        "minutes": args.minutes,
        "variant": "CVRP",
        "num_customers": NUM_CUSTOMERS,
        "test_instances": args.test_instances,
        "reference": f"PyVRP {args.reference_iterations} iterations per instance",
        "threads_per_trainer": 1,
        "rl4co_policy": RL4CO_POLICY,
    }
    title = (
        f"CVRP n = {NUM_CUSTOMERS}, {args.minutes:g} min of training each (concurrent, 1 thread "
        f"each), {args.test_instances} test instances, {config['reference']}"
    )
    columns = [
        Column("trainer", "name"),
        Column("optimizer steps", "steps"),
        Column("test gap %", "mean_gap_percent", ".2f"),
        Column("feasible", "feasible", ".0%"),
        Column("inference ms / instance", "inference_ms_per_instance", ".1f"),
    ]
    table = markdown_table([{"name": k, **v} for k, v in results.items()], columns)
    payload = {"config": config, "results": results}
    run.write("teacher_training_vs_rl4co", payload, f"{title}\n\n{table}", indent=2)


BENCHMARK = Benchmark(
    "teacher_training_vs_rl4co",
    main,
    Config,
    smoke=dict(minutes=0.05, test_instances=4, reference_iterations=5),
    peers=("rl4co",),
)

if __name__ == "__main__":
    BENCHMARK.main()
