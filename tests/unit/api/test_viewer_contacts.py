"""``pfaff run FILE --view --set contact=true``: the watched run draws its contact
forces in the live view as the Simulator's view does (cones whose tips are the contact
points, the scale of the run's scene.html: the weight half the scene's width).

Witnesses: the box's bottom face (where its four corners' forces act, their middle)
from MuJoCo's own kinematics of the file, the weight ``m g`` (a box at rest: the drawn
force holds it up), the width of the scene worked out by hand from the file's box, and
the run's own record at the sample each drawing was handed; a run without contacts
draws none, and a watched run is the same run as one not watched."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.api import viewer as viewer_module
from pfaff.cli import _run_viewed
from pfaff.scenarios import execute
from pfaff.simulate.watch import active, watching
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
G = 9.81


class _Node:
    """A meshcat node that keeps the last transform set per path (no server)."""

    def __init__(self, path: str, shown: dict):
        self.path, self.shown = path, shown

    def __getitem__(self, key):
        return _Node(f"{self.path}/{key}", self.shown)

    def set_object(self, *a):
        pass

    def set_transform(self, T):
        self.shown[self.path] = np.asarray(T, dtype=float)

    def set_property(self, *a):
        pass


@pytest.fixture
def drawings(monkeypatch):
    """Every follow() of a Viewer draws (no rate limit) and is logged: (t, q, contact
    forces handed, the contact cones' transforms after it)."""
    shown: dict = {}

    class Vis(_Node):
        def __init__(self):
            super().__init__("", shown)
            self.window = None  # no server to stop

        def url(self):
            return "http://127.0.0.1:0/static/"

    monkeypatch.setattr("meshcat.Visualizer", Vis)
    monkeypatch.setattr(viewer_module, "RATE", np.inf)
    log: list = []
    follow = viewer_module.Viewer.follow

    def spy(self, t, q, contact_force=None):
        follow(self, t, q, contact_force)
        cones = {p: T for p, T in shown.items() if re.search(r"_contacts/\d+$", p)}
        log.append((t, np.array(q), contact_force, cones))

    monkeypatch.setattr(viewer_module.Viewer, "follow", spy)
    monkeypatch.setattr(viewer_module.time, "sleep", lambda s: None)  # no pacing
    return log


# (file, the box's mass [kg], its bottom face's centre in its body frame [m], the scene's
# width: the box's diagonal, the plane not drawn [m])
CASES = {
    "box_on_plane": (2.0, (0.0, 0.0, -0.1), np.sqrt(0.4**2 + 0.3**2 + 0.2**2)),
    "incline": (1.0, (0.0, 0.0, 0.0), np.sqrt(0.2**2 + 0.2**2 + 0.1**2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_watched_run_draws_its_contact_forces(drawings, name):
    mass, bottom, width = CASES[name]
    path = MODELS / "contact" / f"{name}.xml"
    run = _run_viewed(str(path), {"contact": True, "t_end": 0.5})
    assert run.summary["status"] == "ok"
    a = run.arrays
    assert len(drawings) >= 6  # every 64 steps and the last sample
    system = pfaff.load(path, contact=True)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "box")
    per_newton = 0.5 * width / (mass * G)  # the weight half the scene's width
    for t, q, force, cones in drawings:
        k = int(np.argmin(np.abs(a["t"] - t)))
        assert abs(a["t"][k] - t) < 1e-12
        np.testing.assert_array_equal(q, a["q"][k])  # the recorded sample
        np.testing.assert_allclose(force[:, 0], a["contact_normal_force"][k], atol=1e-12)
        np.testing.assert_allclose(force[:, 1:], a["contact_friction_force"][k], atol=1e-12)
        assert len(cones) == 1  # one pair: its force at the middle of its points
        (T,) = cones.values()
        tip, base = (T @ [0.0, 1.0, 0.0, 1.0])[:3], (T @ [0.0, 0.0, 0.0, 1.0])[:3]
        d.qpos[:] = system.q_to_qpos(q)
        mujoco.mj_kinematics(m, d)
        face = d.xpos[body] + d.xmat[body].reshape(3, 3) @ np.array(bottom)
        assert np.abs(tip - face).max() < 1e-9  # [m]
        # the drawn force in newtons: the box at rest, held up against its weight
        drawn = (tip - base) / per_newton
        assert np.abs(drawn - [0.0, 0.0, mass * G]).max() < 1e-9  # [N]


def test_a_watched_contact_run_is_the_run_not_watched(drawings):
    path = str(MODELS / "contact" / "box_on_plane.xml")
    params = {"contact": True, "t_end": 0.3}
    watched = _run_viewed(path, params).arrays
    plain = execute(path, params).arrays
    assert len(drawings) >= 4
    assert watched["q"].shape == plain["q"].shape
    np.testing.assert_array_equal(watched["q"], plain["q"])
    np.testing.assert_array_equal(watched["contact_normal_force"], plain["contact_normal_force"])


def test_a_run_without_contacts_draws_none(drawings):
    run = _run_viewed(str(MODELS / "five_bar.xml"), {"t_end": 0.2, "contact": False})
    assert run.summary["status"] == "ok" and len(drawings) >= 10
    assert all(force is None and not cones for _, _, force, cones in drawings)
    # with contact=false a contact file's run draws none either
    drawings.clear()
    _run_viewed(str(MODELS / "contact" / "incline.xml"), {"t_end": 0.2, "contact": False})
    assert len(drawings) >= 3
    assert all(force is None and not cones for _, _, force, cones in drawings)


def test_a_failing_watcher_ends_a_limited_run():
    def boom(t, q, force):
        raise RuntimeError("viewer gone")

    path = str(MODELS / "contact" / "box_on_plane.xml")
    with pytest.raises(RuntimeError, match="viewer gone"), watching(boom, contacts=True):
        execute(path, {"contact": True, "t_end": 0.2})
    assert not active()


def test_pair_forces_need_contact_pairs(drawings):
    view = viewer_module.Viewer(pfaff.load(MODELS / "five_bar.xml", contact=False))
    with pytest.raises(ValueError, match="without contact pairs"):
        view.draw_pair_forces(view.system.q0, np.zeros((1, 4)))


def test_a_ctrl_c_in_the_watcher_interrupts_a_limited_run_with_its_samples():
    seen: list[float] = []

    def tired(t, q, force):
        seen.append(t)
        if len(seen) == 3:  # Ctrl-C while the view sleeps to pace the run
            raise KeyboardInterrupt

    path = str(MODELS / "contact" / "box_on_plane.xml")
    with watching(tired, contacts=True):
        run = execute(path, {"contact": True, "t_end": 1.0})
    assert run.summary["status"] == "interrupted"
    t = run.arrays["t"]
    assert len(seen) == 3 and seen[-1] <= t[-1] < 0.5  # the samples up to the interrupt
