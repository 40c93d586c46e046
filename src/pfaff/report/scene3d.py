"""A robot trajectory as a standalone 3D animation: one HTML file, no server, no network.

The scene is built with Pinocchio's ``MeshcatVisualizer`` (visual meshes with
their URDF colours) and meshcat's ``Animation`` (keyframes of every link),
but nothing is sent to a meshcat server: a recording window collects the
msgpack commands that the server would forward to the browser, and the page
replays them into meshcat's own viewer (``viewer/dist/main.min.js``, inlined).
This is what meshcat's ``static_html`` does, without the ZMQ/tornado server
subprocess, and with the commands gzip-compressed (the Panda's Collada meshes
shrink from 10.6 MB to 3.8 MB; the browser inflates them with
``DecompressionStream``) and replayed in order.

The animation plays in real time and loops; meshcat's "Animations" panel
("Open Controls") has play, pause, a time scrubber and a speed factor.
Output is deterministic: the viewer's random object uuids are renumbered.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from pfaff.api.arrows import add_arrow, check_arrow
from pfaff.report.scene_page import scene_page
from pfaff.report.scene_view import camera_and_floor, corners, local_box, scene_view

__all__ = ["scene_html", "scene_view", "urdf_models"]

_ROOT = "pinocchio"  # viewer node of the robot: /meshcat/pinocchio/visuals/<geometry name>


class _Recorder:
    """Stands in for meshcat's ``ViewerWindow``: keeps the packed commands in order, with
    the random uuids of geometries and materials renumbered (same input, same page)."""

    def __init__(self) -> None:
        self.commands: list[bytes] = []
        self._uuids: dict[str, str] = {}

    def send(self, command) -> None:
        import umsgpack

        data = command.lower()
        self._declare(data)
        self.commands.append(umsgpack.packb(self._renumber(data)))

    def _declare(self, x) -> None:
        if isinstance(x, dict) and isinstance(x.get("uuid"), str):
            self._uuids.setdefault(x["uuid"], str(uuid.UUID(int=len(self._uuids) + 1)))
        for v in x.values() if isinstance(x, dict) else x if isinstance(x, list) else ():
            self._declare(v)

    def _renumber(self, x):
        if isinstance(x, dict):
            return {k: self._renumber(v) for k, v in x.items()}
        if isinstance(x, list):
            return [self._renumber(v) for v in x]
        return self._uuids.get(x, x) if isinstance(x, str) else x

    def blob(self) -> bytes:
        """The commands, each prefixed by its length (4 bytes, big-endian)."""
        return b"".join(struct.pack(">I", len(c)) + c for c in self.commands)


def urdf_models(urdf_path: Path, package_dir: Path, locked: Mapping[str, float] | None):
    """Kinematic and visual models of the URDF, with ``locked`` joints fixed and removed."""
    import pinocchio as pin

    if not urdf_path.is_file():
        raise FileNotFoundError(f"URDF not found: {urdf_path}")
    model = pin.buildModelFromUrdf(str(urdf_path))
    visual = pin.buildGeomFromUrdf(
        model, str(urdf_path), pin.VISUAL, package_dirs=[str(package_dir)]
    )
    if not locked:
        return model, visual
    q_ref = pin.neutral(model)
    ids = []
    for name, value in locked.items():
        if not model.existJointName(name):
            valid = ", ".join(n for n in model.names[1:])
            raise ValueError(f"locked joint {name!r} not in {urdf_path.name}; joints: {valid}")
        j = model.getJointId(name)
        if model.joints[j].nq != 1:
            raise ValueError(f"locked joint {name!r} is not a 1-dof joint")
        q_ref[model.joints[j].idx_q] = float(value)
        ids.append(j)
    reduced, (visual_red,) = pin.buildReducedModel(model, [visual], ids, q_ref)
    return reduced, visual_red


def _keyframes(t: np.ndarray, fps: int, max_frames: int) -> np.ndarray:
    """Indices of the samples nearest to evenly spaced times: at most ``max_frames``, at
    most ``fps`` per second of trajectory, first and last included, distinct times."""
    if len(t) == 1:
        return np.zeros(1, dtype=int)
    n = max(2, min(int(max_frames), len(t), int(np.floor((t[-1] - t[0]) * fps)) + 1))
    targets = np.linspace(t[0], t[-1], n)
    right = np.clip(np.searchsorted(t, targets), 1, len(t) - 1)
    idx = np.where(targets - t[right - 1] <= t[right] - targets, right - 1, right)
    idx = np.unique(np.concatenate([[0], idx, [len(t) - 1]]))
    _, first = np.unique(t[idx], return_index=True)  # one key per distinct time
    return idx[np.sort(first)]


def _check(q_traj, t, nq: int, extra_points, plane):
    """Validated arrays (ValueError naming the bad argument and the expected shape)."""
    q, t = np.asarray(q_traj, dtype=float), np.asarray(t, dtype=float)
    if q.ndim != 2 or q.shape[1] != nq or len(q) == 0:
        raise ValueError(
            f"q_traj must have shape (T, {nq}) (model after locking joints); got {q.shape}"
        )
    if t.shape != (len(q),) or np.any(np.diff(t) < 0):
        raise ValueError(f"t must be non-decreasing with shape ({len(q)},); got shape {t.shape}")
    pts = None if extra_points is None else np.asarray(extra_points, dtype=float)
    if pts is not None and pts.shape != (len(t), 3):
        raise ValueError(f"extra_points must have shape ({len(t)}, 3); got {pts.shape}")
    if not all(np.all(np.isfinite(a)) for a in (q, t, pts if pts is not None else 0.0)):
        raise ValueError("q_traj, t and extra_points must be finite")
    if plane is not None:
        center, normal, size = np.asarray(plane[0], float), np.asarray(plane[1], float), plane[2]
        if center.shape != (3,) or normal.shape != (3,) or not np.linalg.norm(normal) > 0:
            raise ValueError("plane must be (center (3,), nonzero normal (3,), size > 0)")
        if not float(size) > 0:
            raise ValueError(f"plane size must be positive; got {size}")
        plane = (center, normal / np.linalg.norm(normal), float(size))
    return q, t, pts, plane


def _add_extras(vis, anim, frames: list, key_idx: np.ndarray, pts, plane) -> None:
    """Tool path (polyline, and a marker moving along it) and the optional plane."""
    import meshcat.geometry as mg
    import pinocchio as pin
    from meshcat.animation import AnimationClip, AnimationTrack

    if pts is not None:
        trace = np.vstack([pts[:: max(1, len(pts) // 5000)], pts[-1:]]).T.astype(np.float32)
        vis["pfaff/trace"].set_object(
            mg.Line(mg.PointsGeometry(trace), mg.LineBasicMaterial(color=0xFF7F0E, linewidth=2))
        )
        vis["pfaff/marker"].set_object(mg.Sphere(0.012), mg.MeshPhongMaterial(color=0xD62728))
        vis["pfaff/marker"].set_transform(_translation(pts[key_idx[0]]))
        track = AnimationTrack("position", "vector3", frames, pts[key_idx].round(6).tolist())
        anim.clips[vis["pfaff/marker"].path] = AnimationClip(
            {"position": track}, anim.default_framerate
        )
    if plane is not None:
        center, normal, size = plane
        mat = mg.MeshPhongMaterial(color=0x6B8FB5, opacity=0.45, transparent=True)
        vis["pfaff/plane"].set_object(mg.Box([size, size, 1e-3 * size]), mat)
        T = _translation(center)
        T[:3, :3] = pin.Quaternion.FromTwoVectors(np.array([0.0, 0.0, 1.0]), normal).matrix()
        vis["pfaff/plane"].set_transform(T)


def _translation(p) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T


def scene_html(
    urdf_path: str | Path | None,
    package_dir: str | Path,
    q_traj: np.ndarray | None,
    t: np.ndarray,
    locked_joints: Mapping[str, float] | None = None,
    fps: int = 25,
    max_frames: int = 250,
    extra_points: np.ndarray | None = None,
    title: str = "",
    plane: tuple[np.ndarray, np.ndarray, float] | None = None,
    compress: bool = True,
    robots: Sequence[Mapping] | None = None,
    boxes: Sequence[Mapping] | None = None,
    arrows: Sequence[Mapping] | None = None,
) -> str:
    """A self-contained HTML page animating robots' visual meshes along a trajectory.

    Parameters
    ----------
    urdf_path : path of the robot's URDF (``None``: no primary robot, only ``robots``).
    package_dir : Pinocchio's package directory for ``package://`` meshes
        (``pfaff.mechanism.robots.package_dir()`` for example-robot-data).
    q_traj : (T, nq) array
        Configurations of the model *after* locking ``locked_joints`` (``None`` when
        ``urdf_path`` is ``None``).
    t : (T,) array
        Sample times [s], non-decreasing.
    locked_joints : joint name -> value; these joints are fixed and removed from q
        (e.g. the Panda's fingers: ``{"panda_finger_joint1": 0.0, ...}``).
    fps : keyframes per second of trajectory (at most); playback is real time.
    max_frames : at most this many keyframes (evenly spread in time).
    extra_points : (T, 3) array, optional
        A point path in the world frame (e.g. the tool path): drawn as a polyline,
        with a marker moving along it.
    title : shown in the page's corner and title bar.
    plane : (center (3,), normal (3,), size), optional
        A translucent square of side ``size`` [m] (e.g. the contact surface).
    compress : gzip the scene data (about 3x smaller; needs a browser with
        ``DecompressionStream``: Chrome 80, Firefox 113, Safari 16.4 or later).
    robots : further robots, each a mapping with ``"urdf"`` (path), ``"q"`` ((T, nq_i),
        after locking), optional ``"base"`` (4 x 4 placement of the robot's world in
        the scene; identity), ``"locked"`` (as ``locked_joints``) and ``"prefix"``
        (viewer node name; ``robot<i>``). Robot i's meshes are at
        ``/meshcat/<prefix>/visuals/<geometry>``, keyed in the robot's own frame under
        a node placed at ``base``.
    boxes : boxes, each a mapping with ``"size"`` (3 edge lengths [m]), ``"poses"``
        ((T, 7): position and quaternion x, y, z, w as Pinocchio's free flyer, or
        (T, 4, 4)), optional ``"color"`` (0xRRGGBB), ``"opacity"`` (1: opaque) and
        ``"name"`` (``box<i>``): animated at ``/meshcat/pfaff/<name>``.
    arrows : forces, each a mapping with ``"points"`` ((T, 3) points of application [m])
        and ``"vectors"`` ((T, 3), the force drawn, in metres: the caller's scale; NaN
        or 0 where there is none), optional ``"radius"`` (the cone's base [m], 0.01),
        ``"color"`` and ``"name"`` (``arrow<i>``): cones at ``/meshcat/pfaff/<name>``
        (:mod:`pfaff.api.arrows`).

    Returns
    -------
    str
        The HTML page: viewer script, meshes and animation inlined; it loads
        nothing from the network.
    """
    try:
        import meshcat
        from meshcat.animation import Animation
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("scene_html needs meshcat: pip install 'meshcat>=0.3.2'") from exc

    if int(fps) <= 0 or int(max_frames) <= 0:
        raise ValueError(f"fps and max_frames must be positive; got {fps}, {max_frames}")
    entries = [] if urdf_path is None else [(urdf_path, q_traj, locked_joints, None, _ROOT)]
    for i, rob in enumerate(robots or ()):
        if "urdf" not in rob or "q" not in rob:
            raise ValueError(f"robots[{i}] needs 'urdf' and 'q'; got keys {sorted(rob)}")
        base = None if rob.get("base") is None else np.asarray(rob["base"], dtype=float)
        if base is not None and base.shape != (4, 4):
            raise ValueError(f"robots[{i}]['base'] must be 4 x 4; got shape {base.shape}")
        entries.append((rob["urdf"], rob["q"], rob.get("locked"), base, rob.get("prefix")))
    if not entries and not boxes:
        raise ValueError("nothing to draw: give urdf_path, robots or boxes")
    loaded = []
    for k, (urdf, qk, locked, base, root) in enumerate(entries):
        model, visual = urdf_models(Path(urdf), Path(package_dir), locked)
        if qk is None:
            raise ValueError("q_traj is required with urdf_path")
        q, t_chk, pts, plane_chk = _check(qk, t, model.nq, extra_points, plane)
        loaded.append((model, visual, q, base, root or f"robot{k}"))
    if not loaded:
        q0 = np.zeros((len(np.asarray(t)), 0))
        _, t_chk, pts, plane_chk = _check(q0, t, 0, extra_points, plane)
    t, plane = t_chk, plane_chk
    box_list = [_check_box(i, b, len(t)) for i, b in enumerate(boxes or ())]
    arrow_list = [check_arrow(i, a, len(t)) for i, a in enumerate(arrows or ())]
    key_idx = _keyframes(t, int(fps), int(max_frames))
    t_keys = (t[key_idx] - t[0]) * fps  # meshcat key times are in frames of the clip's fps

    rec = _Recorder()
    vis = meshcat.Visualizer(window=rec)
    anim = Animation(default_framerate=int(fps))
    frames = t_keys.round(6).tolist()
    seen = [np.zeros((0, 3))]
    for model, visual, q, base, root in loaded:
        seen.append(_add_robot(vis, anim, frames, key_idx, model, visual, q, base, root))
    for name, size, color, pose in box_list:
        seen.append(_add_box(vis, anim, frames, key_idx, name, size, color, pose))
    for arrow in arrow_list:
        add_arrow(vis, anim, frames, key_idx, *arrow)
    _add_extras(vis, anim, frames, key_idx, pts, plane)

    target = camera_and_floor(vis, np.vstack(seen + ([] if pts is None else [pts])))
    if len(key_idx) > 1:
        vis.set_animation(anim, play=True, repetitions=float("inf"))
    return scene_page(rec.blob(), title, compress, target)


def _add_robot(vis, anim, frames, key_idx, model, visual, q, base, root) -> np.ndarray:
    """Load one robot under ``root`` (placed at ``base``) and key its geometries; returns
    the keyed geometry positions and bounding-box corners in the world (for the camera
    and the floor)."""
    import pinocchio as pin
    from meshcat.animation import AnimationClip, AnimationTrack
    from pinocchio.visualize import MeshcatVisualizer

    viz = MeshcatVisualizer(model, None, visual)
    viz.initViewer(viewer=vis)
    pin.forwardKinematics(model, viz.data, q[0])  # loading places the meshes at q[0]
    viz.loadViewerModel(rootNodeName=root)
    if base is not None:
        vis[root].set_transform(base)

    data, vdata = model.createData(), pin.GeometryData(visual)
    n_geom = len(visual.geometryObjects)
    pos = np.empty((len(key_idx), n_geom, 3))
    quat = np.empty((len(key_idx), n_geom, 4))
    boxes = [local_box(obj) for obj in visual.geometryObjects]
    extent = []
    for k, i in enumerate(key_idx):
        pin.forwardKinematics(model, data, q[i])
        pin.updateGeometryPlacements(model, data, visual, vdata)
        for g in range(n_geom):
            R, p = vdata.oMg[g].rotation, vdata.oMg[g].translation
            pos[k, g] = p
            quat[k, g] = pin.Quaternion(R).coeffs()  # x, y, z, w
            extent.append(boxes[g] @ R.T + p)
    fps = anim.default_framerate
    for g, obj in enumerate(visual.geometryObjects):
        path = vis[viz.getViewerNodeName(obj, pin.GeometryType.VISUAL)].path
        tracks = {
            name: AnimationTrack(name, name.replace("position", "vector3"), frames, v.tolist())
            for name, v in (("position", pos[:, g].round(6)), ("quaternion", quat[:, g].round(7)))
        }
        anim.clips[path] = AnimationClip(tracks, fps)
    pts = np.vstack([pos.reshape(-1, 3), *extent])
    return pts if base is None else pts @ base[:3, :3].T + base[:3, 3]


def _check_box(i: int, box: Mapping, n: int):
    """``(name, size, (color, opacity), poses (n, 7))`` of ``boxes[i]`` (ValueError
    naming it)."""
    import pinocchio as pin

    size = np.asarray(box.get("size", ()), dtype=float)
    if size.shape != (3,) or not np.all(size > 0):
        raise ValueError(f"boxes[{i}]['size'] must be 3 positive lengths; got {size}")
    poses = np.asarray(box.get("poses", ()), dtype=float)
    if poses.shape == (n, 4, 4):
        poses = np.array(
            [np.concatenate([T[:3, 3], pin.Quaternion(T[:3, :3]).coeffs()]) for T in poses]
        )
    if poses.shape != (n, 7) or not np.all(np.isfinite(poses)):
        raise ValueError(f"boxes[{i}]['poses'] must be finite, ({n}, 7) or ({n}, 4, 4)")
    norm = np.linalg.norm(poses[:, 3:], axis=1, keepdims=True)
    if not np.all(norm > 0):
        raise ValueError(f"boxes[{i}]['poses'] has a zero quaternion")
    poses = np.hstack([poses[:, :3], poses[:, 3:] / norm])
    opacity = float(box.get("opacity", 1.0))
    if not 0 < opacity <= 1:
        raise ValueError(f"boxes[{i}]['opacity'] must be in (0, 1]; got {opacity}")
    color = int(box.get("color", 0xC8894B))
    return str(box.get("name", f"box{i}")), size, (color, opacity), poses


def _add_box(vis, anim, frames, key_idx, name, size, color, poses) -> np.ndarray:
    """A box keyed along ``poses`` (position, quaternion x, y, z, w); returns its corners
    at every keyframe."""
    import meshcat.geometry as mg
    import pinocchio as pin
    from meshcat.animation import AnimationClip, AnimationTrack

    node = vis[f"pfaff/{name}"]
    (color, opacity) = color
    mat = mg.MeshPhongMaterial(color=color, opacity=opacity, transparent=opacity < 1)
    node.set_object(mg.Box(size.tolist()), mat)
    first = pin.XYZQUATToSE3(poses[key_idx[0]])
    node.set_transform(first.homogeneous)
    tracks = {
        name: AnimationTrack(name, jstype, frames, v.tolist())
        for name, jstype, v in (
            ("position", "vector3", poses[key_idx, :3].round(6)),
            ("quaternion", "quaternion", poses[key_idx, 3:].round(7)),
        )
    }
    anim.clips[node.path] = AnimationClip(tracks, anim.default_framerate)
    box = corners(-size / 2, size / 2)
    placed = [box @ pin.XYZQUATToSE3(poses[i]).rotation.T + poses[i, :3] for i in key_idx]
    return np.vstack([poses[key_idx, :3], *placed])
