"""The standalone 3D scene (pfaff.report.scene3d): self-contained, animated, no server."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("meshcat")
umsgpack = pytest.importorskip("umsgpack")
pin = pytest.importorskip("pinocchio")

from pfaff.mechanism import load_robot, robot_urdf  # noqa: E402
from pfaff.mechanism.robots import package_dir  # noqa: E402
from pfaff.report.scene3d import scene_html  # noqa: E402

FPS = 25
T = 20
FINGERS = {"panda_finger_joint1": 0.01, "panda_finger_joint2": 0.01}
LINKS = [f"panda_link{i}_0" for i in range(8)] + [
    "panda_hand_0",
    "panda_leftfinger_0",
    "panda_rightfinger_0",
]
# the only URLs in meshcat's viewer script: an XML namespace, never fetched
NAMESPACES = {"http://www.w3.org/1999/xhtml"}


def _children() -> set[int]:
    """Ids of this process's child processes (Linux /proc)."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            out.add(int(stat.parent.name))
    return out


SCENE = re.compile(r'<script id="pfaff-scene"[^>]*data-encoding="(\w+)"[^>]*>(.*?)</script>', re.S)


def _commands(page: str) -> list[bytes]:
    """The scene's packed commands, split as the page's loader does."""
    m = SCENE.search(page)
    assert m, "scene data block missing"
    data = base64.b64decode("".join(m.group(2).split()))
    if m.group(1) == "gzip":
        data = gzip.decompress(data)
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack(">I", data[off : off + 4])
        out.append(data[off + 4 : off + 4 + n])
        off += 4 + n
    assert off == len(data)
    return out


def _decode(page: str) -> list[dict]:
    return [umsgpack.unpackb(c) for c in _commands(page)]


@pytest.fixture(scope="module")
def panda():
    mech = load_robot("panda")
    model, data = mech.model, mech.model.createData()
    t = np.arange(T) / FPS
    q = pin.neutral(model) + np.outer(np.sin(2 * np.pi * t), [0.6, 0.3, -0.2, 0.4, 0.5, 0.3, 1.0])
    q[:, 3] -= 1.5
    fid = model.getFrameId("panda_hand")
    hand = []
    for qi in q:
        pin.framesForwardKinematics(model, data, qi)
        hand.append(data.oMf[fid].copy())
    before = _children() if Path("/proc").is_dir() else None
    page = scene_html(
        robot_urdf("panda"),
        package_dir(),
        q,
        t,
        locked_joints=FINGERS,
        fps=FPS,
        extra_points=np.array([h.translation for h in hand]),
        title="Panda <demo>",
        plane=([0.5, 0.0, 0.1], [0.0, 1.0, 1.0], 0.4),
    )
    after = _children() if before is not None else None
    return {"t": t, "q": q, "hand": hand, "page": page, "before": before, "after": after}


def test_page_is_self_contained(panda):
    page = panda["page"]
    assert page.lstrip().startswith("<!DOCTYPE html>")
    assert "new MeshCat.Viewer(" in page and "handle_command_bytearray" in page
    assert len(page) > 800_000  # meshcat's viewer script (~850 kB) is inlined
    assert not re.search(r"<script[^>]*\ssrc\s*=", page, re.I)
    assert not re.search(r"<link\b|@import|(src|href)\s*=\s*[\"']?(https?:)?//", page, re.I)
    assert set(re.findall(r"https?://[^\s\"'`)<]+", page)) <= NAMESPACES
    assert "Panda &lt;demo&gt;" in page and "Panda <demo>" not in page


def test_no_server_process_left(panda):
    if panda["before"] is None:
        pytest.skip("no /proc")
    assert panda["after"] == panda["before"]


def test_scene_has_the_meshes_and_the_extras(panda):
    cmds = _decode(panda["page"])
    objects = {c["path"]: c["object"] for c in cmds if c["type"] == "set_object"}
    for link in LINKS:
        obj = objects[f"/meshcat/pinocchio/visuals/{link}"]["object"]
        assert obj["type"] == "_meshfile_object" and obj["format"] == "dae"
        assert "<COLLADA" in obj["data"]
    assert {"/meshcat/pfaff/trace", "/meshcat/pfaff/marker", "/meshcat/pfaff/plane"} <= set(
        objects
    )
    trace = objects["/meshcat/pfaff/trace"]["geometries"][0]["data"]["attributes"]["position"]
    pts = np.frombuffer(trace["array"].data, dtype=np.float32).reshape(-1, 3)
    assert len(pts) == T + 1  # every point, and the last once more
    np.testing.assert_allclose(pts[:T], [h.translation for h in panda["hand"]], atol=1e-6)
    plane = [
        c for c in cmds if c["type"] == "set_transform" and c["path"] == "/meshcat/pfaff/plane"
    ]
    R = np.array(plane[-1]["matrix"]).reshape(4, 4).T  # column-major, as three.js
    np.testing.assert_allclose(R[:3, 2], np.array([0.0, 1.0, 1.0]) / np.sqrt(2), atol=1e-12)
    np.testing.assert_allclose(R[:3, 3], [0.5, 0.0, 0.1], atol=1e-12)


