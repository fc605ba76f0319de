"""Reading a pickle file that someone else wrote without letting it run code.

`pickle.load` calls whatever global a file names (`os.system`, `builtins.eval`, any class), so
a downloaded file can run anything. `load_pickle` reads only plain data: containers (list,
tuple, dict, set), str/bytes, numbers, bool/None, and numpy arrays, scalars and dtypes. Plain
data needs no global at all (it has opcodes of its own); the few globals allowed are the ones
numpy's and Python's own pickling write for that data:

- `numpy.dtype`, `numpy.ndarray` and `multiarray._reconstruct` (arrays, protocols 2-4 and
  non-contiguous arrays), `numeric._frombuffer` (contiguous arrays, protocol 5), and
  `multiarray.scalar` (numpy scalars such as np.float64), under both numpy 1's `numpy.core`
  and numpy 2's `numpy._core` module names;
- `builtins.set`, `frozenset`, `complex` and `bytearray` (how protocols below 4 or 5 write
  them; protocol 2 names the module `__builtin__`);
- `_codecs.encode`, how protocol 2 writes bytes, and only with the latin-1 codec it uses.

Every other global is refused by `find_class` when the unpickler meets it, before it is called
or even imported, with one `ValueError` naming the file and the global.
"""

from __future__ import annotations

import codecs
import io
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np

try:  # numpy >= 2 (and the forward-compatible shim of numpy 1.26)
    from numpy._core import multiarray as _multiarray
    from numpy._core import numeric as _numeric
except ImportError:  # numpy 1.24 / 1.25
    from numpy.core import multiarray as _multiarray  # type: ignore[no-redef]
    from numpy.core import numeric as _numeric  # type: ignore[no-redef]

LATIN1 = ("latin1", "latin-1", "iso-8859-1")


def _latin1_encode(text: str, encoding: str = "latin1") -> bytes:
    """`_codecs.encode` as protocol 2 uses it for bytes; any other codec is refused."""
    if encoding.lower() not in LATIN1:
        raise pickle.UnpicklingError(f"_codecs.encode with codec {encoding!r} (only latin1)")
    return codecs.encode(text, "latin1")


def _numpy_globals() -> dict[tuple[str, str], Callable[..., object]]:
    """numpy's pickling globals under the module names numpy 1 and numpy 2 write."""
    allowed: dict[tuple[str, str], Callable[..., object]] = {
        ("numpy", "dtype"): np.dtype,
        ("numpy", "ndarray"): np.ndarray,
    }
    for core in ("numpy.core", "numpy._core"):
        allowed[(f"{core}.multiarray", "_reconstruct")] = _multiarray._reconstruct
        allowed[(f"{core}.multiarray", "scalar")] = _multiarray.scalar
        allowed[(f"{core}.numeric", "_frombuffer")] = _numeric._frombuffer
    return allowed


ALLOWED_GLOBALS: dict[tuple[str, str], Callable[..., object]] = {
    **_numpy_globals(),
    # protocols 0-2 write Python 2's module name `__builtin__` for Python 2 readers
    **{
        (module, kind.__name__): kind
        for module in ("builtins", "__builtin__")
        for kind in (set, frozenset, complex, bytearray)
    },
    ("_codecs", "encode"): _latin1_encode,
}


class RefusedGlobal(pickle.UnpicklingError):
    """A pickle names a global outside `ALLOWED_GLOBALS`."""


class _RestrictedUnpickler(pickle.Unpickler):
    """An unpickler whose globals come from `ALLOWED_GLOBALS` only (nothing is imported)."""

    def find_class(self, module: str, name: str) -> Callable[..., object]:
        allowed = ALLOWED_GLOBALS.get((module, name))
        if allowed is None:
            raise RefusedGlobal(f"{module}.{name}")
        return allowed


def load_pickle(path: str | Path) -> object:
    """The data in pickle file `path`, read without running code from it.

    Raises one `ValueError` naming the file: missing, refused global (which one), or not a
    readable pickle.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    data = path.read_bytes()
    try:
        return _RestrictedUnpickler(io.BytesIO(data)).load()
    except RefusedGlobal as error:
        raise ValueError(
            f"{path}: refused to unpickle global {error} (only plain data and numpy arrays, "
            "scalars and dtypes are read)"
        ) from None
    except Exception as error:  # a corrupt pickle raises many types (EOFError, KeyError, ...)
        raise ValueError(
            f"{path}: not a readable pickle ({type(error).__name__}: {error})"
        ) from None
