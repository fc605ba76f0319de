"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

- README.md is the home page, and the repository files the pages link to outside docs/ are
  served at `repo/<path>`: read from the repository at build time, never copied into docs/.
- `reproduction.md` is generated from the claims registry and the published results, and
  `api/<folder>.md` from the code folders (benchmarks/docs_site/api_pages.py).
- mkdocstrings reads the code folders as `optiforge.<folder>`: a temporary tree of symbolic
  links, `optiforge/<folder> -> <folder>`, lays the namespace out as setuptools installs it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `mkdocs build` does not put the working folder on sys.path
    sys.path.insert(0, str(ROOT))

from optiforge.benchmarks.docs_site.api_pages import FOLDERS, api_page, api_uri  # noqa: E402
from optiforge.benchmarks.docs_site.repo_links import (  # noqa: E402
    FOLDER_PAGE,
    HOME,
    outside_targets,
    rewrite,
    site_uri,
)
from optiforge.benchmarks.reproduction.report import page_markdown  # noqa: E402

REPRODUCTION = "reproduction.md"
_api_tree: Path | None = None


@event_priority(100)  # before mkdocstrings creates its Python handler
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Point mkdocstrings at a namespace tree of links to the code folders."""
    global _api_tree
    _api_tree = Path(tempfile.mkdtemp(prefix="optiforge-api-"))
    package = _api_tree / "optiforge"
    package.mkdir()
    for entry in [*(ROOT / "optiforge").glob("*.py"), *(ROOT / name for name in FOLDERS)]:
        (package / entry.name).symlink_to(entry)
    python = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    python["paths"] = [str(_api_tree)]
    return config


def on_shutdown() -> None:
    """Remove the temporary namespace tree."""
    if _api_tree is not None:
        shutil.rmtree(_api_tree, ignore_errors=True)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the home page, the reproduction report, the API pages and linked repository files."""
    files.append(File.generated(config, "index.md", abs_src_path=str(ROOT / HOME)))
    files.append(File.generated(config, REPRODUCTION, content=page_markdown()))
    for folder in FOLDERS:
        files.append(File.generated(config, api_uri(folder), content=api_page(ROOT, folder)))
    texts = {repo_path(file.src_uri): file.content_string for file in files.documentation_pages()}
    pending = list(texts.items())
    seen = set(texts)
    while pending:
        page, text = pending.pop()
        for path in outside_targets(ROOT, page, text) - seen:
            seen.add(path)
            if path.endswith("/"):
                listing = folder_listing(path)
                files.append(File.generated(config, site_uri(path) + FOLDER_PAGE, content=listing))
                pending.append((path + FOLDER_PAGE, listing))
                continue
            files.append(File.generated(config, site_uri(path), abs_src_path=str(ROOT / path)))
            if path.endswith(".md"):
                pending.append((path, (ROOT / path).read_text()))
    return files


def folder_listing(folder: str) -> str:
    """A page listing the files of a repository folder, each linked."""
    names = sorted(entry.name for entry in (ROOT / folder).iterdir() if entry.is_file())
    return f"# `{folder}`\n\n" + "".join(f"- [{name}]({name})\n" for name in names)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Links written for the repository, pointed at the same files on the site."""
    return rewrite(repo_path(page.file.src_uri), markdown)


def repo_path(src_uri: str) -> str:
    """The repository path of a page's source (the inverse of `site_uri`)."""
    if src_uri == "index.md":
        return HOME
    if src_uri.startswith("repo/"):
        return src_uri[len("repo/") :]
    return f"docs/{src_uri}"
