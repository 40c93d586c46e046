"""A live 3D view of a :class:`~pfaff.api.system.System` in meshcat's browser viewer.

meshcat (Pinocchio's viewer of choice) serves its page on loopback
(``http://127.0.0.1:7000/static/`` unless that port is taken) and keeps the scene, so a
browser opened at any time shows the robot where it is now. A URDF robot is drawn with
its visual meshes (Pinocchio's ``MeshcatVisualizer``), an MJCF model with its geoms
(boxes, spheres, cylinders, capsules, ellipsoids) on their frames. ``show(q)`` moves
the robot; while a simulation steps it sends at most ``fps`` poses per second of wall
time, so drawing never slows the stepping down by more than that.

The standalone ``scene.html`` of a run's report (:mod:`pfaff.report.scene3d`) needs no
server; this view is for watching a simulation while it runs.
"""

from __future__ import annotations

import contextlib
import io
import time

import numpy as np
import pinocchio as pin

from pfaff.report.scene_view import camera_and_floor

__all__ = ["LiveView"]

#: the colour of an MJCF model's geoms (orange: apart from the viewer's blue background)
COLOR = 0xE69138

#: meshcat's cylinders stand along y; MJCF's along z: x-rotation by 90 degrees
_Z_UP = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])


def _geometry(gtype: str, size: np.ndarray):
    """meshcat geometry of an MJCF geom (half-sizes as MJCF gives them) and the extra
    rotation that turns meshcat's y axis onto the geom's z axis."""
    import meshcat.geometry as mg

    r = float(size[0])
    if gtype == "box":
        return mg.Box((2 * np.asarray(size[:3])).tolist()), np.eye(4)
    if gtype == "sphere":
        return mg.Sphere(r), np.eye(4)
    if gtype == "ellipsoid":
        return mg.Ellipsoid(np.asarray(size[:3]).tolist()), np.eye(4)
    if gtype == "capsule":  # drawn as its cylinder and its two caps' length
        return mg.Cylinder(2 * (float(size[1]) + r), r), _Z_UP
    if gtype == "cylinder":
        return mg.Cylinder(2 * float(size[1]), r), _Z_UP
    return mg.Box([max(2 * r, 1e-2)] * 3), np.eye(4)


def _half_extents(gtype: str, size: np.ndarray) -> np.ndarray:
    """Half-sizes of the geom's box in meshcat's axes (a cylinder's axis along y)."""
    r = float(size[0])
    if gtype in ("box", "ellipsoid"):
        return np.asarray(size[:3], dtype=float)
    if gtype in ("capsule", "cylinder"):
        h = float(size[1]) + (r if gtype == "capsule" else 0.0)
        return np.array([r, h, r])
    return np.full(3, r)


#: the signs of a box's 8 corners, as columns
_SIGNS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float).T


