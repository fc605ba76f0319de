"""Where a repository file lives on the documentation site, and links rewritten to match.

The site's pages are README.md (as the home page), docs/*.md, and the repository files those
pages link to outside docs/ (result tables, a model card, a data README), each served at
`repo/<its path in the repository>` (a linked folder as a page listing its files). Pages keep
the links that work on GitHub; the build rewrites each one to the site address of the same
file, so no page's text is copied or edited.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

# A markdown link or image target: `](target)` or `](target "title")`.
LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
FENCE = re.compile(r"^(```|~~~)")
HOME = "README.md"
DOCS = "docs"
OUTSIDE = "repo"
FOLDER_PAGE = "index.md"  # the listing of a linked folder


def is_relative(target: str) -> bool:
    """Whether a link target names a file of the repository (not a web address or an anchor)."""
    return not (re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")))


def site_uri(repo_path: str) -> str:
    """The site's source address of a repository file: README.md -> index.md, docs/x -> x."""
    if repo_path == HOME:
        return "index.md"
    if repo_path.startswith(DOCS + "/"):
        return repo_path[len(DOCS) + 1 :]
    return f"{OUTSIDE}/{repo_path}"


def resolve(page_repo_path: str, target: str) -> tuple[str, str]:
    """The repository path a relative link of a page points to, and its `#anchor` part."""
    path, hash_, anchor = target.partition("#")
    if not path:
        return page_repo_path, hash_ + anchor
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), path))
    return joined, hash_ + anchor


def outside_targets(root: Path, page_repo_path: str, text: str) -> set[str]:
    """Repository files and folders (with a trailing /) outside docs/ that a page links to."""
    found = set()
    for target in link_targets(text):
        if not is_relative(target):
            continue
        path, _ = resolve(page_repo_path, target)
        if path == HOME or path.startswith(DOCS + "/"):
            continue
        if (root / path).is_file():
            found.add(path)
        elif (root / path).is_dir():
            found.add(path + "/")
    return found


def link_targets(text: str) -> list[str]:
    """The link targets of a markdown text outside fenced code blocks."""
    return [match.group(2) for line in prose_lines(text) for match in LINK.finditer(line)]


def prose_lines(text: str) -> list[str]:
    """The lines of a markdown text that are not inside a fenced code block."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def rewrite(page_repo_path: str, text: str) -> str:
    """A page's text with each relative link pointed at the target's site address."""
    page_uri = site_uri(page_repo_path)
    out, fenced = [], False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        if not fenced:
            line = LINK.sub(lambda m: f"{m[1]}{moved(page_repo_path, page_uri, m)}{m[3]}", line)
        out.append(line)
    return "".join(out)


def moved(page_repo_path: str, page_uri: str, match: re.Match[str]) -> str:
    """One link target rewritten relative to the page's site address."""
    target = match.group(2)
    if not is_relative(target):
        return target
    path, anchor = resolve(page_repo_path, target)
    uri = site_uri(path)
    if target.partition("#")[0].endswith("/"):
        uri += "/" + FOLDER_PAGE
    return posixpath.relpath(uri, posixpath.dirname(page_uri) or ".") + anchor
