"""The live view in a real browser: headless Chromium opens the meshcat page and the
screenshot's pixels show the robot, in a different place after it moved."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import pfaff
from pfaff.api.viewer import LiveView
from tests.where import MODELS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium installed")


def _screenshot(url: str, path) -> np.ndarray:
    import matplotlib.image as mpimg

    args = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu"]
    args += ["--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--hide-scrollbars"]
    args += ["--window-size=640,480", "--virtual-time-budget=6000", f"--screenshot={path}", url]
    subprocess.run(args, capture_output=True, timeout=120, check=True)
    return (mpimg.imread(path)[..., :3] * 255).astype(int)


def _robot_pixels(img: np.ndarray) -> np.ndarray:
    """Pixels of the geoms' orange (lit: any shade with red > green > blue, far from blue)."""
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return (r > g) & (g > b) & (r - b > 60)


def test_live_view_shows_the_robot_and_its_motion(tmp_path):
    sys = pfaff.load(MODELS / "five_bar.xml")
    view = LiveView(sys)
    try:
        first = _robot_pixels(_screenshot(view.url, tmp_path / "a.png"))
        view.vis["pfaff"].set_property("visible", False)
        hidden = _robot_pixels(_screenshot(view.url, tmp_path / "hidden.png"))
        view.vis["pfaff"].set_property("visible", True)
        assert view.show(sys.q0 + np.array([1.2, -0.8, 0.9, -1.1]), force=True)
        moved = _robot_pixels(_screenshot(view.url, tmp_path / "b.png"))
    finally:
        view.close()
    robot, robot_moved = first & ~hidden, moved & ~hidden  # the axes' red is not the robot
    assert robot.sum() > 200, f"only {robot.sum()} robot pixels in the first frame"
    assert (robot ^ robot_moved).sum() > 200, "the robot did not move between the frames"


def test_live_view_refuses_bad_input():
    sys = pfaff.load(MODELS / "five_bar.xml")
    with pytest.raises(ValueError, match="fps must be > 0"):
        LiveView(sys, fps=0)
