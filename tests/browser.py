"""A real headless browser for the tests of the pages pfaff writes (report.html,
scene.html) and serves (the live view): Debian's Chromium (``apt-get install chromium
chromium-driver``) driven by Selenium through the chromedriver of the same package.

Where no Chromium is installed the browser tests are skipped, except in CI
(``CI`` set, as ``.ci/run`` does): there they fail, so that they never stop running
unnoticed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from io import BytesIO

import numpy as np
import pytest

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
CHROMEDRIVER = shutil.which("chromedriver")
#: the switches headless Chromium needs as root in a container, with no network of its own
SWITCHES = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--use-angle=swiftshader",  # WebGL (meshcat's three.js) rendered on the CPU
    "--enable-unsafe-swiftshader",
    "--window-size=800,600",
)


def missing() -> str | None:
    """Why no browser test can run here (None when one can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "Selenium is not installed (pip install -e '.[test]')"
    if CHROMIUM is None:
        return "no Chromium (apt-get install chromium chromium-driver)"
    if CHROMEDRIVER is None:
        return "no chromedriver (apt-get install chromium-driver)"
    return None


def need_browser() -> None:
    """Skip the calling test where no browser can run; in CI (``CI`` set) fail instead."""
    why = missing()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the browser tests must run in CI: {why}", pytrace=False)
    pytest.skip(f"{why}: the pages are tested in a real browser where one is installed")


@pytest.fixture
def browser() -> Iterator:
    """A fresh headless Chromium (its own profile folder), closed after the test."""
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="pfaff-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for s in (*SWITCHES, f"--user-data-dir={profile}"):
            options.add_argument(s)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        driver.set_page_load_timeout(120)
        try:
            yield driver
        finally:
            driver.quit()


def screenshot(driver) -> np.ndarray:
    """The page as an RGB array (height, width, 3) of ints."""
    from PIL import Image

    png = driver.get_screenshot_as_png()
    return np.asarray(Image.open(BytesIO(png)).convert("RGB")).astype(int)


def changed(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels whose colour differs by more than 30 (of 765) between two screenshots."""
    return int((np.abs(a - b).sum(axis=2) > 30).sum())


def wait_for(test: Callable[[], object], what: str, timeout: float = 60.0):
    """``test()``'s first true value, polled until ``timeout`` seconds, else a failure
    naming ``what`` was awaited."""
    end = time.monotonic() + timeout
    while True:
        value = test()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"the browser did not show {what} within {timeout:g} s")
        time.sleep(0.1)


def errors(driver) -> list[str]:
    """The page's console errors so far (Chromium's SEVERE log entries), but for the
    missing favicon.ico of a server that has none (meshcat's)."""
    logs = driver.get_log("browser")
    return [
        e["message"]
        for e in logs
        if e["level"] == "SEVERE" and "/favicon.ico - Failed to load" not in e["message"]
    ]
