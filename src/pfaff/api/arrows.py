"""Forces drawn as arrows in a 3D scene (:func:`pfaff.report.scene3d.scene_html`, the
live :class:`~pfaff.api.Viewer`): a cone pointing along the force, its tip at the point
of application (a contact force on a body comes from outside the body, where it can be
seen), its length the force's (the caller's scale, metres per newton), keyed per frame.

A cone of unit height along the node's y axis, its base at the node's origin, is placed
by the node's position, turned onto the force by its quaternion and stretched by its
scale; a force of zero shrinks it to nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = [
    "ARROW_COLOR",
    "add_arrow",
    "arrow_matrix",
    "arrow_object",
    "arrow_pose",
    "check_arrow",
    "geom_extent",
    "newton_scale",
    "scene_width",
    "weight_of",
]

#: the colour of force arrows (0xRRGGBB)
ARROW_COLOR = 0xD62728
_TINY = 1e-9  # the scale of a hidden arrow (three.js cannot invert a zero scale)


def geom_extent(gtype: str, size) -> np.ndarray:
    """The bounding box's edges [m] (3,) of an MJCF geom of ``gtype`` and ``size``, in
    its own frame (a scene draws it as that box; at least 1 mm each)."""
    size = np.asarray(size, dtype=float)
    r = size[0]
    ext = {
        "box": lambda: 2 * size,
        "ellipsoid": lambda: 2 * size,
        "sphere": lambda: np.full(3, 2 * r),
        "capsule": lambda: np.array([2 * r, 2 * r, 2 * (size[1] + r)]),
        "cylinder": lambda: np.array([2 * r, 2 * r, 2 * size[1]]),
    }[gtype]()
    return np.maximum(ext, 1e-3)


def scene_width(centres: np.ndarray, extents: np.ndarray) -> float:
    """How wide a scene is [m]: the spread of its shapes' ``centres`` (K, 3) at the start
    plus the largest of their bounding boxes' diagonals (``extents`` (K, 3)), at least
    0.1 m."""
    spread = float(np.linalg.norm(np.ptp(np.asarray(centres, dtype=float), axis=0)))
    return max(0.1, spread + max(float(np.linalg.norm(e)) for e in extents))


def weight_of(mechanism) -> float:
    """The weight [N] of a Pinocchio ``mechanism``: its bodies' mass times ``|g|``."""
    model = mechanism.model
    mass = sum(inertia.mass for inertia in model.inertias)
    return mass * float(np.linalg.norm(model.gravity.linear))


def newton_scale(width: float, weight: float, largest: float = 0.0) -> float:
    """Metres drawn per newton of force: the ``weight`` [N] of the mechanism is drawn
    half as long as the scene is ``width`` [m] wide (without gravity, the ``largest``
    force is)."""
    return 0.5 * width / (weight if weight > 0 else max(largest, 1e-12))


def arrow_object(node, radius: float, color: int = ARROW_COLOR) -> None:
    """Put the cone (base radius ``radius`` [m], unit height along y) under ``node``."""
    import meshcat.geometry as mg
    import meshcat.transformations as tf

    cone = mg.Cylinder(1.0, radiusTop=0.0, radiusBottom=float(radius))
    node["cone"].set_object(cone, mg.MeshPhongMaterial(color=int(color)))
    node["cone"].set_transform(tf.translation_matrix([0.0, 0.5, 0.0]))  # base at origin


def _half_turn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The quaternion (x, y, z, w) turning unit ``a`` onto unit ``b`` (``a . b >= 0``:
    the half-angle form ``(a x b, 1 + a . b)`` is well conditioned there)."""
    q = np.concatenate([np.cross(a, b), [1.0 + float(a @ b)]])
    return q / np.linalg.norm(q)


def _turn_y_onto(u: np.ndarray) -> np.ndarray:
    """The quaternion (x, y, z, w) turning the y axis onto unit ``u`` (against y: half a
    turn about x first, then from -y)."""
    y = np.array([0.0, 1.0, 0.0])
    if u[1] >= 0:
        return _half_turn(y, u)
    x, yy, z, w = _half_turn(-y, u)  # q2 * q1 with q1 = (1, 0, 0, 0): half a turn about x
    return np.array([w, z, -yy, -x])


def arrow_pose(point: np.ndarray, vector: np.ndarray) -> tuple[list, list, list]:
    """Position, quaternion (x, y, z, w) and scale of the arrow node drawing ``vector``
    [m] to ``point`` [m] (a hidden arrow for a zero or non-finite vector)."""
    length = float(np.linalg.norm(vector))
    if not (np.isfinite(length) and length > _TINY and np.all(np.isfinite(point))):
        return [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [_TINY] * 3
    u = np.asarray(vector, dtype=float) / length
    quat = _turn_y_onto(u).tolist()
    base = np.asarray(point, dtype=float) - length * u
    return [float(x) for x in base], quat, [1.0, length, 1.0]


def arrow_matrix(position, quat, scale) -> np.ndarray:
    """The 4 x 4 transform of an arrow node's position, quaternion (x, y, z, w), scale."""
    import meshcat.transformations as tf

    x, y, z, w = quat
    return (
        tf.translation_matrix(position)
        @ tf.quaternion_matrix([w, x, y, z])
        @ np.diag([*scale, 1.0])
    )


def check_arrow(i: int, arrow: Mapping, n: int) -> tuple:
    """``(name, points (n, 3), vectors (n, 3), color, radius)`` of ``arrows[i]``
    (ValueError naming it); NaN marks a sample without the force."""
    pts = np.asarray(arrow.get("points", ()), dtype=float)
    vec = np.asarray(arrow.get("vectors", ()), dtype=float)
    if pts.shape != (n, 3) or vec.shape != (n, 3):
        raise ValueError(
            f"arrows[{i}] needs 'points' and 'vectors' of shape ({n}, 3); "
            f"got {pts.shape} and {vec.shape}"
        )
    radius = float(arrow.get("radius", 0.01))
    if not radius > 0:
        raise ValueError(f"arrows[{i}]['radius'] must be a positive length [m]; got {radius}")
    name, color = str(arrow.get("name", f"arrow{i}")), int(arrow.get("color", ARROW_COLOR))
    return name, pts, vec, color, radius


def add_arrow(vis, anim, frames, key_idx, name, points, vectors, color, radius) -> None:
    """An arrow at ``/meshcat/pfaff/<name>`` keyed along ``points`` and ``vectors`` [m]
    at the samples ``key_idx`` (meshcat key times ``frames``)."""
    from meshcat.animation import AnimationClip, AnimationTrack

    node = vis[f"pfaff/{name}"]
    arrow_object(node, radius, color)
    poses = [arrow_pose(points[i], vectors[i]) for i in key_idx]
    node.set_transform(arrow_matrix(*poses[0]))
    tracks = {
        prop: AnimationTrack(prop, jstype, frames, [np.round(p[j], 7).tolist() for p in poses])
        for j, (prop, jstype) in enumerate(
            (("position", "vector3"), ("quaternion", "quaternion"), ("scale", "vector3"))
        )
    }
    anim.clips[node.path] = AnimationClip(tracks, anim.default_framerate)
