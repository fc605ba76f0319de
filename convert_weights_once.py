"""One-off conversion of the shipped weights to the optiforge-weights format (kept in history only).

Reads every shipped file as committed at OLD (git show), writes it in the new format with the
metadata below, reads it back with the new loader and checks that the state dict is
bit-identical (same keys, dtypes, shapes, bytes) to the old file's.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import torch

from optiforge.lightning_modules.kv_lm.module import LlamaCharLanguageModel
from optiforge.lightning_modules.mtlkd.policy_weights import FEATURE_LAYOUT, read_weights
from optiforge.lightning_modules.mtlkd.student_module import MTLKDStudent
from optiforge.lightning_modules.mtlkd.teacher_module import POMOTeacher
from optiforge.lightning_modules.weights_file import read_weights_file, save_weights_file

OLD = sys.argv[1]
MTLKD = Path("lightning_modules/mtlkd/weights")
KV = Path("lightning_modules/kv_lm/weights/llama_char_tinyshakespeare.pt")
TRAIN = (
    "OMP_NUM_THREADS=1 python train.py fit --config configs/mtlkd/base.yaml --config configs/mtlkd/"
)
RF_GAPS = {"CVRP": 7.39, "OVRP": 15.06, "VRPB": 12.65, "VRPL": 7.66, "VRPTW": 8.13, "OVRPTW": 9.25}
MV_GAPS = {"VRPTW": 11.92, "OVRP": 16.16, "VRPB": 5.78, "VRPL": 7.41, "OVRPTW": 14.32}
MV_TABLE = (
    "OMP_NUM_THREADS=1 python -m benchmarks.mtlkd_mvmoe_table --mvmoe-dir Routing-MVMoE/data "
    "--parts suite --sizes 50 --augment-instances 100 --r3c-instances 32"
)
RF_EVAL = (
    "python -m benchmarks.mtlkd_evaluation --student weights/mtlkd/student_n50.pt "
    "--mtpomo weights/mtlkd/mtpomo_n50.pt"
)
MV_GAP = "gap % to the best validated published solution, MVMoE's test files, n = 50"


def result(metric: str, value: float, command: str) -> dict:
    return {"metric": metric, "value": value, "command": command}


def mtlkd_metadata(name: str) -> dict:
    """Training command, commit, data convention and measured results of one MTL-KD file, as
    the model card and benchmarks/results recorded them."""
    mvmoe = "_mvmoe" in name
    data = (
        "mvmoe instances (MVMoE's convention), n = 50, instance-scaled features"
        if mvmoe
        else "routefinder instances (RouteFinder's convention), n = 50, raw features"
    )
    if name.startswith("teacher_"):
        variant = name.split("_")[1].upper()
        config = f"teacher_{variant.lower()}.yaml"
        if name == "teacher_cvrp_mvmoe_n50.pt":
            return {
                "training_command": f"{TRAIN}{config} --model.init_args.weights "
                "weights/mtlkd/teacher_cvrp_mvmoe_n50.pt --trainer.max_time 00:02:15:00 "
                "--trainer.max_epochs 100000 --test_after_fit false",
                "commit": "aa43447",
                "data": data,
                "results": [
                    result(
                        "test gap %, 64 generated CVRP instances, x8 augmentation "
                        "(PyVRP 100 iterations reference)",
                        4.02,
                        "python train.py test --config configs/mtlkd/base.yaml --config "
                        "configs/mtlkd/teacher_cvrp.yaml --model.init_args.weights "
                        "weights/mtlkd/teacher_cvrp_mvmoe_n50.pt "
                        "--data.init_args.test_instances 64",
                    )
                ],
                "continued_from": "teacher_cvrp_mvmoe_n50.pt of d8d464e (294 steps); "
                "974 steps in all",
            }
        if mvmoe:
            return {
                "training_command": f"{TRAIN}{config} --trainer.max_time 00:00:15:00 "
                "--trainer.max_epochs 1000 --test_after_fit false",
                "commit": "d8d464e",
                "data": data,
                "results": [
                    result(
                        f"{MV_GAP}, {variant}, multi-start x8, first 100 instances"
                        + (" (reference: PyVRP 500 iterations)" if "B" in variant else ""),
                        MV_GAPS[variant],
                        MV_TABLE,
                    )
                ],
            }
        return {
            "training_command": f"{TRAIN}{config} --trainer.max_time 00:00:20:00 "
            "--trainer.max_epochs 1000",
            "commit": "741ffaf",
            "data": data,
            "results": [
                result(
                    f"test gap %, 1000 seeded {variant} instances, multi-start x8 "
                    "(PyVRP 1 s reference)",
                    RF_GAPS[variant],
                    "python -m benchmarks.vrp_teacher_gaps",
                )
            ],
        }
    model = name.split("_")[0]
    if mvmoe:
        means = {
            "student": {"greedy": (21.59, 20.28), "R3C 200, first 32 instances": (12.15, 9.32)},
            "mtpomo": {"greedy": (21.40, 20.74), "x8, first 100 instances": (9.85, 6.81)},
        }[model]
        results = [
            result(f"{MV_GAP}, mean of the {group} variants, {decoding}", pair[i], MV_TABLE)
            for decoding, pair in means.items()
            for i, group in enumerate(("6 seen", "10 unseen"))
        ]
        return {
            "training_command": f"{TRAIN}{model}.yaml --trainer.max_time 00:00:50:00 "
            "--test_after_fit false",
            "commit": "f97c3ea",
            "data": data + ", mixed batches of the 6 seen variants",
            "results": results,
        }
    means = {"student": (20.43, 22.81), "mtpomo": (21.21, 32.34)}[model]
    return {
        "training_command": f"{TRAIN}{model}.yaml --trainer.max_time 00:01:00:00 "
        "--test_after_fit false",
        "commit": "3b2fbf3",
        "data": data + ", mixed batches of the 6 seen variants",
        "results": [
            result(
                f"test gap % to PyVRP, 1000 seeded instances per variant, greedy, mean of the "
                f"{group} variants",
                means[i],
                RF_EVAL,
            )
            for i, group in enumerate(("6 seen", "10 unseen"))
        ],
    }


def old(path: Path) -> dict:
    raw = subprocess.run(["git", "show", f"{OLD}:{path}"], capture_output=True, check=True).stdout
    return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)


def identical(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and torch.equal(a[k], b[k]) for k in a
    )


def main() -> None:
    for path in sorted(MTLKD.glob("*.pt")):
        blob = old(path)
        model = {"POMOTeacher": POMOTeacher, "MTLKDStudent": MTLKDStudent}[
            blob.get("model", "POMOTeacher")
        ]
        assert blob["feature_layout"] == FEATURE_LAYOUT, path
        init_args = {"feature_scaling": "raw", **blob["hyper_parameters"]}
        metadata = {
            **mtlkd_metadata(path.name),
            "feature_layout": blob["feature_layout"],
            "variants": blob.get("variants"),
            "epoch": blob["epoch"],
            "global_step": blob["global_step"],
        }
        save_weights_file(path, model, init_args, blob["state_dict"], metadata)
        new = read_weights(f"weights/mtlkd/{path.name}")
        assert identical(new.state_dict, blob["state_dict"]), path
        print(f"{path}: {len(new.state_dict)} tensors identical, {new.class_path}")
    blob = old(KV)
    metadata = {
        "training_command": "OMP_NUM_THREADS=1 python train.py fit --config "
        "configs/kv/tinyshakespeare_llama.yaml",
        "commit": "3271118",
        "data": "TinyShakespeare input.txt, characters, contiguous 90 / 5 / 5 % train / val / "
        "test split, windows of 512",
        "results": [
            result(
                "validation bits per character (best and last epoch, 1300 steps)",
                round(blob["val_bpc"], 3),
                "OMP_NUM_THREADS=1 python train.py fit "
                "--config configs/kv/tinyshakespeare_llama.yaml",
            )
        ],
        **{key: blob[key] for key in ("vocab", "epoch", "global_step", "val_bpc")},
    }
    save_weights_file(
        KV, LlamaCharLanguageModel, blob["hyper_parameters"], blob["state_dict"], metadata
    )
    new = read_weights_file(KV, expected=LlamaCharLanguageModel)
    assert identical(new.state_dict, blob["state_dict"]) and new.metadata["vocab"] == blob["vocab"]
    print(f"{KV}: {len(new.state_dict)} tensors identical, {new.class_path}")


if __name__ == "__main__":
    main()
