"""Install the top-level folders under one import namespace: `optiforge.<folder>`.

The repository keeps `optimizers/`, `callbacks/`, ... at its top level; installed, they are
`optiforge.optimizers`, `optiforge.callbacks`, ... so that optiforge never shadows (or is
shadowed by) a user's own `optimizers.py` or `callbacks.py`. `configs/` and `data/` go along as
package data (`optiforge/configs`, `optiforge/data`), so the installed CLI finds the packaged
configs and the shipped data from any folder. The build happens in a fresh temporary folder,
removed when the build ends: nothing is written into the clone and no stale file of an earlier
build gets in. Everything else is in pyproject.toml.
"""

import atexit
import shutil
import tempfile

from setuptools import find_packages, setup

FOLDERS = ("lightning_modules", "datamodules", "callbacks", "optimizers", "problems", "algorithms")
DATA_FOLDERS = ("configs", "data")
BUILD_DIR = tempfile.mkdtemp(prefix="optiforge-build-")
atexit.register(shutil.rmtree, BUILD_DIR, True)

setup(
    packages=["optiforge"]
    + [f"optiforge.{name}" for name in find_packages(include=[f"{f}*" for f in FOLDERS])]
    + [f"optiforge.{folder}" for folder in DATA_FOLDERS],
    package_dir={"optiforge": "optiforge"}
    | {f"optiforge.{folder}": folder for folder in (*FOLDERS, *DATA_FOLDERS)},
    options={"build": {"build_base": BUILD_DIR}, "egg_info": {"egg_base": BUILD_DIR}},
)
