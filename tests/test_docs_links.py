"""Every relative link in README.md and docs/*.md points to an existing file and heading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SYSTEM_PAGES = [
    "classifier",
    "char_lm",
    "vrp",
    "mtlkd",
    "equality_constrained",
    "equivariant",
    "fsnet",
    "hephaestus",
    "optimizers",
    "statistical_tools",
    "submodular_streaming",
    "learning_rules",
    "diverse",
    "covering",
    "zeroth_order",
    "gradient_hessian_tradeoff",
    "neural_es",
    "kv_compression",
]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def links(text: str) -> list[str]:
    """Targets of the markdown links and images in `text`, code spans and blocks left out."""
    return LINK.findall(CODE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of every heading of a markdown page (outside code blocks)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def broken(page: Path) -> list[str]:
    """Relative links of `page` whose file, or heading in a markdown file, does not exist."""
    bad = []
    for target in links(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto: ... are not files of the project
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in anchors(file)):
            bad.append(target)
    return bad


def test_link_parser_finds_links_and_images_outside_code() -> None:
    """Links and images are found; a link inside a code span or block is not one."""
    text = "[a](x.md) ![b](figures/c.png) `[d](no.md)`\n```\n[e](no.md)\n```\n[f](https://g.h)"
    assert links(text) == ["x.md", "figures/c.png", "https://g.h"]
    assert slug("Using `train.py`") == "using-trainpy"
    assert slug("FSNet: feasibility-seeking solver") == "fsnet-feasibility-seeking-solver"


def test_broken_links_are_reported(tmp_path: Path) -> None:
    """A missing file and a missing heading are reported; a good link and a web link are not."""
    (tmp_path / "b.md").write_text("# Scion family\n")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#scion-family) [no](c.md) [nohead](b.md#sam) [web](https://x.y)")
    assert broken(page) == ["c.md", "b.md#sam"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_resolves(page: Path) -> None:
    """README.md and every docs page link only to files and headings that exist."""
    assert broken(page) == []


def test_readme_links_every_system_page() -> None:
    """The README's overview table links each system's page, and each page exists."""
    targets = links((ROOT / "README.md").read_text())
    for name in SYSTEM_PAGES:
        assert f"docs/{name}.md" in targets
        assert (ROOT / "docs" / f"{name}.md").is_file()