def test_animation_follows_the_trajectory_in_real_time(panda):
    cmds = _decode(panda["page"])
    assert cmds[-1]["type"] == "set_animation"
    anim = cmds[-1]
    assert anim["options"]["play"] is True and anim["options"]["repetitions"] == float("inf")
    clips = {a["path"]: a["clip"] for a in anim["animations"]}
    assert set(clips) == {f"/meshcat/pinocchio/visuals/{n}" for n in LINKS} | {
        "/meshcat/pfaff/marker"
    }
    hand = clips["/meshcat/pinocchio/visuals/panda_hand_0"]
    tracks = {tr["name"]: tr["keys"] for tr in hand["tracks"]}
    for keys in tracks.values():
        assert len(keys) == T  # one key per sample: T samples at exactly FPS
        times = np.array([k["time"] for k in keys]) / hand["fps"]  # seconds, as three.js
        np.testing.assert_allclose(times, panda["t"], atol=1e-6)
    # independent witness: the hand frame from the mechanism (the hand's visual has no offset)
    pos = np.array([k["value"] for k in tracks[".position"]])
    np.testing.assert_allclose(pos, [h.translation for h in panda["hand"]], atol=1e-6)
    quat = np.array([k["value"] for k in tracks[".quaternion"]])
    ref = np.array([pin.Quaternion(h.rotation).coeffs() for h in panda["hand"]])
    np.testing.assert_allclose(np.abs(np.sum(quat * ref, axis=1)), 1.0, atol=1e-6)
    assert np.ptp(pos, axis=0).max() > 0.05  # the arm really moves


def test_subsampling_and_determinism():
    model = load_robot("panda").model
    t = np.linspace(0.0, 20.0, 2001)  # 20 s: 501 frames at 25 fps, capped at 250
    q = np.tile(pin.neutral(model), (len(t), 1))
    q[:, 0] = 0.5 * np.sin(t)
    args = (robot_urdf("panda"), package_dir(), q, t)
    page = scene_html(*args, locked_joints=FINGERS, max_frames=250, compress=False)
    anim = _decode(page)[-1]
    keys = anim["animations"][0]["clip"]["tracks"][0]["keys"]
    assert len(keys) == 250
    fps = anim["animations"][0]["clip"]["fps"]
    assert keys[0]["time"] == 0.0 and keys[-1]["time"] / fps == pytest.approx(20.0)
    assert page == scene_html(*args, locked_joints=FINGERS, max_frames=250, compress=False)


def test_bad_input_is_refused():
    model = load_robot("panda").model
    q = np.tile(pin.neutral(model), (3, 1))
    t = np.arange(3.0)
    args = (robot_urdf("panda"), package_dir())
    with pytest.raises(ValueError, match=r"shape \(T, 9\)"):
        scene_html(*args, q, t)  # 7-dof q without locking the fingers
    with pytest.raises(ValueError, match="panda_finger_joint1"):
        scene_html(*args, q, t, locked_joints={"nope": 0.0})
    with pytest.raises(ValueError, match="non-decreasing"):
        scene_html(*args, q, t[::-1], locked_joints=FINGERS)
    with pytest.raises(ValueError, match="extra_points"):
        scene_html(*args, q, t, locked_joints=FINGERS, extra_points=np.zeros((2, 3)))
    with pytest.raises(FileNotFoundError):
        scene_html(Path("/nonexistent/robot.urdf"), package_dir(), q, t)


@pytest.mark.skipif(shutil.which("node") is None, reason="node.js not installed")
def test_page_loader_replays_every_command(panda, tmp_path):
    """Run the page's own loader in node with a stub viewer: it inflates and replays all."""
    page = panda["page"]
    m = SCENE.search(page)
    loader = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    script = tmp_path / "check.js"
    script.write_text(
        f"""
const els = {{"pfaff-status": {{textContent: "loading"}}, "meshcat-pane": {{}},
  "pfaff-scene": {{textContent: {json.dumps(m.group(2))}, getAttribute: () => "{m.group(1)}"}}}};
globalThis.window = globalThis;
globalThis.document = {{getElementById: (id) => els[id]}};
const sizes = [];
const stub = {{handle_command_bytearray: (b) => sizes.push(b.length)}};
globalThis.MeshCat = {{Viewer: function () {{ return stub; }}}};
{loader}
const timer = setInterval(() => {{
  if (window.pfaffSceneCommands === undefined && els["pfaff-status"].textContent === "loading")
    return;
  clearInterval(timer);
  console.log(JSON.stringify({{n: window.pfaffSceneCommands,
    status: els["pfaff-status"].textContent, sizes: sizes}}));
}}, 20);
"""
    )
    out = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["status"] == ""
    assert res["sizes"] == [len(c) for c in _commands(page)] and res["n"] == len(res["sizes"])


