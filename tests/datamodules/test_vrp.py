"""VRPDataModule: per-epoch training instances, cached val/test sets with PyVRP references."""

from __future__ import annotations

import pickle
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch
from lightning.pytorch.trainer.states import TrainerFn

from optiforge.datamodules.vrp import GeneratedBatches, VRPDataModule
from optiforge.problems.vrp.eval_batch import VRPEvalBatch
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.validator import validate


def small(tmp_path: Path, **changes: object) -> VRPDataModule:
    """A 6-customer module with 3-instance eval sets and 100-iteration references."""
    settings: dict[str, object] = {
        "num_customers": 6,
        "batch_size": 4,
        "batches_per_epoch": 2,
        "val_instances": 3,
        "test_instances": 3,
        "eval_batch_size": 2,
        "cache_dir": str(tmp_path / "cache"),
        "reference_iterations": 100,
    }
    return VRPDataModule(**{**settings, **changes})  # type: ignore[arg-type]


def test_training_batches_change_per_epoch_and_mix_variants() -> None:
    """A list of variants alternates within a batch; epoch 1 differs from epoch 0, a rerun of
    epoch 0 is identical, and the batches of one epoch differ from each other."""
    epoch = [0]
    dataset = GeneratedBatches(["CVRP", "VRPTW"], 6, 4, 2, 0, 0, lambda: epoch[0], False)
    first = list(dataset)
    assert len(first) == 2 and all(isinstance(b, VRPBatch) for b in first)
    assert [first[0].variant_of(row).name for row in range(4)] == ["CVRP", "VRPTW"] * 2
    assert not torch.equal(first[0].locs, first[1].locs)
    assert torch.equal(list(dataset)[0].locs, first[0].locs)
    epoch[0] = 1
    assert not torch.equal(list(dataset)[0].locs, first[0].locs)
    other_rank = GeneratedBatches(["CVRP", "VRPTW"], 6, 4, 2, 0, 1, lambda: 0, False)
    assert not torch.equal(next(iter(other_rank)).locs, first[0].locs)


def test_a_variants_eval_instances_do_not_depend_on_the_other_variants(tmp_path: Path) -> None:
    """The VRPTW test set is the same whether VRPTW is listed alone or after CVRP (a teacher and
    a multi-task model are scored on the same instances); val and test sets differ."""
    alone = small(tmp_path / "a", train_variants="VRPTW", reference_iterations=None)
    listed = small(tmp_path / "b", train_variants=["CVRP", "VRPTW"], reference_iterations=None)
    alone.prepare_split("test")
    listed.prepare_split("test")
    alone.prepare_split("val")
    first = alone.load_set("test", "VRPTW", 6).instances
    assert torch.equal(first.locs, listed.load_set("test", "VRPTW", 6).instances.locs)
    assert not torch.equal(first.locs, alone.load_set("val", "VRPTW", 6).instances.locs)
    with pytest.raises(ValueError, match="split must be one of"):
        alone.prepare_split("train")


@pytest.mark.parametrize(
    ("function", "expected"),
    [(TrainerFn.TESTING, ["test"]), (TrainerFn.FITTING, ["val"]), (TrainerFn.VALIDATING, ["val"])],
)
def test_prepare_data_builds_only_the_split_the_stage_reads(
    tmp_path: Path, function: TrainerFn, expected: list[str]
) -> None:
    """Under a trainer that is testing only the test set is built (a strong-reference test
    never pays for a val set); fitting and validating build only the val set."""
    module = small(tmp_path, reference_iterations=None)
    trainer = L.Trainer(logger=False)
    trainer.state.fn = function
    module.trainer = trainer
    module.prepare_data()
    assert [p.name.split("_")[0] for p in (tmp_path / "cache").iterdir()] == expected


