"""MJCF (MuJoCo XML) read as data: defaults, orientations, geom inertias.

Only what a rigid-body model needs is read; elements pfaff cannot represent
are refused by name (:class:`~pfaff.mechanism.base.ModelError`). Conventions
follow MuJoCo's XML reference: ``<compiler angle="degree">`` by default,
``eulerseq="xyz"`` (lower case: axes that rotate with the frame), quaternions
(w, x, y, z), geom mass from ``density`` (default 1000 kg/m^3) unless ``mass``
is given, and the geom inertias of MuJoCo's compiler (capsule = cylinder plus
two hemispheres).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from pfaff.mechanism.base import ModelError

#: elements inside <body>/<worldbody> that pfaff reads or may ignore safely
BODY_CHILDREN = {"body", "joint", "freejoint", "geom", "site", "inertial", "camera", "light"}
#: elements that change the model in ways pfaff does not read: refused by name
REFUSED = {"include", "frame", "replicate", "attach", "composite", "flexcomp", "plugin"}


def where(el: ET.Element) -> str:
    """``<tag name="...">`` for messages."""
    name = el.get("name")
    return f"<{el.tag}{f' name={name!r}' if name else ''}>"


def floats(el: ET.Element, key: str, n: int | None, default=None, attrs=None) -> np.ndarray:
    """Attribute ``key`` as ``n`` finite floats (any count when ``n`` is None)."""
    raw = (attrs or {}).get(key, el.get(key)) if attrs is not None else el.get(key)
    if raw is None:
        if default is None:
            raise ModelError(f"MJCF {where(el)}: attribute {key!r} is required")
        return np.asarray(default, dtype=float)
    try:
        x = np.array([float(s) for s in raw.split()])
    except ValueError:
        raise ModelError(f"MJCF {where(el)}: {key}={raw!r} is not a list of numbers") from None
    if (n is not None and x.size != n) or not np.all(np.isfinite(x)):
        count = f"{n} finite numbers" if n is not None else "finite numbers"
        raise ModelError(f"MJCF {where(el)}: {key}={raw!r} must be {count}")
    return x


@dataclass(frozen=True)
class Compiler:
    """The ``<compiler>`` settings pfaff honours."""

    degree: bool = True
    eulerseq: str = "xyz"

    @staticmethod
    def read(root: ET.Element) -> Compiler:
        out = Compiler()
        for c in root.iter("compiler"):
            angle = c.get("angle", "degree" if out.degree else "radian")
            if angle not in ("degree", "radian"):
                raise ModelError(f"MJCF <compiler angle={angle!r}>: valid: degree, radian")
            seq = c.get("eulerseq", out.eulerseq)
            if len(seq) != 3 or any(ch not in "xyzXYZ" for ch in seq):
                raise ModelError(f"MJCF <compiler eulerseq={seq!r}>: three of x y z X Y Z")
            if c.get("coordinate", "local") != "local":
                raise ModelError("MJCF <compiler coordinate='global'> is not supported")
            out = Compiler(angle == "degree", seq)
        return out

    def angle(self, x: float) -> float:
        return float(np.deg2rad(x)) if self.degree else float(x)


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a (w, x, y, z) quaternion (normalised first)."""
    n = np.linalg.norm(q)
    if not n > 0:
        raise ModelError(f"quaternion {q.tolist()} has zero norm")
    w, x, y, z = q / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _axis_angle_quat(axis: np.ndarray, angle: float) -> np.ndarray:
    n = np.linalg.norm(axis)
    if not n > 0:
        raise ModelError(f"rotation axis {axis.tolist()} has zero length")
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis / n])


def _min_rotation(z: np.ndarray) -> np.ndarray:
    """Quaternion of the smallest rotation taking (0, 0, 1) to ``z``."""
    n = np.linalg.norm(z)
    if not n > 0:
        raise ModelError(f"zaxis {z.tolist()} has zero length")
    z = z / n
    axis = np.cross([0.0, 0.0, 1.0], z)
    s = np.linalg.norm(axis)
    if s < 1e-14:
        return np.array([1.0, 0, 0, 0]) if z[2] > 0 else np.array([0.0, 1, 0, 0])
    return _axis_angle_quat(axis, float(np.arctan2(s, z[2])))


