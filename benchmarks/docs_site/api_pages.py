"""The API reference pages: one per code folder, rendered by mkdocstrings from the docstrings.

A folder whose `__init__` exports names (`__all__`) is documented as one object; a folder of
subpackages (problems, algorithms) as one section per subpackage and per public module, so a
new subpackage appears without editing any page.
"""

from __future__ import annotations

from pathlib import Path

FOLDERS = {
    "optimizers": "Optimizers",
    "callbacks": "Callbacks",
    "lightning_modules": "LightningModules",
    "datamodules": "DataModules",
    "problems": "Problems",
    "algorithms": "Algorithms",
}


def api_uri(folder: str) -> str:
    """The site source address of a folder's API page."""
    return f"api/{folder}.md"


def api_page(root: Path, folder: str) -> str:
    """The markdown of one folder's API page: mkdocstrings directives, one per documented part."""
    title = f"# {FOLDERS[folder]} (`optiforge.{folder}`)\n\n"
    if exports(root / folder / "__init__.py"):
        return title + f"::: optiforge.{folder}\n"
    return title + "".join(
        f"::: optiforge.{folder}.{name}\n    options:\n      show_root_heading: true\n"
        f"      heading_level: 2\n\n"
        for name in parts(root / folder)
    )


def parts(folder: Path) -> list[str]:
    """The public subpackages and modules of a folder, by name."""
    names = [
        entry.stem if entry.suffix == ".py" else entry.name
        for entry in sorted(folder.iterdir())
        if not entry.name.startswith("_")
        and (entry.suffix == ".py" or (entry / "__init__.py").is_file())
    ]
    return names


def exports(init: Path) -> bool:
    """Whether a package's `__init__` lists exported names."""
    return "__all__" in init.read_text()