class LiveView:
    """A meshcat server on loopback showing one system.

    Parameters
    ----------
    system : the :class:`~pfaff.api.system.System` to draw (its start is shown first).
    fps : at most this many poses per second of wall time reach the browser from
        :meth:`show` (``force=True`` sends one regardless).
    zmq_url : an already running meshcat server to draw into (default: start one).
    speed : :meth:`follow` paces a simulation to this multiple of real time.

    Attributes
    ----------
    url : the page to open in a browser.
    """

    def __init__(
        self, system, fps: float = 30.0, zmq_url: str | None = None, speed: float = 1.0
    ) -> None:
        import meshcat

        if not fps > 0:
            raise ValueError(f"fps must be > 0 poses per second; got {fps!r}")
        if not speed > 0:
            raise ValueError(f"speed must be > 0 (1: real time); got {speed!r}")
        self.speed = float(speed)
        self._clock: tuple[float, float] | None = None  # (wall, simulated) time of follow's start
        self.system = system
        self.period = 1.0 / float(fps)
        self._last = -np.inf
        with contextlib.redirect_stdout(io.StringIO()):  # meshcat prints its URL: see .url
            self.vis = meshcat.Visualizer(zmq_url=zmq_url)
        self.model = system.mechanism.model
        self.data = self.model.createData()
        self._urdf = None
        self._geoms: list[tuple[str, int, np.ndarray, np.ndarray]] = []  # path, frame, T, half
        if system.model.urdf:
            self._load_urdf()
        else:
            self._load_geoms()
        self.show(system.q0, force=True)
        camera_and_floor(self.vis, self._points(system.q0))

    @property
    def url(self) -> str:
        return self.vis.url()

    def _load_urdf(self) -> None:
        from pathlib import Path

        from pinocchio.visualize import MeshcatVisualizer

        from pfaff.mechanism.robots import package_dir
        from pfaff.report.scene3d import urdf_models

        model, visual = urdf_models(
            Path(self.system.model.urdf), package_dir(), self.system.model.locked or None
        )
        viz = MeshcatVisualizer(model, None, visual)
        viz.initViewer(viewer=self.vis)
        viz.loadViewerModel(rootNodeName="pfaff")
        self._urdf = viz

    def _load_geoms(self) -> None:
        import meshcat.geometry as mg

        material = mg.MeshLambertMaterial(color=COLOR)
        for i, (frame, gtype, size, placement) in enumerate(self.system.model.geoms[:500]):
            geometry, fix = _geometry(gtype, np.asarray(size, dtype=float))
            path = f"pfaff/geom{i}"
            self.vis[path].set_object(geometry, material)
            half = _half_extents(gtype, np.asarray(size, dtype=float))
            self._geoms.append((path, self.model.getFrameId(frame), placement @ fix, half))
        if not self._geoms:  # no geoms: a small sphere at every joint
            for j in range(1, self.model.njoints):
                path = f"pfaff/joint{j}"
                self.vis[path].set_object(mg.Sphere(0.02), material)
                self._geoms.append((path, -j, np.eye(4), np.full(3, 0.02)))

    def _poses(self, q: np.ndarray) -> list[tuple[str, np.ndarray]]:
        pin.framesForwardKinematics(self.model, self.data, q)
        out = []
        for path, fid, T, _ in self._geoms:
            X = self.data.oMi[-fid] if fid < 0 else self.data.oMf[fid]
            out.append((path, X.homogeneous @ T))
        return out

    def _points(self, q: np.ndarray) -> np.ndarray:
        pin.framesForwardKinematics(self.model, self.data, q)
        pts = [self.data.oMi[j].translation for j in range(self.model.njoints)]
        for (_, T), (_, _, _, half) in zip(self._poses(q), self._geoms):
            pts += list((T[:3, 3, None] + (T[:3, :3] * half) @ _SIGNS).T)  # its box's 8 corners
        return np.array(pts)

    def show(self, q: np.ndarray, force: bool = False) -> bool:
        """Move the robot to ``q`` (nq,); returns whether the pose was sent (at most
        ``fps`` per second unless ``force``)."""
        now = time.monotonic()
        if not force and now - self._last < self.period:
            return False
        q = self.system._q(q)
        if self._urdf is not None:
            self._urdf.display(q)
        for path, T in self._poses(q):
            self.vis[path].set_transform(T)
        self._last = now
        return True

    def follow(self, t: float, q: np.ndarray) -> None:
        """Show ``q`` of simulated time ``t``, paced to ``speed`` times real time (a
        watcher of :func:`pfaff.simulate.watch.watching`: ``pfaff run FILE --view``)."""
        now = time.monotonic()
        if self._clock is None:
            self._clock = (now, float(t))
        wall0, sim0 = self._clock
        ahead = (float(t) - sim0) / self.speed - (now - wall0)
        if ahead > 0:
            time.sleep(ahead)
        self.show(q)

    def close(self) -> None:
        """Stop the meshcat server this view started (none when given ``zmq_url``)."""
        proc = getattr(self.vis.window, "server_proc", None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