def test_two_robots_at_their_bases_and_a_moving_box():
    """Two Pandas (composed plant of dual_arm_with_box) and a box keyed along its free flyer:
    each robot's node sits at its base, the hand keys put it where the composed model's hand
    frame is, and the box keys are the box poses."""
    from pfaff.mechanism.compose import dual_arm_with_box

    bases = [
        pin.SE3(pin.rpy.rpyToMatrix(0, 0, np.pi / 2), np.array([0.0, -0.55, 0.0])),
        pin.SE3(pin.rpy.rpyToMatrix(0.1, 0, -np.pi / 2), np.array([0.0, 0.55, 0.2])),
    ]
    hand_R = np.column_stack([(1.0, 0, 0), (0, 0, -1.0), (0, 1.0, 0)])
    sys = dual_arm_with_box(bases, [(0, -0.05, 0), (0, 0.05, 0)], [hand_R, hand_R])
    model, data = sys.mech.model, sys.mech.model.createData()
    n = 12
    t = np.arange(n) / FPS
    q = np.tile(pin.neutral(model), (n, 1))
    q[:, sys.arm_q[0]] += np.outer(np.sin(t), [0.3, 0.2, 0.1, -1.5, 0.2, 1.0, 0.4])
    q[:, sys.arm_q[1]] += np.outer(np.cos(t), [-0.3, 0.1, 0.2, -1.2, 0.1, 1.2, 0.3])
    rot = [pin.Quaternion(pin.rpy.rpyToMatrix(0.2 * s, 0.0, 0.7 * s)) for s in t]
    q[:, sys.box_q] = [[0.1 * s, 0.02, 0.1, *r.coeffs()] for s, r in zip(t, rot)]
    robots = [
        {"urdf": robot_urdf("panda"), "q": q[:, iq], "base": b, "locked": FINGERS, "prefix": p}
        for iq, b, p in zip(sys.arm_q, sys.bases, ("arm1", "arm2"))
    ]
    poses44 = np.array([pin.XYZQUATToSE3(x).homogeneous for x in q[:, sys.box_q]])
    page = scene_html(
        None,
        package_dir(),
        None,
        t,
        fps=FPS,
        robots=robots,
        boxes=[
            {"size": (0.2, 0.1, 0.1), "poses": q[:, sys.box_q]},
            {"size": (0.1, 0.1, 0.1), "poses": poses44, "name": "copy"},
        ],
        compress=False,
    )
    cmds = _decode(page)
    objects = {c["path"]: c["object"] for c in cmds if c["type"] == "set_object"}
    box = objects["/meshcat/pfaff/box0"]["geometries"][0]
    assert (box["width"], box["height"], box["depth"]) == (0.2, 0.1, 0.1)
    for arm in ("arm1", "arm2"):
        assert f"/meshcat/{arm}/visuals/panda_hand_0" in objects
    roots = {c["path"]: c["matrix"] for c in cmds if c["type"] == "set_transform"}
    clips = {a["path"]: a["clip"] for a in cmds[-1]["animations"]}
    assert len(clips) == 2 * len(LINKS) + 2
    for clip in clips.values():
        for track in clip["tracks"]:
            assert len(track["keys"]) == n  # one key per sample
    for name in ("box0", "copy"):
        tracks = {tr["name"]: tr["keys"] for tr in clips[f"/meshcat/pfaff/{name}"]["tracks"]}
        np.testing.assert_allclose([k["value"] for k in tracks[".position"]], q[:, 14:17])
        quat = np.array([k["value"] for k in tracks[".quaternion"]])
        np.testing.assert_allclose(np.abs(np.sum(quat * q[:, 17:], axis=1)), 1.0, atol=1e-6)
    for i, arm in enumerate(("arm1", "arm2")):
        base = np.array(roots[f"/meshcat/{arm}"]).reshape(4, 4).T  # column-major
        np.testing.assert_allclose(base, bases[i].homogeneous, atol=1e-12)
        keys = {
            tr["name"]: tr["keys"]
            for tr in clips[f"/meshcat/{arm}/visuals/panda_hand_0"]["tracks"]
        }
        fid = model.getFrameId(f"arm{i + 1}_panda_hand")
        for k in (0, n // 2, n - 1):
            pin.framesForwardKinematics(model, data, q[k])
            local = pin.XYZQUATToSE3(
                np.concatenate([keys[".position"][k]["value"], keys[".quaternion"][k]["value"]])
            )
            world = bases[i] * local  # the key is in the robot's frame, under its base node
            np.testing.assert_allclose(world.translation, data.oMf[fid].translation, atol=2e-6)
            np.testing.assert_allclose(world.rotation, data.oMf[fid].rotation, atol=2e-6)
    with pytest.raises(ValueError, match=r"boxes\[0\]\['poses'\]"):
        scene_html(None, package_dir(), None, t, boxes=[{"size": (1, 1, 1), "poses": q[:3]}])
    with pytest.raises(ValueError, match=r"robots\[0\]\['base'\]"):
        scene_html(None, package_dir(), None, t, robots=[{**robots[0], "base": np.eye(3)}])