def orientation(el: ET.Element, comp: Compiler, attrs: dict | None = None) -> np.ndarray:
    """The 3 x 3 rotation of an element's frame (quat, axisangle, euler, xyaxes, zaxis)."""
    a = attrs if attrs is not None else el.attrib
    given = [k for k in ("quat", "axisangle", "euler", "xyaxes", "zaxis") if k in a]
    if len(given) > 1:
        raise ModelError(f"MJCF {where(el)}: give one orientation, not {', '.join(given)}")
    if not given:
        return np.eye(3)
    key = given[0]
    if key == "quat":
        return quat_to_matrix(floats(el, key, 4, attrs=a))
    if key == "axisangle":
        v = floats(el, key, 4, attrs=a)
        return quat_to_matrix(_axis_angle_quat(v[:3], comp.angle(v[3])))
    if key == "euler":
        v = floats(el, key, 3, attrs=a)
        q = np.array([1.0, 0, 0, 0])
        for ch, ang in zip(comp.eulerseq, v):
            r = _axis_angle_quat(np.eye(3)["xyz".index(ch.lower())], comp.angle(ang))
            q = _quat_mul(q, r) if ch.islower() else _quat_mul(r, q)
        return quat_to_matrix(q)
    if key == "xyaxes":
        v = floats(el, key, 6, attrs=a)
        x = v[:3] / np.linalg.norm(v[:3])
        y = v[3:] - (v[3:] @ x) * x
        if not np.linalg.norm(y) > 1e-12:
            raise ModelError(f"MJCF {where(el)}: xyaxes are parallel")
        y /= np.linalg.norm(y)
        return np.column_stack([x, y, np.cross(x, y)])
    return quat_to_matrix(_min_rotation(floats(el, key, 3, attrs=a)))


class Defaults:
    """MuJoCo's ``<default>`` classes: attributes per element tag, inherited by nesting."""

    def __init__(self, root: ET.Element) -> None:
        self.classes: dict[str, dict[str, dict[str, str]]] = {"main": {}}
        for top in root.findall("default"):
            self._read(top, "main", {})

    def _read(self, el: ET.Element, name: str, inherited: dict[str, dict[str, str]]) -> None:
        own = {tag: dict(attrs) for tag, attrs in inherited.items()}
        for child in el:
            if child.tag == "default":
                continue
            own.setdefault(child.tag, {}).update(child.attrib)
        self.classes[name] = own
        for child in el.findall("default"):
            cname = child.get("class")
            if cname is None:
                raise ModelError("MJCF: a nested <default> needs a class attribute")
            self._read(child, cname, own)

    def attrs(self, el: ET.Element, childclass: str) -> dict[str, str]:
        """The element's attributes over those of its class (or the body's childclass)."""
        cls = el.get("class", childclass)
        if cls not in self.classes:
            raise ModelError(
                f"MJCF {where(el)}: unknown default class {cls!r}; "
                f"valid: {', '.join(sorted(self.classes))}"
            )
        out = dict(self.classes[cls].get(el.tag, {}))
        out.update(el.attrib)
        return out


_SIZES = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}


