"""The restricted unpickler: plain data and numpy arrays load, any other global is refused."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from optiforge.problems.vrp.restricted_pickle import load_pickle


class _Shell:
    """Unpickling it would run `touch <marker>` through os.system."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


class _Builder:
    """Unpickling it would build another object (a class of the test module)."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return _Marker, ()


class _Marker:
    """An arbitrary class: not plain data."""


def _write(path: Path, value: object, protocol: int = pickle.HIGHEST_PROTOCOL) -> Path:
    path.write_bytes(pickle.dumps(value, protocol=protocol))
    return path


def test_os_system_is_refused_and_never_runs(tmp_path: Path) -> None:
    """A pickle whose __reduce__ calls os.system is refused by name; the command never runs."""
    marker = tmp_path / "ran"
    path = _write(tmp_path / "evil.pkl", [1.0, _Shell(marker)])
    with pytest.raises(ValueError, match=r"evil\.pkl: refused to unpickle global ") as error:
        load_pickle(path)
    assert "system" in str(error.value) and "\n" not in str(error.value)
    assert not marker.exists()


def test_eval_and_classes_are_refused(tmp_path: Path) -> None:
    """builtins.eval and a class of another module are refused, each named in one line."""
    evil = tmp_path / "eval.pkl"
    evil.write_bytes(b"cbuiltins\neval\n(S'1+1'\ntR.")
    with pytest.raises(ValueError, match=r"eval\.pkl: refused to unpickle global builtins\.eval"):
        load_pickle(evil)
    other = _write(tmp_path / "class.pkl", {"a": _Builder()})
    with pytest.raises(ValueError, match=r"global tests\..*\._Marker \("):
        load_pickle(other)


def test_protocol2_bytes_only_through_latin1(tmp_path: Path) -> None:
    """Protocol 2 writes bytes as _codecs.encode(text, 'latin1'); another codec is refused."""
    path = _write(tmp_path / "bytes.pkl", [b"\x00\xffab"], protocol=2)
    assert load_pickle(path) == [b"\x00\xffab"]
    rot13 = tmp_path / "rot13.pkl"
    rot13.write_bytes(b"c_codecs\nencode\n(S'abc'\nS'rot13'\ntR.")
    with pytest.raises(ValueError, match=r"rot13\.pkl: not a readable pickle .*rot13"):
        load_pickle(rot13)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_plain_data_and_numpy_round_trip(tmp_path: Path, protocol: int) -> None:
    """Containers, numbers, numpy arrays (contiguous or not), scalars and dtypes come back
    equal, with their numpy types, under every protocol numpy pickles with."""
    value = {
        "tuple": (1, -2.5, None, True, "s", b"b", complex(1, 2)),
        "set": {1, 2},
        "frozen": frozenset({3}),
        "f64": np.float64(10.115069619339035),
        "i64": np.int64(-7),
        "dtype": np.dtype("f4"),
        "array": np.arange(6.0).reshape(2, 3),
        "strided": np.arange(10, dtype=np.int32)[::3],
        "bools": np.array([True, False]),
    }
    back = load_pickle(_write(tmp_path / "data.pkl", value, protocol))
    assert isinstance(back, dict) and back.keys() == value.keys()
    assert back["tuple"] == value["tuple"] and back["set"] == {1, 2}
    assert back["frozen"] == frozenset({3})
    assert type(back["f64"]) is np.float64 and back["f64"] == value["f64"]
    assert type(back["i64"]) is np.int64 and back["i64"] == -7
    assert back["dtype"] == np.dtype("f4")
    for key in ("array", "strided", "bools"):
        assert back[key].dtype == value[key].dtype
        np.testing.assert_array_equal(back[key], value[key])


@settings(max_examples=30, deadline=None)
@given(
    array=hnp.arrays(
        dtype=st.sampled_from([np.float64, np.float32, np.int64, np.bool_]),
        shape=hnp.array_shapes(max_dims=3, max_side=5),
    ),
    protocol=st.integers(2, 5),
)
def test_any_numeric_array_round_trips(tmp_path_factory, array: np.ndarray, protocol: int) -> None:
    """Numeric numpy arrays of any shape and dtype load bit for bit (NaN included)."""
    path = tmp_path_factory.mktemp("arrays") / "a.pkl"
    back = load_pickle(_write(path, [array], protocol))
    assert back[0].dtype == array.dtype and back[0].shape == array.shape
    assert back[0].tobytes() == array.tobytes()


def test_missing_and_corrupt_files_give_one_line(tmp_path: Path) -> None:
    """A missing file and a truncated pickle each end in one ValueError naming the file."""
    with pytest.raises(ValueError, match=r"nothing\.pkl: no such file$"):
        load_pickle(tmp_path / "nothing.pkl")
    cut = tmp_path / "cut.pkl"
    cut.write_bytes(pickle.dumps([1.0, 2.0, np.arange(3.0)])[:-5])
    with pytest.raises(ValueError, match=r"cut\.pkl: not a readable pickle") as error:
        load_pickle(cut)
    assert "\n" not in str(error.value)