def test_eval_sets_are_cached_with_valid_references(tmp_path: Path) -> None:
    """prepare_data writes one npz per split, named and stamped with its iteration budget; every
    reference solution passes the validator at the stored cost; a second prepare_data reuses
    the files."""
    module = small(tmp_path, train_variants="VRPTW")
    module.prepare_data()
    files = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert files == [
        "test_VRPTW_n6_k3_seed0_routefinder_strict_i100.npz",
        "val_VRPTW_n6_k3_seed0_routefinder_strict_i100.npz",
    ]
    stamps = [p.stat().st_mtime_ns for p in (tmp_path / "cache").iterdir()]
    module.prepare_data()
    assert stamps == [p.stat().st_mtime_ns for p in (tmp_path / "cache").iterdir()]
    with np.load(module.cache_path("val", "VRPTW", 6)) as data:
        solutions, costs = data["reference_solution"], data["reference_cost"]
        assert int(data["reference_iterations"]) == 100  # the budget is recorded with the set
    module.setup("fit")
    (val,) = module.eval_sets["val"]
    assert val.name == "VRPTW/n6" and val.instances.batch_size == 3
    for row in range(3):
        cost = validate(val.instances.index(row), solutions[row])
        assert cost == pytest.approx(costs[row], abs=1e-9)
        assert val.instances.variant_of(row).name == "VRPTW"
    assert torch.equal(val.reference_cost, torch.from_numpy(costs))
    chunks = list(module.val_dataloader()[0])
    assert [c.instances.batch_size for c in chunks] == [2, 1]
    module.setup("test")
    assert not torch.equal(module.eval_sets["test"][0].instances.locs, val.instances.locs)


def test_val_and_test_sets_do_not_depend_on_the_cache(tmp_path: Path) -> None:
    """Rebuilding the sets in another folder reproduces them bit for bit (fixed seeds)."""
    first, second = small(tmp_path / "a"), small(tmp_path / "b")
    for module in (first, second):
        module.prepare_data()
        module.setup("fit")
    a, b = first.eval_sets["val"][0], second.eval_sets["val"][0]
    assert torch.equal(a.instances.locs, b.instances.locs)
    assert torch.equal(a.reference_cost, b.reference_cost)


def test_cvrplib_test_set(tmp_path: Path) -> None:
    """The CVRPLIB option appends a test loader whose X-n101-k25 reference is its BKS 27591."""
    module = small(tmp_path, reference_iterations=None, cvrplib_instances=["CVRP/X-n101-k25"])
    module.prepare_data()
    module.setup("test")
    loaders = module.test_dataloader()
    assert len(loaders) == 2 and torch.isnan(module.eval_sets["test"][0].reference_cost).all()
    (item,) = list(loaders[1])
    assert item.name == "CVRP/X-n101-k25" and item.instances.num_nodes == 101
    assert float(item.reference_cost[0] * item.scale[0]) == pytest.approx(27591)