def geom_shape(el: ET.Element, a: dict[str, str], comp: Compiler):
    """``(type, size (3,), pos (3,), R (3, 3))`` of a geom in its body's frame.

    ``fromto`` sets the position, the z axis and the half-length of capsules,
    cylinders, boxes and ellipsoids (MuJoCo's compiler).
    """
    gtype = a.get("type", "sphere")
    size = np.zeros(3)
    if "size" in a:
        s = floats(el, "size", None, attrs=a)
        size[: min(3, s.size)] = s[:3]
    pos = floats(el, "pos", 3, (0, 0, 0), attrs=a)
    R = orientation(el, comp, a)
    if "fromto" in a and gtype in _SIZES:
        ft = floats(el, "fromto", 6, attrs=a)
        if gtype == "sphere":
            raise ModelError(f"MJCF {where(el)}: fromto is not valid for a sphere")
        d = ft[3:] - ft[:3]
        half = 0.5 * np.linalg.norm(d)
        if not half > 0:
            raise ModelError(f"MJCF {where(el)}: fromto has zero length")
        pos, R = 0.5 * (ft[:3] + ft[3:]), quat_to_matrix(_min_rotation(d))
        if gtype in ("capsule", "cylinder"):
            size[1] = half
        else:  # box, ellipsoid: size[0] is the transverse half-size
            size[1], size[2] = size[0], half
    return gtype, size, pos, R


def geom_inertia(el: ET.Element, a: dict[str, str], comp: Compiler):
    """``(mass, com (3,), I_com (3, 3))`` of a geom in its body's frame, or None (no mass).

    Shapes and formulas of MuJoCo's compiler (capsule: a cylinder and two hemispheres).
    """
    gtype = a.get("type", "sphere")
    if gtype == "plane":
        return None
    if gtype not in _SIZES:
        raise ModelError(
            f"MJCF {where(el)}: pfaff cannot compute the inertia of a {gtype!r} geom; "
            "give the body an <inertial> element (shapes read: " + ", ".join(_SIZES) + ")"
        )
    gtype, size, pos, R = geom_shape(el, a, comp)
    if np.any(size[: _SIZES[gtype]] <= 0):
        raise ModelError(f"MJCF {where(el)}: a {gtype} needs {_SIZES[gtype]} positive sizes")
    r = size[0]
    if gtype == "sphere":
        vol = 4 / 3 * np.pi * r**3
    elif gtype in ("capsule", "cylinder"):
        vol = np.pi * r**2 * 2 * size[1] + (4 / 3 * np.pi * r**3 if gtype == "capsule" else 0)
    elif gtype == "ellipsoid":
        vol = 4 / 3 * np.pi * size.prod()
    else:
        vol = 8 * size.prod()
    if "mass" in a:
        m = float(floats(el, "mass", 1, attrs=a)[0])
    else:
        m = float(floats(el, "density", 1, (1000.0,), attrs=a)[0]) * vol
    if m < 0:
        raise ModelError(f"MJCF {where(el)}: negative mass {m}")
    if m == 0:
        return None
    if gtype == "sphere":
        d = np.full(3, 0.4 * m * r**2)
    elif gtype == "cylinder":
        h = 2 * size[1]
        d = np.array([m * (3 * r**2 + h**2) / 12] * 2 + [m * r**2 / 2])
    elif gtype == "capsule":
        h = 2 * size[1]
        ms = m * 4 * r / (4 * r + 3 * h)  # two hemispheres
        mc = m - ms
        lat = mc * (3 * r**2 + h**2) / 12 + 0.4 * ms * r**2 + ms * h * (3 * r + 2 * h) / 8
        d = np.array([lat, lat, mc * r**2 / 2 + 0.4 * ms * r**2])
    elif gtype == "ellipsoid":
        s2 = size**2
        d = m / 5 * np.array([s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]])
    else:
        s2 = size**2
        d = m / 3 * np.array([s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]])
    return m, pos, R @ np.diag(d) @ R.T


def inertial(el: ET.Element, comp: Compiler):
    """``(mass, com, I_com)`` of an ``<inertial>`` element, in its body's frame."""
    m = float(floats(el, "mass", 1)[0])
    pos = floats(el, "pos", 3)
    R = orientation(el, comp)
    if "fullinertia" in el.attrib:
        f = floats(el, "fullinertia", 6)
        I = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]])
    else:
        I = np.diag(floats(el, "diaginertia", 3))
    return m, pos, R @ I @ R.T
