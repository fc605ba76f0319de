"""Install the top-level folders under one import namespace: `optiforge.<folder>`.

The repository keeps `optimizers/`, `callbacks/`, ... at its top level; installed, they are
`optiforge.optimizers`, `optiforge.callbacks`, ... so that optiforge never shadows (or is
shadowed by) a user's own `optimizers.py` or `callbacks.py`. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = ("lightning_modules", "datamodules", "callbacks", "optimizers", "problems", "algorithms")

setup(
    packages=["optiforge"]
    + [f"optiforge.{name}" for name in find_packages(include=[f"{f}*" for f in FOLDERS])],
    package_dir={"optiforge": "optiforge"} | {f"optiforge.{folder}": folder for folder in FOLDERS},
)
