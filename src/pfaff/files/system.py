"""System files as data: the TOML schema, every key checked, loaded into a ModelSystem.

The file is parsed with ``tomllib`` (``tomli`` on Python 3.10) and never executed.
Every key is checked; a bad one is refused naming its key path, the value and
what is valid. Keys::

    title = "..."                      # optional
    gravity = [0, 0, -9.81]            # optional, overrides the model's
    plots = ["lambda", "phi_rows", "joint:NAME", "frame:NAME"]   # optional extra plots

    [model]                            # exactly one of file / robot
    file = "arm.urdf"                  # URDF or MJCF, relative to this file
    robot = "panda"                    # or an example-robot-data robot

    [start]                            # optional; default: the first keyframe or neutral
    keyframe = "home"                  # MJCF keyframe, or
    q = [...]                          # all nq values (pfaff coordinates), or
    joints = { elbow = 0.3 }           # one-dof joints set on the default posture
    v = [...]                          # optional velocity (nv)

    [simulation]                       # optional; --set overrides these
    t_end = 5.0
    dt = 1e-3
    integrator = "rk4"

    [[constraints]]                    # any number, added to the model's own
    type = "points_coincide"           # see CONSTRAINT_TYPES
    frame1 = "a"
    ...

    [[forces]]                         # any number of force elements (see FORCE_TYPES)
    type = "point_spring"              # point_spring, point_damper, joint_spring, ...
    frame1 = "a"                       # point elements: frame1, [frame2], [point1],
    stiffness = 100.0                  # [point2], [target]; joint elements: joint

    [[limits]]                         # any number, added to the model file's own
    type = "joint_limit"               # joint_limit, tendon_limit, ball_limit (LIMIT_TYPES)
    joint = "elbow"
    lower = -1.0                       # -inf / inf: one-sided
    upper = 1.5

    [controller]                       # optional; see pfaff.files.controller
    type = "pidc"
    joints = ["crank"]
    target = [-0.8]

Units: SI, radians; quaternion-free (orientations are 3 x 3 matrices).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from pfaff.constraints import LockedJoint, PointOnPlane, PointsCoincide
from pfaff.constraints.ball_angle import BallAngle
from pfaff.constraints.base import Constraint, ConstraintSet
from pfaff.constraints.coordinate_lock import CoordinateLock
from pfaff.constraints.coupling import JointCoupling
from pfaff.constraints.weld import FrameAligned, Weld
from pfaff.errors import ParameterError
from pfaff.files.controller import parse_controller
from pfaff.files.model import ModelSystem, load_model
from pfaff.files.schema import derive, parse_element, value
from pfaff.mechanism.base import QUAT_TOL, ModelError
from pfaff.simulate import INTEGRATORS
from pfaff.simulate.forces import (
    ForceSet,
    JointDamper,
    JointSpring,
    PointDamper,
    PointSpring,
    TendonSpring,
)
from pfaff.simulate.limit_bounds import Bound
from pfaff.simulate.limits import BallLimit, JointLimit, TendonLimit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: constraint type -> (class, {key: (kind, required)}), derived from each class's signature
#: (:func:`pfaff.files.schema.derive`); ``kinds=`` only where an annotation does not say
_POINTS = {"point1": "vec3", "point2": "vec3", "target": "vec3"}
CONSTRAINT_TYPES: dict[str, tuple[type, dict[str, tuple[str, bool]]]] = {
    "points_coincide": derive(PointsCoincide, _POINTS),
    "weld": derive(Weld, {"offset": "rot"}),
    "frame_aligned": derive(FrameAligned, {"offset": "rot", "target": "rot"}),
    "joint_coupling": derive(JointCoupling),
    "locked_joint": derive(LockedJoint),
    "point_on_plane": derive(
        PointOnPlane, {"normal": "vec3", "point": "vec3"}, skip=("unilateral",)
    ),
    "coordinate_lock": derive(CoordinateLock),
    "ball_angle": derive(BallAngle),
}

#: force element type -> (class, {key: (kind, required)}), as CONSTRAINT_TYPES
FORCE_TYPES: dict[str, tuple[type, dict[str, tuple[str, bool]]]] = {
    "point_spring": derive(PointSpring, _POINTS, required=("stiffness",), skip=("law",)),
    "point_damper": derive(PointDamper, _POINTS, required=("damping",)),
    "joint_spring": derive(JointSpring),
    "joint_damper": derive(JointDamper),
    "tendon_spring": derive(TendonSpring),
}

#: limit type -> (class, {key: (kind, required)}), as CONSTRAINT_TYPES; a bound may be
#: ``inf`` or ``-inf`` (one-sided)
_BOUNDS = {"lower": "bound", "upper": "bound"}
LIMIT_TYPES: dict[str, tuple[type, dict[str, tuple[str, bool]]]] = {
    "joint_limit": derive(JointLimit, _BOUNDS),
    "tendon_limit": derive(TendonLimit, _BOUNDS),
    "ball_limit": derive(BallLimit),
}

TOP_KEYS = (
    "title",
    "gravity",
    "plots",
    "model",
    "start",
    "simulation",
    "constraints",
    "forces",
    "limits",
    "controller",
)
SIM_KEYS = {"t_end": 5.0, "dt": 1e-3, "integrator": "rk4"}
MODEL_KEYS = ("file", "robot")
START_KEYS = ("keyframe", "q", "joints", "v")


def _err(path: str, value: Any, valid: str) -> ParameterError:
    return ParameterError(f"{path} = {value!r}: {valid}")


def _table(data: dict, key: str, valid: tuple[str, ...], where: str) -> dict:
    t = data.get(key, {})
    if not isinstance(t, dict):
        raise _err(where, t, "expected a table")
    for k in t:
        if k not in valid:
            raise _err(f"{where}.{k}", t[k], f"unknown key; valid keys: {', '.join(valid)}")
    return t


def _number(path: str, x: Any) -> float:
    return value(path, "float", x)


def _vector(path: str, x: Any, n: int | None) -> np.ndarray:
    if not isinstance(x, list) or (n is not None and len(x) != n):
        raise _err(path, x, f"expected a list of {n if n is not None else 'some'} numbers")
    return np.array([_number(f"{path}[{i}]", xi) for i, xi in enumerate(x)])


def _value(path: str, kind: str, x: Any):
    return value(path, kind, x)


def parse_constraint(path: str, spec: Any, types: dict | None = None) -> Constraint:
    """One ``[[constraints]]`` table as a constraint (ParameterError naming the key path);
    with ``types=FORCE_TYPES`` one ``[[forces]]`` table as a force element, with
    ``types=LIMIT_TYPES`` one ``[[limits]]`` table as a limit."""
    types = CONSTRAINT_TYPES if types is None else types
    return parse_element(path, spec, types, (ModelError, ValueError))


def _start(system: ModelSystem, start: dict, where: str) -> None:
    mech = system.mechanism
    given = [k for k in ("keyframe", "q", "joints") if k in start]
    if len(given) > 1:
        raise ParameterError(f"{where}: give one of keyframe, q, joints (got {', '.join(given)})")
    if "keyframe" in start:
        name = start["keyframe"]
        if not isinstance(name, str) or name not in system.keyframes:
            valid = ", ".join(system.keyframes) or "none in this model"
            raise _err(f"{where}.keyframe", name, f"valid keyframes: {valid}")
        system.q, system.v = (x.copy() for x in system.keyframes[name])
        system.start = f"keyframe {name!r}"
    elif "q" in start:
        system.q = _vector(f"{where}.q", start["q"], mech.nq)
        if not pin.isNormalized(mech.model, system.q, QUAT_TOL):
            raise _err(
                f"{where}.q",
                start["q"],
                f"its quaternions (ball, free joints) must be unit (a norm within {QUAT_TOL:g} "
                "of 1 is normalised)",
            )
        if not pin.isNormalized(mech.model, system.q, 1e-12):
            system.q = pin.normalize(mech.model, system.q)
            system.warnings.append(f"{where}.q: its quaternions were normalised (norm off 1)")
        system.start = "the system file's q"
    elif "joints" in start:
        joints = start["joints"]
        if not isinstance(joints, dict):
            raise _err(f"{where}.joints", joints, "expected a table joint = value")
        model = mech.model
        for jn, x in joints.items():
            valid = ", ".join(n for n, j in zip(model.names[1:], model.joints[1:]) if j.nq == 1)
            if not model.existJointName(jn) or model.joints[model.getJointId(jn)].nq != 1:
                raise _err(f"{where}.joints.{jn}", x, f"no such one-dof joint; valid: {valid}")
            system.q[model.joints[model.getJointId(jn)].idx_q] = _number(f"{where}.joints.{jn}", x)
        system.start = "the system file's joint values"
    if "v" in start:
        system.v = _vector(f"{where}.v", start["v"], mech.nv)


def _plots(names: Any, system: ModelSystem) -> list[str]:
    if not isinstance(names, list):
        raise _err("plots", names, "expected a list of plot names")
    mech = system.mechanism
    for i, n in enumerate(names):
        kind, _, arg = str(n).partition(":")
        ok = (
            (n in ("lambda", "phi_rows"))
            or (kind == "joint" and mech.model.existJointName(arg))
            or (kind == "frame" and arg in mech.frame_names)
        )
        if not ok:
            raise _err(f"plots[{i}]", n, "valid: lambda, phi_rows, joint:NAME, frame:NAME")
    return list(names)


@dataclass
class SystemFile:
    """A parsed, checked system file."""

    system: ModelSystem
    simulation: dict[str, Any]
    plots: list[str]
    title: str
    controller: dict[str, Any] | None = None


def load_system(path: str | Path) -> SystemFile:
    """Parse and check a system file (every key; the controller is built once to check it)."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"system file {str(p)!r} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"system file {str(p)!r} is not valid TOML: {exc}") from None
    for k in data:
        if k not in TOP_KEYS:
            raise _err(k, data[k], f"unknown key; valid keys: {', '.join(TOP_KEYS)}")
    model = _table(data, "model", MODEL_KEYS, "model")
    if ("file" in model) == ("robot" in model):
        raise ParameterError("model: give exactly one of model.file (URDF/MJCF) or model.robot")
    try:
        if "file" in model:
            f = p.parent / _value("model.file", "str", model["file"])
            if not f.is_file():
                raise _err("model.file", model["file"], f"no such file ({f})")
            system = load_model(f, contact=False)  # a system file lists its own elements
        else:
            system = _robot(model["robot"])
    except ModelError as exc:
        raise ParameterError(f"model: {exc}") from None
    if "gravity" in data:
        g = _vector("gravity", data["gravity"], 3)
        system.mechanism.model.gravity = pin.Motion(g, np.zeros(3))
    _start(system, _table(data, "start", START_KEYS, "start"), "start")
    mech = system.mechanism
    # each element bound once on its own, so a missing frame or joint names its table
    for key, types, bind, into in (
        ("constraints", CONSTRAINT_TYPES, lambda c: ConstraintSet(mech, [c]), system.constraints),
        ("forces", FORCE_TYPES, lambda e: ForceSet(mech, [e]), system.forces),
        ("limits", LIMIT_TYPES, lambda lim: Bound(lim, mech), system.limits),
    ):
        tables = data.get(key, [])
        if not isinstance(tables, list):
            raise _err(key, tables, f"expected an array of tables [[{key}]]")
        for i, spec in enumerate(tables):
            element = parse_constraint(f"{key}[{i}]", spec, types)
            try:
                bind(element)
            except ModelError as exc:
                raise ParameterError(f"{key}[{i}] ({spec['type']}): {exc}") from None
            into.append(element)
    sim = _table(data, "simulation", tuple(SIM_KEYS), "simulation")
    defaults = dict(SIM_KEYS)
    for k in ("t_end", "dt"):
        if k in sim:
            defaults[k] = _number(f"simulation.{k}", sim[k])
            if not defaults[k] > 0:
                raise _err(f"simulation.{k}", sim[k], "must be > 0 s")
    if "integrator" in sim:
        if sim["integrator"] not in INTEGRATORS:
            raise _err(
                "simulation.integrator", sim["integrator"], f"valid: {', '.join(INTEGRATORS)}"
            )
        defaults["integrator"] = sim["integrator"]
    plots = _plots(data.get("plots", []), system)
    title = data.get("title", p.stem)
    if not isinstance(title, str):
        raise _err("title", title, "expected a string")
    ctrl = data.get("controller")
    if ctrl is not None:
        parse_controller(ctrl, ConstraintSet(system.mechanism, system.constraints), system.q)
    return SystemFile(system, defaults, plots, title, ctrl)


def _robot(name: Any) -> ModelSystem:
    from pfaff.mechanism.robots import ROBOTS, load_robot, robot_urdf

    if name not in ROBOTS:
        raise _err("model.robot", name, f"valid robots: {', '.join(sorted(ROBOTS))}")
    mech = load_robot(name)
    start = f"neutral posture of {name}"
    system = ModelSystem(mech, [], mech.neutral(), np.zeros(mech.nv), start)
    system.urdf = str(robot_urdf(name))  # drawn with its meshes in scene.html
    system.locked = {j: 0.0 for j in ROBOTS[name][1]}  # load_robot locks them at neutral
    return system