class Recorder(L.LightningModule):
    """Records the training batches it sees; one dummy parameter to optimise."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.seen: list[torch.Tensor] = []
        self.val_names: list[str] = []

    def training_step(self, batch: VRPBatch, batch_idx: int) -> torch.Tensor:
        self.seen.append(batch.locs.clone())
        return (self.weight - batch.locs.mean()) ** 2

    def validation_step(self, batch: VRPEvalBatch, batch_idx: int, dataloader_idx: int = 0) -> None:
        self.val_names.append(batch.name)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_fit_sees_new_instances_every_epoch(tmp_path: Path) -> None:
    """Under a Trainer, 2 epochs x 2 batches are 4 different batches; validation runs on the
    cached sets of both variants."""
    module = Recorder()
    trainer = L.Trainer(
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        accelerator="cpu",
        default_root_dir=tmp_path,
    )
    trainer.fit(module, datamodule=small(tmp_path, train_variants=["CVRP", "OVRP"]))
    assert len(module.seen) == 4
    assert len({tuple(x.flatten().tolist()) for x in module.seen}) == 4
    assert sorted(set(module.val_names)) == ["CVRP/n6", "OVRP/n6"]


def test_bad_arguments_name_the_field(tmp_path: Path) -> None:
    """Unknown variant, bad sizes, negative time limit, malformed CVRPLIB entry, missing cache."""
    with pytest.raises(ValueError, match="variant must be one of"):
        small(tmp_path, train_variants="TSP")
    with pytest.raises(ValueError, match="variant must be one of"):
        small(tmp_path, eval_variants=["CVRP", "VRPX"])
    with pytest.raises(ValueError, match="num_customers must be >= 1"):
        small(tmp_path, num_customers=0)
    with pytest.raises(ValueError, match="eval_sizes must be >= 1"):
        small(tmp_path, eval_sizes=[10, 0])
    with pytest.raises(ValueError, match="reference_iterations must be an integer >= 1"):
        small(tmp_path, reference_iterations=0)
    with pytest.raises(ValueError, match="cvrplib_instances"):
        small(tmp_path, cvrplib_instances=["X-n101-k25"])
    with pytest.raises(FileNotFoundError, match="cache_dir"):
        small(tmp_path).setup("fit")
    message = r"^convention must be one of \['mvmoe', 'routefinder'\], got 'MVMoE'$"
    with pytest.raises(ValueError, match=message):
        small(tmp_path, convention="MVMoE")
    with pytest.raises(ValueError, match="^mixed_backhaul must be False with convention 'mvmoe'"):
        small(tmp_path, convention="mvmoe", mixed_backhaul=True)


def test_mvmoe_convention_for_training_and_eval_sets(tmp_path: Path) -> None:
    """convention "mvmoe" generates training batches and val/test sets in MVMoE's convention
    (depot closing at 3, service 0.2, signed load), cached under a name that says so and
    referenced by validated PyVRP solutions."""
    module = small(tmp_path, train_variants="VRPTW", convention="mvmoe", num_customers=20)
    module.prepare_split("val")
    (path,) = (tmp_path / "cache").iterdir()
    assert path.name == "val_VRPTW_n20_k3_seed0_mvmoe_signedrr_i100.npz"
    module.setup("fit")
    (val,) = module.eval_sets["val"]
    instances = val.instances
    assert torch.equal(instances.time_windows[:, 0], torch.tensor([[0.0, 3.0]] * 3))
    assert (instances.service_time[:, 1:] == 0.2).all() and (instances.capacity == 30).all()
    assert instances.signed_load.all() and torch.isfinite(val.reference_cost).all()
    with np.load(path) as data:
        for row in range(3):
            cost = validate(instances.index(row), data["reference_solution"][row])
            assert cost == pytest.approx(float(val.reference_cost[row]), abs=1e-9)
    batch = next(iter(module.train_dataloader()))
    assert batch.signed_load.all() and torch.equal(
        batch.time_windows[:, 0, 1], torch.full((4,), 3.0)
    )


def test_missing_or_malformed_cvrplib_instances_fail_in_the_constructor(tmp_path: Path) -> None:
    """A CVRPLIB instance whose file is missing, or does not parse, raises a ValueError naming
    cvrplib_instances and the entry when the datamodule is built, before anything is written."""
    folder = tmp_path / "vrplib" / "CVRP"
    folder.mkdir(parents=True)
    (folder / "X-n3-k1.vrp").write_text("NAME : X-n3-k1\nDIMENSION : three\nNODE_COORD_SECTION\n")
    (folder / "X-n3-k1.sol").write_text("Route #1: 1 2\nCost 7\n")
    cases = {"CVRP/X-n9-k1": "no file", "CVRP/X-n3-k1": "cannot be read"}
    for entry, message in cases.items():
        with pytest.raises(ValueError, match=rf"^cvrplib_instances: '{entry}'.*{message}"):
            small(tmp_path, cvrplib_instances=[entry], cvrplib_dir=str(tmp_path / "vrplib"))
    assert not (tmp_path / "cache").exists()


SCALES = (1.0, 0.5, 1.25, 0.8, 1.1)  # instance k: the unit-cost square below times SCALES[k]


def write_mvmoe_cvrp(root: Path) -> None:
    """MVMoE's CVRP test file of 3 customers (5 instances) and an HGS result file: customers
    (0.3, 0), (0.3, 0.4), (0, 0.4) scaled by SCALES[k]; route 1-2-3 costs 1.4 x SCALES[k]."""
    square = ((0.3, 0.0), (0.3, 0.4), (0.0, 0.4))
    instances = [([[0.0, 0.0]], [[k * x, k * y] for x, y in square], [3.0, 4.0, 2.0], 10.0)
                 for k in SCALES]  # fmt: skip
    (root / "CVRP").mkdir(parents=True)
    (root / "CVRP" / "cvrp3_uniform.pkl").write_bytes(pickle.dumps(instances))
    results = [(1.4 * k, [1, 2, 3]) for k in SCALES]
    (root / "CVRP" / "hgs_cvrp3_uniform.pkl").write_bytes(pickle.dumps(results))


def test_mvmoe_dir_reads_disjoint_test_and_val_sets(tmp_path: Path) -> None:
    """With mvmoe_dir the test set is the file's first 3 instances and the val set the next 2,
    referenced by the validated HGS costs; nothing is generated or written."""
    write_mvmoe_cvrp(tmp_path / "mvmoe")
    module = small(tmp_path, num_customers=3, val_instances=2, mvmoe_dir=str(tmp_path / "mvmoe"))
    module.prepare_data()
    module.setup()
    (val,), (test,) = module.eval_sets["val"], module.eval_sets["test"]
    assert val.name == test.name == "MVMoE/CVRP/n3"
    expected = {"test": SCALES[:3], "val": SCALES[3:]}
    for item, scales in ((test, expected["test"]), (val, expected["val"])):
        np.testing.assert_allclose(item.reference_cost.numpy(), [1.4 * k for k in scales])
        np.testing.assert_allclose(item.instances.locs[:, 1, 0].numpy(), [0.3 * k for k in scales])
    assert not (tmp_path / "cache").exists()


def test_mvmoe_dir_without_a_size_fails_before_writing(tmp_path: Path) -> None:
    """A (variant, size) with no file in mvmoe_dir is one line naming mvmoe_dir and the missing
    path, raised when the datamodule is built."""
    write_mvmoe_cvrp(tmp_path / "mvmoe")
    missing = tmp_path / "mvmoe" / "CVRP" / "cvrp50_uniform.pkl"
    with pytest.raises(ValueError, match=rf"^mvmoe_dir: no {missing}"):
        small(tmp_path, num_customers=3, eval_sizes=[3, 50], mvmoe_dir=str(tmp_path / "mvmoe"))
    assert not (tmp_path / "cache").exists()


def test_test_references_follow_limit_test_batches_with_progress(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Under a testing trainer with limit_test_batches=1 (batches of 2 of 3 instances), only
    the first 2 instances are solved, in their own cache file, with progress lines; they are
    the first 2 of the unlimited set."""
    module = small(tmp_path)
    trainer = L.Trainer(logger=False, limit_test_batches=1)
    trainer.state.fn = TrainerFn.TESTING
    module.trainer = trainer
    module.prepare_data()
    module.setup("test")
    (limited,) = module.eval_sets["test"]
    assert limited.instances.batch_size == 2
    assert module.cache_path("test", "CVRP", 6).name.endswith("_first2.npz")
    err = capfd.readouterr().err
    assert "test CVRP/n6: solving references for 2 instances" in err
    assert "test CVRP/n6: references 2/2 solved in" in err
    full = small(tmp_path)
    full.prepare_data()
    full.setup("test")
    assert torch.equal(full.eval_sets["test"][0].instances.locs[:2], limited.instances.locs)
