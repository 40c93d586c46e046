"""A live 3D view of a :class:`~pfaff.api.System` in the browser (design.md Sec. 4:
``pfaff view FILE``, ``Simulator(..., viewer=True)``), on meshcat.

meshcat's server runs as a subprocess on loopback (``127.0.0.1``, the first free port
from 7000) and forwards each pose to the browsers that opened :attr:`Viewer.url`. An MJCF
model is drawn with its geoms (boxes, spheres, capsules, cylinders, ellipsoids; a mesh
as its bounding box), a URDF with its visual meshes (Pinocchio's
``MeshcatVisualizer``), anything else as a sphere per joint. The standalone
``scene.html`` of a run's report (:mod:`pfaff.report.scene3d`) needs no server.
"""

from __future__ import annotations

import time

import numpy as np

from pfaff.api.arrows import newton_scale, weight_of
from pfaff.api.system import System

__all__ = ["Viewer"]

#: the colour of MJCF geoms (0xRRGGBB)
COLOR = 0x6FA8DC
#: a Simulator shows its state at most this often [Hz] (each pose is one message per
#: body to the server)
RATE = 30.0
_ROOT = "pfaff"


class Viewer:
    """A meshcat view of ``system`` at a configuration.

    Parameters
    ----------
    system : a :class:`pfaff.System`.
    q : the configuration shown first (default the assembled start ``system.q0``).
    open : also open the system's web browser on :attr:`url`.
    speed : :meth:`follow` paces a simulation to this multiple of real time.

    Attributes
    ----------
    url : where a browser shows the scene (``http://127.0.0.1:PORT/static/``).
    """

    def __init__(
        self, system: System, q: np.ndarray | None = None, open: bool = False, speed: float = 1.0
    ):
        import meshcat

        if not isinstance(system, System):
            raise TypeError(f"system must be a pfaff.System (pfaff.load), got {type(system)}")
        if not speed > 0:
            raise ValueError(f"speed must be > 0 (1: real time), got {speed!r}")
        self.speed = float(speed)
        self._clock: tuple[float, float] | None = None  # (wall, simulated) at follow's start
        self.system = system
        self.vis = meshcat.Visualizer()  # starts meshcat's server on 127.0.0.1
        self.url: str = self.vis.url()
        self._shown = -np.inf
        self._arrows: list = []  # the contact forces' cones drawn so far
        self.drawn: tuple[np.ndarray, np.ndarray] | None = None  # the last forces drawn
        self._pen = None  # the narrow phase of the contact pairs (draw_pair_forces)
        self._contacts = system.contacts is not None and bool(system.contacts.pairs)
        model = system.mechanism.model
        self._data = model.createData()
        self._pin_viz = None
        if system.model.geoms:
            self._nodes = [self._add_geom(i, g) for i, g in enumerate(system.model.geoms)]
        elif system.model.urdf is not None and self._add_urdf(system.model.urdf):
            self._nodes = []
        else:
            self._nodes = self._add_joints()
        self.display(system.q0 if q is None else q)
        self._aim()
        if open:
            self.vis.open()

    def __repr__(self) -> str:
        return f"Viewer({self.system!r} at {self.url})"

    def display(self, q: np.ndarray) -> None:
        """Show the configuration ``q`` (nq,)."""
        import pinocchio as pin

        q = np.asarray(q, dtype=float)
        nq = self.system.nq
        if q.shape != (nq,) or not np.isfinite(q).all():
            raise ValueError(f"q must be finite of shape ({nq},) = (nq,), got {q.shape}")
        if self._pin_viz is not None:
            self._pin_viz.display(q)
            return
        model, data = self.system.mechanism.model, self._data
        pin.framesForwardKinematics(model, data, q)
        for path, frame, T in self._nodes:
            self.vis[path].set_transform(data.oMf[frame].homogeneous @ T)

    def show(self, q: np.ndarray, now: float | None = None, contacts=None) -> bool:
        """:meth:`display` ``q`` unless the last pose was shown less than ``1 / RATE`` s
        ago (wall clock); True when shown. ``contacts``: a callable giving the contacts
        to draw with it (:meth:`draw_contacts`), called only when shown."""
        now = time.perf_counter() if now is None else now
        if now - self._shown < 1.0 / RATE:
            return False
        self.display(q)
        if contacts is not None:
            self.draw_contacts(contacts())
        self._shown = now
        return True

    def draw_contacts(self, contacts) -> None:
        """Draw each contact's force on its moving geom (``normal_force * normal +
        tangent``, :class:`pfaff.contact.model.Contact`) as a cone whose tip is the
        contact point (:meth:`draw_forces`)."""
        points = np.array([c.point for c in contacts], dtype=float).reshape(-1, 3)
        forces = np.array(
            [c.normal_force * np.asarray(c.normal) + np.asarray(c.tangent) for c in contacts],
            dtype=float,
        ).reshape(-1, 3)
        self.draw_forces(points, forces)

    def draw_pair_forces(self, q: np.ndarray, contact_force: np.ndarray) -> None:
        """Draw the contact pairs' recorded forces at ``q`` (``contact_force`` (pairs, 4):
        per pair its normal force and its friction force's world x, y, z on the moving
        geom, ``LimitedRun.contact_force``'s row), each at the middle of the pair's contact
        points as MuJoCo's narrow phase finds them at ``q``
        (:func:`pfaff.contact.penetration.contact_forces_world`, what a run's
        ``scene.html`` draws); a pair that does not touch draws none."""
        from pfaff.contact.penetration import Penetration, contact_forces_world

        if self.system.contacts is None or not self.system.contacts.pairs:
            raise ValueError("contact forces drawn for a system without contact pairs")
        if self._pen is None:
            self._pen = Penetration(self.system.contacts, self.system.q_to_qpos)
        force = np.asarray(contact_force, dtype=float)[None]
        points, vectors = contact_forces_world(self._pen, np.asarray(q, dtype=float), force)
        self.draw_forces(points[0], vectors[0])

    def draw_forces(self, points: np.ndarray, forces: np.ndarray) -> None:
        """Draw the ``forces`` (K, 3) [N] as cones whose tips are the ``points`` (K, 3)
        [m] (:mod:`pfaff.api.arrows`), the scale of a run's ``scene.html``: the system's
        weight half as long as the scene at its start is wide
        (:func:`~pfaff.api.arrows.newton_scale`); a NaN or zero force draws none, and the
        cones beyond K drawn before hide. ``drawn`` keeps what was drawn last: (tips,
        vectors [m])."""
        from pfaff.api.arrows import arrow_matrix, arrow_object, arrow_pose, newton_scale

        points = np.asarray(points, dtype=float).reshape(-1, 3)
        forces = np.asarray(forces, dtype=float).reshape(-1, 3)
        if self._per_newton is None:  # no gravity: the first forces' largest sets it
            largest = float(np.nanmax(np.linalg.norm(forces, axis=1), initial=0.0))
            if not largest > 0:
                return
            self._per_newton = newton_scale(self._width, 0.0, largest)
        vectors = self._per_newton * forces
        for i, (p, f) in enumerate(zip(points, vectors)):
            if i == len(self._arrows):
                node = self.vis[f"{_ROOT}_contacts/{i}"]
                arrow_object(node, 0.03 * self._width)
                self._arrows.append(node)
            self._arrows[i].set_transform(arrow_matrix(*arrow_pose(p, f)))
        hidden = arrow_matrix(*arrow_pose(np.zeros(3), np.zeros(3)))
        for node in self._arrows[len(points) :]:
            node.set_transform(hidden)
        self.drawn = (points, vectors)

    def follow(self, t: float, q: np.ndarray, contact_force: np.ndarray | None = None) -> None:
        """:meth:`show` ``q`` of simulated time ``t``, sleeping so that simulated time
        runs at :attr:`speed` times real time: a watcher of
        :func:`pfaff.simulate.watch.watching` (``pfaff run FILE --view``). With
        ``contact_force`` (a watcher registered with ``contacts=True`` of a run holding
        contacts), the pairs' forces are drawn with the pose (:meth:`draw_pair_forces`)."""
        now = time.perf_counter()
        if self._clock is None:
            self._clock = (now, float(t))
        wall0, sim0 = self._clock
        ahead = (float(t) - sim0) / self.speed - (now - wall0)
        if ahead > 0:
            time.sleep(ahead)
        if self.show(q) and contact_force is not None:
            self.draw_pair_forces(q, contact_force)

    def close(self) -> None:
        """Stop meshcat's server (the browsers' pages stop updating)."""
        proc = getattr(self.vis.window, "server_proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)

    def _aim(self) -> None:
        """Aim the camera at the frames' bounding box of the shown pose, from the
        front-right and above, far enough to see it whole (75 deg field of view)."""
        import meshcat.transformations as tf

        pts = np.array([f.translation for f in self._data.oMf])
        pts = np.vstack([pts, np.zeros((1, 3))])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        target = 0.5 * (lo + hi)
        radius = max(0.1, 0.5 * float(np.linalg.norm(hi - lo)))
        self._width = self._scene_width(2 * radius)
        if self._contacts:  # the shapes and the forces (the weight: half the width) seen
            radius = max(radius, self._width)
        view = np.array([0.72, -0.5, 0.48]) / np.linalg.norm([0.72, -0.5, 0.48])
        eye = 1.3 * radius / np.sin(np.radians(37.5)) * view
        self._radius = radius
        weight = weight_of(self.system.mechanism)
        self._per_newton = newton_scale(self._width, weight) if weight > 0 else None
        self.vis["/Cameras/default"].set_transform(tf.translation_matrix(target))
        # the camera's own coordinates are three.js's (y up): (x, z, -y)
        offset = [float(eye[0]), float(eye[2]), float(-eye[1])]
        self.vis["/Cameras/default/rotated/<object>"].set_property("position", offset)

    def _scene_width(self, default: float) -> float:
        """The width of a run's ``scene.html`` of this system at the shown pose
        (:func:`~pfaff.api.arrows.scene_width` of its geoms' boxes); ``default`` for a
        model without geoms."""
        from pfaff.api.arrows import geom_extent, scene_width

        if self.system.model.geoms:  # drawn as geoms (_add_geom), as a scene's boxes
            geoms = self.system.model.geoms[:200]  # the boxes a scene draws
            centres = [(self._data.oMf[f].homogeneous @ T)[:3, 3] for _, f, T in self._nodes[:200]]
            return scene_width(np.array(centres), [geom_extent(g[1], g[2]) for g in geoms])
        return max(0.1, default)

    # -- the shapes --------------------------------------------------------------------
    def _add_geom(self, i: int, geom) -> tuple[str, int, np.ndarray]:
        """One MJCF geom ``(frame, type, size, placement)`` under its own node."""
        import meshcat.geometry as mg
        import meshcat.transformations as tf

        frame, gtype, size, T = geom
        path = f"{_ROOT}/geom{i}"
        # with contacts half transparent, as a run's scene.html: the forces under and
        # inside the shapes seen
        see = {"opacity": 0.5, "transparent": True} if self._contacts else {}
        node, mat = self.vis[path], mg.MeshLambertMaterial(color=COLOR, **see)
        r = float(size[0])
        if gtype in ("box", "ellipsoid", "sphere"):
            shape = {
                "box": lambda: mg.Box(2 * np.asarray(size, dtype=float)),
                "ellipsoid": lambda: mg.Ellipsoid(np.asarray(size, dtype=float)),
                "sphere": lambda: mg.Sphere(r),
            }[gtype]()
            node["shape"].set_object(shape, mat)
        else:  # a cylinder or capsule along the geom's z (meshcat's cylinders lie along y)
            half = float(size[1])
            node["shape"].set_object(mg.Cylinder(2 * half, r), mat)
            node["shape"].set_transform(tf.rotation_matrix(np.pi / 2, [1, 0, 0]))
            if gtype == "capsule":
                for k, z in enumerate((half, -half)):
                    node[f"cap{k}"].set_object(mg.Sphere(r), mat)
                    node[f"cap{k}"].set_transform(tf.translation_matrix([0, 0, z]))
        return path, self.system.mechanism.frame_id(frame), np.asarray(T, dtype=float)

    def _add_urdf(self, urdf: str) -> bool:
        """The URDF's visual meshes through Pinocchio's MeshcatVisualizer; False when
        they do not load."""
        import pinocchio as pin
        from pinocchio.visualize import MeshcatVisualizer

        from pfaff.mechanism.robots import package_dir

        model = self.system.mechanism.model
        try:
            visual = pin.buildGeomFromUrdf(model, urdf, pin.VISUAL, [str(package_dir())])
        except (RuntimeError, ValueError):
            return False
        if not len(visual.geometryObjects):
            return False
        viz = MeshcatVisualizer(model, None, visual)
        viz.initViewer(viewer=self.vis)
        viz.loadViewerModel(rootNodeName=_ROOT)
        self._pin_viz = viz
        return True

    def _add_joints(self) -> list[tuple[str, int, np.ndarray]]:
        """A sphere at each joint (a model with nothing to draw)."""
        import meshcat.geometry as mg
        import pinocchio as pin

        model = self.system.mechanism.model
        out = []
        for f, frame in enumerate(model.frames):
            if frame.type != pin.FrameType.JOINT:
                continue
            path = f"{_ROOT}/joint{f}"
            self.vis[path].set_object(mg.Sphere(0.02), mg.MeshLambertMaterial(color=COLOR))
            out.append((path, f, np.eye(4)))
        return out
