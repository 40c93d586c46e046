"""The live view (pfaff.api.Viewer, Simulator(viewer=True), pfaff view) in a real
browser (headless Chromium through Selenium, :mod:`tests.browser`): screenshots of the
meshcat page show the robot (the pixels that change when it is hidden) and its pose
changing between two frames; the same pose gives the same picture (the witness that a
change is the robot's)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import pfaff
from tests.browser import browser, changed, errors, screenshot, wait_for  # noqa: F401
from tests.where import MODELS

# the robot's meshes in the page's meshcat scene (meshcat's page keeps its `viewer`)
MESHES = """var n = viewer.scene_tree.children.meshcat.children.pfaff, c = 0;
if (n) n.object.traverse(o => { if (o.isMesh) c++; }); return c;"""
SHOW = """var n = viewer.scene_tree.children.meshcat.children.pfaff;
n.object.visible = arguments[0]; viewer.set_dirty();"""


def _settled(driver) -> np.ndarray:
    """A screenshot once the page has drawn what it was sent (two frames alike)."""
    shot = screenshot(driver)
    for _ in range(50):
        time.sleep(0.2)
        again = screenshot(driver)
        if changed(shot, again) < 20:
            return again
        shot = again
    return shot


def test_live_view_shows_the_robot_and_its_motion(browser):  # noqa: F811
    sys = pfaff.load(MODELS / "five_bar.xml", contact=False)  # opaque: no contact forces
    sim = pfaff.Simulator(sys, viewer=True)
    try:
        url = sim.viewer.url
        assert url.startswith("http://127.0.0.1:")  # loopback only
        browser.get(url)
        wait_for(lambda: browser.execute_script(MESHES), "the robot's meshes")
        start = _settled(browser)
        sim.viewer.vis["pfaff"].set_property("visible", False)
        hidden = _settled(browser)
        sim.viewer.vis["pfaff"].set_property("visible", True)
        assert changed(start, hidden) > 500  # the robot's pixels
        sim.step(n=300)  # the loop falls under gravity; the Simulator shows its state
        sim.viewer.display(sim.q)  # the last state, whatever the 30 Hz limit let through
        moved = _settled(browser)
        assert changed(start, moved) > 500
        sim.reset()  # back at the start: the first picture again
        sim.viewer.display(sim.q)
        again = _settled(browser)
        assert changed(start, again) < 50
        assert errors(browser) == []
    finally:
        sim.viewer.close()
    assert sim.viewer.vis.window.server_proc.poll() is not None  # the server stopped


def test_pfaff_view_serves_the_model_to_a_browser(browser, tmp_path):  # noqa: F811
    """``pfaff view FILE`` (the installed command) serves the file's robot on loopback:
    the page holds its meshes, and hiding them changes the picture."""
    pfaff_cmd = Path(sys.executable).with_name("pfaff")
    log = tmp_path / "view.log"
    with log.open("w") as out:
        cmd = [str(pfaff_cmd), "view", str(MODELS / "five_bar.xml"), "--seconds", "120"]
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = wait_for(
            lambda: re.search(r"live view: (http://127\.0\.0\.1:\d+/\S*)", log.read_text()),
            "pfaff view's address",
        ).group(1)
        browser.get(url)
        assert wait_for(lambda: browser.execute_script(MESHES), "the robot's meshes") >= 4
        shown = _settled(browser)
        browser.execute_script(SHOW, False)
        hidden = _settled(browser)
        assert changed(shown, hidden) > 500  # the robot's pixels
        assert errors(browser) == []
        servers = _children(proc.pid)  # meshcat's server
        assert servers
        proc.terminate()  # `kill PID`: the view stops its server as on Ctrl-C
        assert proc.wait(timeout=30) == 0
        assert wait_for(lambda: not any(_alive(p) for p in servers), "the server to stop")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def _children(pid: int) -> list[int]:
    """The process ids whose parent is ``pid`` (Linux's /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, exited but not reaped, counts as stopped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_viewer_refuses_bad_input():
    sys = pfaff.load(MODELS / "five_bar.xml", contact=False)  # opaque: no contact forces
    with pytest.raises(ValueError, match="viewer must be True, False or a Viewer"):
        pfaff.Simulator(sys, viewer="yes")
    v = pfaff.api.viewer.Viewer(sys)
    try:
        with pytest.raises(ValueError, match=r"q must be finite of shape \(4,\)"):
            v.display(np.zeros(3))
        assert v.show(sys.q0, now=1.0) and not v.show(sys.q0, now=1.01)  # at most 30 Hz
    finally:
        v.close()
