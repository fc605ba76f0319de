"""Run DIVERSE or a baseline with one process per node, on COMPAS shards.

    python -m optiforge.algorithms.diverse.launch --nodes 4 --topology ring --method diverse
    torchrun --nproc_per_node 4 -m optiforge.algorithms.diverse.launch --nodes 4 --topology ring

Without torchrun's environment the command spawns `--nodes` local processes itself
(torch.multiprocessing, a fresh TCP rendezvous on 127.0.0.1). Each process loads the CSV, keeps
only its own shard, sums the shards' moments once (all-reduce) for the exact reference saddle,
then runs the method with point-to-point gossip (gloo on CPU, NCCL with --backend nccl on GPUs).
Rank 0 logs progress, ends with one summary line (squared distance to the saddle relative to
the start, rounds, oracle calls per node, whether --target was reached) and writes the history
as JSON to --output.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
from dataclasses import fields
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import Tensor

from optiforge.algorithms.diverse.communicator import PeerCommunicator
from optiforge.algorithms.diverse.data import load_compas_regression, split_shards
from optiforge.algorithms.diverse.method import NodeMethod
from optiforge.algorithms.diverse.runner import run, summary_line
from optiforge.algorithms.diverse.saddle import SaddleReference, shard_moments
from optiforge.algorithms.diverse.settings import RunSettings
from optiforge.algorithms.diverse.topology import make_topology

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "data" / "compas" / "compas.csv"
DEFAULT_TARGET = 1e-8


def distributed_reference(
    settings: RunSettings, features: Tensor, targets: Tensor
) -> SaddleReference:
    """The exact reference from every rank's shard moments (one all-reduce, at setup)."""
    gram, cross, square, count = shard_moments(features, targets)
    packed = torch.cat([gram.flatten(), cross, square[None], torch.tensor([count]).to(cross)])
    dist.all_reduce(packed)
    dim = cross.shape[0]
    gram, cross = packed[: dim * dim].reshape(dim, dim), packed[dim * dim : dim * dim + dim]
    square, count = packed[-2], int(packed[-1])
    return SaddleReference.from_sums(
        gram.cpu(), cross.cpu(), square.cpu(), count, settings.lambda_x, settings.lambda_y
    )


def distributed_run(
    settings: RunSettings, features: Tensor, targets: Tensor
) -> tuple[list[dict], NodeMethod]:
    """This rank's part of a run, given its own shard [1, n, d], [1, n]; every rank returns the
    same history (rank 0 prints it)."""
    topology = make_topology(
        settings.topology, settings.nodes, settings.edge_probability, settings.seed
    )
    communicator = PeerCommunicator(topology)
    reference = distributed_reference(settings, features, targets)
    method = settings.build(features, targets, communicator)
    log = print_progress if dist.get_rank() == 0 else None
    return run(method, reference, settings.iterations, settings.log_every, log), method


def print_progress(row: dict) -> None:
    """One progress line (rank 0)."""
    print(
        f"iter {row['iteration']:6d}  rounds {row['communication']:7d}  "
        f"oracle/node {row['evaluations_per_node']:10.0f}  |zbar-z*|^2 {row['distance']:.3e}  "
        f"gap {row['gap']:.3e}  consensus {row['consensus']:.2e}",
        flush=True,
    )


def rank_main(
    settings: RunSettings,
    data: Path,
    by_target: bool,
    output: Path | None,
    target: float = DEFAULT_TARGET,
) -> None:
    """Load this rank's shard, run, and let rank 0 print the summary and write the JSON."""
    rank = dist.get_rank()
    features, targets = load_compas_regression(data)
    features, targets = split_shards(features, targets, settings.nodes, settings.seed, by_target)
    device = (
        torch.device("cuda", rank % torch.cuda.device_count())
        if dist.get_backend() == "nccl"
        else "cpu"
    )
    features, targets = features[rank : rank + 1].to(device), targets[rank : rank + 1].to(device)
    history, method = distributed_run(settings, features, targets)
    if rank == 0:
        print(summary_line(history, target), flush=True)
    if rank == 0 and output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        record = {"settings": settings.as_dict(), "by_target": by_target, "history": history}
        output.write_text(json.dumps(record, indent=1))


def spawned(
    rank: int,
    settings: RunSettings,
    data: Path,
    by_target: bool,
    output: Path | None,
    port: int,
    backend: str,
    target: float = DEFAULT_TARGET,
) -> None:
    """Entry of a locally spawned rank."""
    torch.set_num_threads(1)
    dist.init_process_group(
        backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=settings.nodes
    )
    try:
        rank_main(settings, data, by_target, output, target)
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line: every `RunSettings` field plus data, shards, output and backend."""
    parser = argparse.ArgumentParser(
        prog="python -m optiforge.algorithms.diverse.launch", description=__doc__.splitlines()[0]
    )
    for field in fields(RunSettings):
        flag = "--" + field.name.replace("_", "-")
        kind = {"int": int, "str": str, "bool": bool}.get(str(field.type), float)
        if field.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=field.default)
        else:
            parser.add_argument(flag, type=kind, default=field.default)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--by-target", action="store_true", help="heterogeneous shards")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    parser.add_argument(
        "--target",
        type=float,
        default=DEFAULT_TARGET,
        help="squared distance to the saddle, relative to the start, that the summary checks",
    )
    args = parser.parse_args(argv)
    if not 0 < args.target < 1:
        parser.error(f"--target: must be in (0, 1), got {args.target}")
    if not args.data.is_file():
        parser.error(f"--data: no such file: {args.data}")
    try:
        args.settings = RunSettings(**{f.name: getattr(args, f.name) for f in fields(RunSettings)})
    except ValueError as error:  # the settings' own checks, before any process starts
        parser.error(f"--{str(error).replace('_', '-')}")
    return args


def main(argv: list[str] | None = None) -> None:
    """Under torchrun join its process group; otherwise spawn `--nodes` local ranks."""
    args = parse(argv)
    settings = args.settings
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        dist.init_process_group(args.backend)
        try:
            rank_main(settings, args.data, args.by_target, args.output, args.target)
        finally:
            dist.destroy_process_group()
        return
    mp.spawn(
        spawned,
        args=(
            settings,
            args.data,
            args.by_target,
            args.output,
            free_port(),
            args.backend,
            args.target,
        ),
        nprocs=settings.nodes,
        join=True,
    )


if __name__ == "__main__":
    main()
