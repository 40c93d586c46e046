"""The live view (pfaff.api.Viewer, Simulator(viewer=True), pfaff view) in a real
browser: headless Chromium's screenshots of the meshcat page show the robot (the
pixels that change when it is hidden) and its pose changing between two frames; the
same pose gives the same picture (the witness that a change is the robot's)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import pfaff
from tests.where import MODELS

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)


def _shot(url: str, path) -> np.ndarray:
    from PIL import Image

    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--use-angle=swiftshader",
           "--enable-unsafe-swiftshader", "--window-size=640,480",
           "--virtual-time-budget=4000", f"--screenshot={path}", url]  # fmt: skip
    subprocess.run(cmd, capture_output=True, timeout=180, check=False)
    assert path.is_file(), "Chromium wrote no screenshot"
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def _changed(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels whose colour differs by more than 30 (of 765) between two screenshots."""
    return int((np.abs(a - b).sum(axis=2) > 30).sum())


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here: the view is tested in a browser")
def test_live_view_shows_the_robot_and_its_motion(tmp_path):
    sys = pfaff.load(MODELS / "five_bar.xml")
    sim = pfaff.Simulator(sys, viewer=True)
    try:
        url = sim.viewer.url
        assert url.startswith("http://127.0.0.1:")  # loopback only
        start = _shot(url, tmp_path / "start.png")
        sim.viewer.vis["pfaff"].set_property("visible", False)
        hidden = _shot(url, tmp_path / "hidden.png")
        sim.viewer.vis["pfaff"].set_property("visible", True)
        assert _changed(start, hidden) > 500  # the robot's pixels
        sim.step(n=300)  # the loop falls under gravity; the Simulator shows its state
        moved = _shot(url, tmp_path / "moved.png")
        assert _changed(start, moved) > 500
        sim.reset()  # back at the start: the first picture again
        again = _shot(url, tmp_path / "again.png")
        assert _changed(start, again) < 50
    finally:
        sim.viewer.close()
    assert sim.viewer.vis.window.server_proc.poll() is not None  # the server stopped


def test_viewer_refuses_bad_input():
    sys = pfaff.load(MODELS / "five_bar.xml")
    with pytest.raises(ValueError, match="viewer must be True, False or a Viewer"):
        pfaff.Simulator(sys, viewer="yes")
    v = pfaff.api.viewer.Viewer(sys)
    try:
        with pytest.raises(ValueError, match=r"q must be finite of shape \(4,\)"):
            v.display(np.zeros(3))
        assert v.show(sys.q0, now=1.0) and not v.show(sys.q0, now=1.01)  # at most 30 Hz
    finally:
        v.close()
