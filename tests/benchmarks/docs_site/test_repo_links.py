"""Links written for the repository point at the same files on the documentation site."""

from __future__ import annotations

from pathlib import Path

from optiforge.benchmarks.docs_site.api_pages import api_page, parts
from optiforge.benchmarks.docs_site.repo_links import outside_targets, rewrite, site_uri


def test_site_addresses() -> None:
    """README is the home page, docs/ is the site root, anything else lives under repo/."""
    assert site_uri("README.md") == "index.md"
    assert site_uri("docs/fsnet.md") == "fsnet.md"
    assert site_uri("docs/figures/a.png") == "figures/a.png"
    assert site_uri("data/README.md") == "repo/data/README.md"


def test_readme_links_lose_their_docs_prefix() -> None:
    """The home page's `docs/x.md#a` becomes `x.md#a`; data/README.md moves under repo/."""
    text = "[FSNet](docs/fsnet.md#speed) and [data](data/README.md) and [web](https://a.b/c.md)"
    assert rewrite("README.md", text) == (
        "[FSNet](fsnet.md#speed) and [data](repo/data/README.md) and [web](https://a.b/c.md)"
    )


def test_docs_links_out_of_docs_and_to_folders() -> None:
    """From docs/: ../README.md -> index.md, results under repo/, a folder to its listing page."""
    text = (
        "[r](../README.md#layout) [t](../benchmarks/results/x.md) [c](../configs/gen/) [s](#here)"
    )
    assert rewrite("docs/a.md", text) == (
        "[r](index.md#layout) [t](repo/benchmarks/results/x.md) "
        "[c](repo/configs/gen/index.md) [s](#here)"
    )


def test_a_result_table_links_back_into_docs() -> None:
    """From repo/benchmarks/results/x.md a figure in docs/ is reached with ../../../."""
    text = "![f](../../docs/figures/f.png)"
    assert rewrite("benchmarks/results/x.md", text) == "![f](../../../figures/f.png)"


def test_code_blocks_are_left_alone() -> None:
    """A link-like text in a fenced code block is not rewritten."""
    text = "```\n[x](docs/a.md)\n```\n[y](docs/b.md)\n"
    assert rewrite("README.md", text) == "```\n[x](docs/a.md)\n```\n[y](b.md)\n"


def test_outside_targets_are_existing_files_and_folders(tmp_path: Path) -> None:
    """Only links to existing files or folders outside docs/ are served; README is the home."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "README.md").write_text("# data\n")
    text = "[a](../data/README.md) [b](../data/) [c](../missing.md) [d](../README.md) [e](x.md)"
    assert outside_targets(tmp_path, "docs/p.md", text) == {"data/README.md", "data/"}


def test_api_page_of_a_folder_of_subpackages(tmp_path: Path) -> None:
    """A folder without exports gets one section per public subpackage and module."""
    folder = tmp_path / "problems"
    (folder / "vrp").mkdir(parents=True)
    (folder / "vrp" / "__init__.py").write_text("__all__ = ['Env']\n")
    (folder / "__init__.py").write_text('"""Problems."""\n')
    (folder / "paths.py").write_text("")
    (folder / "_private.py").write_text("")
    (folder / "notes").mkdir()
    assert parts(folder) == ["paths", "vrp"]
    page = api_page(tmp_path, "problems")
    assert page.startswith("# Problems (`optiforge.problems`)\n")
    assert "::: optiforge.problems.paths\n" in page and "::: optiforge.problems.vrp\n" in page
