"""Headless Debian Chromium through Selenium with the system chromedriver (nothing is downloaded).

A missing browser skips locally and fails in CI (`BRAIN_REQUIRE_BROWSER=1`, set by `.ci/run`), like the
registry tests' `BRAIN_REQUIRE_REGISTRY=1`. JavaScript is switched off: the review UI must work without it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def require_browser() -> None:
    """Skip (locally) or fail (CI) when Chromium, its driver or Selenium is missing."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (pip install -e '.[dev]')")
    if missing:
        reason = f"{', '.join(missing)} not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("BRAIN_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A headless Chromium with JavaScript disabled, a fixed window, its own profile directory."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", f"--user-data-dir={tmp_path / 'profile'}", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: Any, directory: Path, name: str) -> Path:
    """A full-page PNG kept under the test's directory (and copied to $BRAIN_SCREENSHOTS_DIR when set)."""
    directory.mkdir(parents=True, exist_ok=True)
    height = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]["height"]
    driver.set_window_size(1280, min(max(int(height) + 40, 600), 4000))
    path = directory / f"{name}.png"
    assert driver.save_screenshot(str(path))
    target = os.environ.get("BRAIN_SCREENSHOTS_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)
    driver.set_window_size(1280, 1000)
    return path
