"""Contact forces drawn in the 3D scenes: the cone's tip is the point of application and
it points along the force (its transform applied to the cone's own tip and base, at many
forces, along the cone's axis and against it too); the forces drawn are the core's
recorded contact forces put at MuJoCo's contact points (on the incline, their sum holds
the box's weight up: the witness of the normals' directions and of the friction's part);
``pfaff run FILE --set contact=true`` writes them into ``scene.html``; the live view
draws and hides them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pfaff.api.arrows import arrow_matrix, arrow_pose, check_arrow
from pfaff.contact.penetration import Penetration, contact_forces_world
from pfaff.files.model import load_model
from pfaff.report.scene3d import scene_html
from pfaff.scenarios.model_file import run_system
from pfaff.simulate import SimOptions
from tests.unit.report.test_scene3d import _decode

MODELS = Path(__file__).parents[2] / "models" / "contact"
G = 9.81


def _tip_and_base(point, vector) -> tuple[np.ndarray, np.ndarray]:
    T = arrow_matrix(*arrow_pose(point, vector))
    # the cone: unit height along y, base at the node's origin (api.arrows.arrow_object)
    return (T @ [0.0, 1.0, 0.0, 1.0])[:3], (T @ [0.0, 0.0, 0.0, 1.0])[:3]


@pytest.mark.parametrize("seed", range(5))
def test_the_cone_ends_at_the_point_along_the_force(seed):
    rng = np.random.default_rng(seed)
    vectors = [*rng.normal(size=(20, 3)), [0, 2.0, 0], [0, -0.5, 0], [1e-7, -3.0, 0]]
    for v in vectors:
        p = rng.normal(size=3)
        tip, base = _tip_and_base(p, np.asarray(v))
        assert np.abs(tip - p).max() < 1e-12  # [m]
        assert np.abs(base - (p - v)).max() < 1e-12
        # a cone drawn from the point (base there) would put its tip at p + v
        assert np.linalg.norm(tip - (p + v)) > 0.5 * np.linalg.norm(v)


def test_no_force_hides_the_cone():
    for v in ([0.0, 0.0, 0.0], [np.nan, 0.0, 1.0]):
        _, _, scale = arrow_pose(np.zeros(3), np.asarray(v))
        assert max(scale) < 1e-6
    with pytest.raises(ValueError, match=r"arrows\[0\] needs 'points' and 'vectors'"):
        check_arrow(0, {"points": np.zeros((3, 3)), "vectors": np.zeros((2, 3))}, 3)
    with pytest.raises(ValueError, match="radius"):
        check_arrow(0, {"points": np.zeros((1, 3)), "vectors": np.zeros((1, 3)), "radius": 0}, 1)


@pytest.fixture(scope="module")
def incline():
    system = load_model(MODELS / "incline.xml", contact=True)
    res = run_system(system, 0.3, SimOptions(dt=1e-3), "incline")
    pen = Penetration(system.contacts, system.coords.q_to_qpos)
    a = res.trajectory.arrays()
    force = np.concatenate(
        [res.extra_arrays["contact_normal_force"][:, :, None],
         res.extra_arrays["contact_friction_force"]], axis=2,
    )  # fmt: skip
    return system, pen, a["q"], force, res


def test_the_forces_drawn_hold_the_box_on_the_incline(incline):
    """Below the friction angle the box rests: the contact forces on it sum to -m g at
    every sample (normal m g cos a along the incline's normal, friction m g sin a up the
    slope), their points on the incline's surface."""
    _, pen, q, force, _ = incline
    points, vectors = contact_forces_world(pen, q, force)
    total = np.nansum(vectors, axis=1)
    assert np.abs(total - [0.0, 0.0, 1.0 * G]).max() < 1e-9  # [N]
    a = np.radians(20.0)
    normal = np.array([np.sin(a), 0.0, np.cos(a)])  # the plane turned 20 deg about y
    assert np.abs(points[:, 0] @ normal).max() < 1e-9  # [m] on the plane through 0
    # the normal force alone (friction dropped) does not hold the weight: caught
    wrong = force.copy()
    wrong[:, :, 1:] = 0
    _, v = contact_forces_world(pen, q, wrong)
    assert np.abs(np.nansum(v, axis=1) - [0, 0, G]).max() > 1.0
    with pytest.raises(ValueError, match="normal \\+ friction"):
        contact_forces_world(pen, q, force[:, :, :3])


def test_the_scene_of_a_contact_run_draws_its_forces(incline):
    system, _, q, force, res = incline
    sc = res.scene3d
    assert [a["name"] for a in sc["arrows"]] == ["contact0"]
    assert all(b["opacity"] < 1 for b in sc["boxes"])  # the forces under them seen
    page = scene_html(None, ".", None, sc["t"], boxes=sc["boxes"], arrows=sc["arrows"])
    clip = next(
        c["clip"]
        for cmd in _decode(page)
        if cmd["type"] == "set_animation"
        for c in cmd["animations"]
        if c["path"].endswith("/contact0")
    )
    tracks = {t["name"]: t["keys"] for t in clip["tracks"]}
    assert set(tracks) == {".position", ".quaternion", ".scale"}
    # the weight, 9.81 N, is drawn as long as the arrow's stretch at the last key says
    drawn = tracks[".scale"][-1]["value"][1]
    per_newton = np.linalg.norm(sc["arrows"][0]["vectors"][-1]) / G
    assert drawn == pytest.approx(per_newton * G, rel=1e-6)


def test_the_live_view_draws_and_hides_contact_forces(monkeypatch):
    import pfaff
    from pfaff.api.viewer import Viewer

    shown = []

    class Node:
        def __init__(self, path):
            self.path = path

        def __getitem__(self, key):
            return Node(f"{self.path}/{key}")

        def set_object(self, *a):
            pass

        def set_transform(self, T):
            shown.append((self.path, np.asarray(T)))

        def set_property(self, *a):
            pass

    class Vis(Node):
        def __init__(self):
            super().__init__("")

        def url(self):
            return "http://127.0.0.1:0/static/"

    monkeypatch.setattr("meshcat.Visualizer", Vis)
    system = pfaff.load(MODELS / "box_on_plane.xml", contact=True)
    view = Viewer(system)
    sim = pfaff.Simulator(system, viewer=view)
    sim.step(n=20)
    contacts = sim.contacts
    assert len(contacts) == 4  # the corners
    shown.clear()
    view.draw_contacts(contacts)
    cones = [T for p, T in shown if "_contacts/" in p]
    assert len(cones) == 4
    for c, T in zip(contacts, cones):
        assert np.abs((T @ [0, 1, 0, 1])[:3] - c.point).max() < 1e-9  # tip at the point
        assert (T @ [0, 0, 0, 1])[2] < c.point[2]  # the push from below the floor
    shown.clear()
    view.draw_contacts(contacts[:1])  # three let go: their cones hide
    hidden = [T for p, T in shown if "_contacts/" in p][1:]
    assert len(hidden) == 3 and all(np.abs(T[:3, :3]).max() < 1e-6 for T in hidden)
