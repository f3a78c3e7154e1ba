"""The live view, ``GET /ui``: the page is served without the key (it holds no data), and in a
real headless browser (Chromium, driven by Playwright) it streams an edit from ``/v1/edits``:
generated and drafted tokens and copied lines marked, the diff and the timings at the end.

The browser test runs where Playwright and a Chromium are installed (``make ui-test`` installs
both: Debian's ``chromium`` package and the ``playwright`` wheel); elsewhere it skips, saying so.
``COPYGRAM_UI_SCREENSHOT=PATH`` saves its screenshot there; ``make ui-screenshot`` writes
docs/ui.png from a real model's edit (scripts/ui_screenshot.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.serve.conftest import DOCUMENT, EDITED, MakeClient

pytestmark = pytest.mark.serve


def test_the_page_is_served_without_the_key_and_the_api_still_needs_it(
        make_client: MakeClient) -> None:
    client = make_client(api_key="sekret")
    page = client.get("/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/v1/edits" in page.text and "<script>" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/v1/models").status_code == 401
    assert client.post("/ui").status_code == 405


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def test_a_browser_streams_an_edit_and_shows_the_diff(live_server: str, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright: make ui-test")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("needs a Chromium (apt-get install chromium): make ui-test")
    source = tmp_path / "f.py"
    source.write_text(DOCUMENT, encoding="utf-8")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium,
                                             args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(f"{live_server}/ui")
            page.set_input_files("#file", str(source))
            # Locator waits: the page's Content-Security-Policy forbids the eval that
            # wait_for_function would need.
            sync_api.expect(page.locator("#document")).to_have_value(DOCUMENT)
            page.fill("#instruction", "Return x + 2.")
            page.click("#run")
            sync_api.expect(page.locator("#status")).to_have_text("done", timeout=30_000)
            # The program streamed in: generated text, and the copies as copies.
            stream = page.inner_text("#stream")
            assert "return x + 2" in stream
            assert page.locator("#stream .copy").count() == 2
            assert page.locator("#stream .gen").count() > 0
            assert "copied lines 3-5" in stream
            # The diff and the timings.
            assert page.inner_text("#diff .del").strip() == "-     return x + 1"
            assert page.inner_text("#diff .add").strip() == "+     return x + 2"
            marks = page.locator("#diff span").evaluate_all(
                "spans => spans.map(s => s.textContent[0])")
            assert marks.index("-") < marks.index("+")  # a unified diff's order
            assert "forwards" in page.inner_text("#summary")
            assert page.get_attribute("#download", "download") == "f.py"
            assert not page.is_hidden("#download")
            shot = os.environ.get("COPYGRAM_UI_SCREENSHOT")
            page.screenshot(path=shot or str(tmp_path / "ui.png"), full_page=True)
        finally:
            browser.close()
    assert EDITED != DOCUMENT
