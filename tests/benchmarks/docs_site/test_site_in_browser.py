"""The documentation site, built strictly and served locally, in headless Chromium: every
navigation link loads, search finds SAM, and the reproduction report renders its table.

`.ci/run` builds the site once and names it in OPTIFORGE_DOCS_SITE; without it the test builds
its own. Needs the docs extra (`pip install -e '.[docs]'`) and Debian's chromium + chromium-driver
(`.ci/run` installs both); skipped, saying which is missing, where they are not installed.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from optiforge.benchmarks.reproduction.registry import CLAIMS

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# The network is closed: no background services, updates, sync or QUIC probes.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)
WAIT_S = 30
# A page entry of mkdocs.yml's nav; a quoted title may hold a colon.
NAV_PAGE = re.compile(r'^\s*- (?:"[^"]*"|[^:"]+): (\S+\.md)$', re.MULTILINE)
ARTICLE_TITLE = re.compile(r"<article\b[^>]*>.*?<h1\b", re.S)  # a page's title, in its HTML


def missing_tools() -> str | None:
    """Why the browser test cannot run here, or None."""
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python", "selenium"):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            return f"{module} is not installed: pip install -e '.[docs]'"
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not tool.is_file():
            return f"{tool} is missing: apt-get install -y chromium chromium-driver"
    return None


def build_site(folder: Path) -> Path:
    """`mkdocs build --strict` of this tree into `folder` (fails the test on any warning)."""
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-5000:]
    return folder


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves the built site without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """Drop the access log."""


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The built site served on localhost: the one `.ci/run` built (`OPTIFORGE_DOCS_SITE`), or
    a fresh strict build into a temporary folder."""
    reason = missing_tools()
    if reason:
        pytest.skip(reason)
    built = os.environ.get("OPTIFORGE_DOCS_SITE")
    site = Path(built) if built else build_site(tmp_path_factory.mktemp("site"))
    assert (site / "index.html").is_file(), f"no built site in {site}"
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(site_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Debian Chromium driven by its matching chromedriver, with a fresh profile."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    options.page_load_strategy = "eager"  # the DOM is enough; no waiting for every image
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def test_every_navigation_link_loads(browser: Any, site_url: str) -> None:
    """Each page of the primary navigation answers 200 with a page title (h1) in its article;
    the browser renders every fifth of them (and the last) with that title."""
    from selenium.webdriver.common.by import By

    browser.get(site_url + "index.html")
    links = browser.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary a.md-nav__link[href]")
    pages = sorted({link.get_attribute("href").split("#")[0] for link in links})
    assert len(pages) == len(NAV_PAGE.findall((ROOT / "mkdocs.yml").read_text()))
    for page in pages:
        with urllib.request.urlopen(page, timeout=10) as response:
            assert response.status == 200, page
            assert ARTICLE_TITLE.search(response.read().decode(errors="replace")), page
    for page in [*pages[::5], pages[-1]]:
        browser.get(page)
        assert browser.find_elements(By.CSS_SELECTOR, "article h1"), page
        assert "404" not in browser.title, page


def test_search_finds_sam(browser: Any, site_url: str) -> None:
    """Typing SAM in the search box lists results, one of them about SAM."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.wait import WebDriverWait

    browser.get(site_url + "index.html")
    box = WebDriverWait(browser, WAIT_S).until(
        ec.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input"))
    )
    box.click()
    box.send_keys("SAM")
    items = WebDriverWait(browser, WAIT_S).until(
        ec.presence_of_all_elements_located((By.CSS_SELECTOR, ".md-search-result__item"))
    )
    assert items
    assert any("SAM" in item.text for item in items)


def test_reproduction_report_renders_its_table(browser: Any, site_url: str, tmp_path: Path) -> None:
    """The report's table has one row per registered claim; a screenshot of it is saved."""
    from selenium.webdriver.common.by import By

    browser.get(site_url + "reproduction.html")
    table = browser.find_element(By.CSS_SELECTOR, "article table")
    headers = [cell.text.strip() for cell in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert (
        headers[:2] == ["system", "paper"] and "verdict (rule)" in headers and "commit" in headers
    )
    assert len(table.find_elements(By.CSS_SELECTOR, "tbody tr")) == len(CLAIMS)
    shot = tmp_path / "reproduction.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
