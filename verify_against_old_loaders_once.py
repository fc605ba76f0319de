"""One-off check (kept in history only): the OLD loaders (policy_weights.load_policy /
read_weights and kv_lm.weights.load_weights as committed at OLD) on the OLD files give
state dicts byte-identical to the NEW loaders on the converted files."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import types
from pathlib import Path

from optiforge.lightning_modules.kv_lm.weights import load_weights
from optiforge.lightning_modules.mtlkd.policy_weights import build_module, load_policy, read_weights

OLD = sys.argv[1]


def git_show(path: str) -> bytes:
    return subprocess.run(["git", "show", f"{OLD}:{path}"], capture_output=True, check=True).stdout


def old_module(path: str) -> types.ModuleType:
    module = types.ModuleType(f"old_{Path(path).stem}")
    module.__file__ = str(Path(path).resolve())
    exec(compile(git_show(path), path, "exec"), module.__dict__)
    return module


def same(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(
        a[k].dtype == b[k].dtype
        and a[k].shape == b[k].shape
        and a[k].contiguous().numpy().tobytes() == b[k].contiguous().numpy().tobytes()
        for k in a
    )


old_pw = old_module("lightning_modules/mtlkd/policy_weights.py")
old_kv = old_module("lightning_modules/kv_lm/weights.py")
with tempfile.TemporaryDirectory() as scratch:
    for new_path in sorted(Path("lightning_modules/mtlkd/weights").glob("*.pt")):
        old_path = Path(scratch) / new_path.name
        old_path.write_bytes(git_show(str(new_path)))
        old_blob = old_pw.read_weights(old_path)
        new = read_weights(new_path)
        assert same(old_blob["state_dict"], new.state_dict), new_path
        assert same(old_pw.load_policy(old_path).state_dict(), load_policy(new_path).state_dict())
        assert old_blob["hyper_parameters"] == new.init_args, new_path
        assert old_blob["variants"] == new.metadata["variants"], new_path
        built = build_module(new_path).state_dict()
        assert same({k: built[k] for k in old_blob["state_dict"]}, old_blob["state_dict"])
        print(f"{new_path.name}: old and new loaders agree byte for byte")
    kv = "lightning_modules/kv_lm/weights/llama_char_tinyshakespeare.pt"
    old_path = Path(scratch) / "kv.pt"
    old_path.write_bytes(git_show(kv))
    old_model, old_fields = old_kv.load_weights(old_path)
    new_model, metadata = load_weights(kv)
    assert same(old_model.state_dict(), new_model.state_dict())
    assert all(old_fields[k] == metadata[k] for k in ("vocab", "epoch", "global_step", "val_bpc"))
    assert old_fields["hyper_parameters"] == dict(new_model.hparams)
    print("llama_char_tinyshakespeare.pt: old and new loaders agree byte for byte")
