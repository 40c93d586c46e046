"""Where the floor and the default camera of a 3D scene go (:mod:`pfaff.report.scene3d`).

The floor (meshcat's grid, scaled to the scene) lies under the base and under
everything the scene draws; the camera looks at the middle of it from the
front-right and above, far enough to see it whole. Points are in the world
frame (z up); the viewer's camera uses three.js coordinates (y up).
"""

from __future__ import annotations

import numpy as np

__all__ = ["scene_view", "camera_and_floor", "corners", "local_box"]

#: the default camera's direction from its target (world x, y, z): front-right, 29 deg up
_VIEW = np.array([0.72, 0.5, 0.48]) / np.linalg.norm([0.72, 0.5, 0.48])
_HALF_FOV = np.radians(37.5)  # meshcat's camera: 75 deg vertical field of view
_GRID_SPACING = 0.5  # meshcat's grid: 20 m wide, 40 divisions


def _nice(x: float) -> float:
    """The number 1, 2 or 5 times a power of ten nearest below ``x`` (> 0)."""
    e = np.floor(np.log10(x))
    m = x / 10**e
    return float((5 if m >= 5 else 2 if m >= 2 else 1) * 10**e)


def scene_view(points: np.ndarray) -> dict[str, np.ndarray | float]:
    """Floor and camera of a scene whose keyed geometry visits ``points`` (N, 3) [m].

    The floor lies at ``z = min(0, lowest point)``: under the base (the world
    origin) and under everything that moves, so nothing hangs below it. The
    camera looks at the middle of the bounding box of the points and the base,
    from the front-right and 29 degrees above, far enough to see it whole.

    Returns
    -------
    dict
        ``floor_z`` [m], ``target`` (3,) and ``eye`` (3,) in world coordinates
        (z up), ``spacing`` [m] of the floor grid and ``center`` (3,) of the grid.
    """
    pts = np.vstack([np.zeros((1, 3)), np.asarray(points, dtype=float).reshape(-1, 3)])
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    floor_z = float(min(0.0, lo[2]))
    lo[2] = floor_z
    target = 0.5 * (lo + hi)
    radius = max(0.25, 0.5 * float(np.linalg.norm(hi - lo)))
    eye = target + 1.15 * radius / np.sin(_HALF_FOV) * _VIEW
    spacing = _nice(max(radius / 4, 0.01))
    block = 10 * spacing  # the grid's centre lines pass through the origin when it is near
    center = np.array([*(np.round(target[:2] / block) * block), floor_z])
    return {"floor_z": floor_z, "target": target, "eye": eye, "spacing": spacing, "center": center}


def _yup(p: np.ndarray) -> list[float]:
    """World (z up) -> the viewer's camera coordinates (three.js, y up): (x, z, -y)."""
    return [float(p[0]), float(p[2]), float(-p[1])]


def camera_and_floor(vis, points: np.ndarray) -> list[float]:
    """Place meshcat's grid as the floor and the default camera (:func:`scene_view`);
    returns the camera target in the viewer's coordinates (the page's loader aims
    the orbit controls there)."""
    view = scene_view(points)
    scale = view["spacing"] / _GRID_SPACING
    T = np.diag([scale, scale, scale, 1.0])
    T[:3, 3] = view["center"]
    vis["/Grid"].set_transform(T)
    vis["/Cameras/default/rotated/<object>"].set_property("position", _yup(view["eye"]))
    return _yup(view["target"])


def corners(lo, hi) -> np.ndarray:
    """The 8 corners (8, 3) of the axis-aligned box [lo, hi]."""
    return np.array(np.meshgrid(*zip(lo, hi), indexing="ij")).reshape(3, -1).T


def local_box(obj) -> np.ndarray:
    """Corners of a visual geometry's bounding box in its own frame (its origin alone
    when the shape gives none), so the camera and the floor account for the meshes."""
    try:
        geom = obj.geometry
        geom.computeLocalAABB()
        lo, hi = np.asarray(geom.aabb_local.min_), np.asarray(geom.aabb_local.max_)
    except (AttributeError, RuntimeError, TypeError):
        return np.zeros((1, 3))
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi >= lo)):
        return np.zeros((1, 3))
    return corners(lo, hi)
