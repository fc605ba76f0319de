"""Reads the records of an offline W&B run file (`run-<id>.wandb`) without the network.

The file is W&B's 7-byte header followed by LevelDB log-format blocks of 32 KiB; each chunk has
a 7-byte header (crc32, little-endian length, type: 1 full, 2 first, 3 middle, 4 last) and the
reassembled payloads are `wandb_internal_pb2.Record` protobufs.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from wandb.proto import wandb_internal_pb2

BLOCK = 32768
HEADER = 7


def read_records(path: Path) -> list[wandb_internal_pb2.Record]:
    """All records of the run file, in order."""
    data = path.read_bytes()
    if not data.startswith(b":W&B"):
        raise ValueError(f"{path} is not a W&B run file")
    records, pending, offset = [], b"", HEADER
    while offset + HEADER <= len(data):
        left_in_block = BLOCK - offset % BLOCK
        if left_in_block < HEADER:
            offset += left_in_block
            continue
        _, length, kind = struct.unpack("<IHB", data[offset : offset + HEADER])
        payload = data[offset + HEADER : offset + HEADER + length]
        offset += HEADER + length
        if kind == 0:
            continue
        pending = payload if kind in (1, 2) else pending + payload
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
    return records


def history_values(records: list[wandb_internal_pb2.Record], key: str) -> list[float]:
    """Every logged value of metric `key`, in logging order."""
    values = []
    for record in records:
        if record.WhichOneof("record_type") != "history":
            continue
        for item in record.history.item:
            name = item.key or "/".join(item.nested_key)
            if name == key:
                values.append(float(json.loads(item.value_json)))
    return values


def config_keys(records: list[wandb_internal_pb2.Record]) -> set[str]:
    """Top-level keys of every config update."""
    return {
        item.key or item.nested_key[0]
        for record in records
        if record.WhichOneof("record_type") == "config"
        for item in record.config.update
    }


def artifact_names(records: list[wandb_internal_pb2.Record]) -> list[str]:
    """Names of the artifacts the run logged."""
    return [r.artifact.name for r in records if r.WhichOneof("record_type") == "artifact"]
