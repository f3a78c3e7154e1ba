"""docs/ui.png: the live view (``copygram serve``'s ``/ui``) after a real edit, in headless
Chromium: ``make ui-screenshot`` (after ``make ui-test`` has installed Chromium and Playwright).

Starts ``copygram serve`` with the model named (default: Qwen2.5-Coder-1.5B), opens the page,
picks ``examples/stats.py``, asks for the median fix and waits for the edit to finish, then
saves a screenshot of the whole page and prints the page's summary.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTION = "Fix median: for an even count it must return the mean of the two middle values."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "ui.png")
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs Chromium: make ui-test installs it")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "copygram", "serve", "--model", args.model,
                               "--port", str(port), "--log-level", "warning"])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("copygram serve did not come up") from None
                time.sleep(0.5)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1360, "height": 900})
            page.goto(f"{url}/ui")
            page.set_input_files("#file", str(ROOT / "examples" / "stats.py"))
            expect(page.locator("#document")).not_to_have_value("")
            page.fill("#instruction", INSTRUCTION)
            page.click("#run")
            expect(page.locator("#status")).to_have_text("done", timeout=600_000)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=True)
            print(page.inner_text("#summary"))
            print(page.inner_text("#diff"))
            browser.close()
        print(f"ui-screenshot: wrote {args.out}")
        return 0
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    sys.exit(main())
