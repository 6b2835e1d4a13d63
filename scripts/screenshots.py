"""Take a screenshot of every page of a running Candor in headless Chromium (for the README).

Usage: ``python scripts/screenshots.py [BASE_URL] [OUT_DIR] [NAME,NAME...]`` (default http://127.0.0.1:8050,
docs/screenshots, every page).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.e2e.browser import chromium_driver, wait_for_figures  # noqa: E402

PAGES = [("overview", "/", 0), ("descriptive", "/descriptive?beeswarm=on", 4), ("surrogate", "/surrogate", 1),
         ("persuasive", "/persuasive", 3), ("attention", "/attention", 4), ("text", "/text", 4),
         ("performance", "/performance", 4),
         ("dependence", "/dependence", 2),
         ("cohorts", "/cohorts?cohort=mean+radius+%3E+15", 2),
         ("whatif", "/descriptive?row=128&edit=worst%20concave%20points=0.291", 4)]

OPEN = {"whatif": "document.querySelector('.whatif-editor summary').click();"}
"""What to click on a page before its screenshot (the what-if editor draws its controls when opened)."""


def main(base: str = "http://127.0.0.1:8050", out: str = "docs/screenshots", only: str = "") -> None:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = set(filter(None, only.split(",")))
    with chromium_driver(width=1400, height=1000) as driver:
        for name, path, n_figures in PAGES:
            if wanted and name not in wanted:
                continue
            driver.get(base + path)
            wait_for_figures(driver, timeout=60, minimum=n_figures)
            time.sleep(1.0)
            if name in OPEN:
                driver.execute_script(OPEN[name])
                time.sleep(2.0)
            height = driver.execute_script("return document.body.scrollHeight")
            driver.set_window_size(1400, min(max(height + 40, 900), 2600))
            time.sleep(0.5)
            driver.save_screenshot(str(out_dir / f"{name}.png"))
            print(f"wrote {out_dir / name}.png")


if __name__ == "__main__":
    main(*sys.argv[1:])
