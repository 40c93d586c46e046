"""The ``[controller]`` table of a system file: a built-in controller with its gains and task.

::

    [controller]
    type = "pidc"            # ProjectedController (Aghili eq. 45-46), or "computed_torque"
    joints = ["crank"]       # the task: these joints' coordinates (as many as the dof)
    target = [-0.8]          # constant set-point of the task (rad or m)
    kp = 100.0               # PD gains (scalars or one per task coordinate)
    kd = 20.0
    actuated = ["crank"]     # optional (pidc): the other joints are passive (eq. 55-62)
    control_dt = 0.002       # optional: controller period [s] (default: dt)

Joint tasks need nq == nv (no ball or free joints).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.control.controllers import ComputedTorque, ProjectedController, resolve_joints
from pfaff.control.references import constant_reference
from pfaff.control.tasks import JointTask
from pfaff.errors import ParameterError
from pfaff.mechanism.base import ModelError

CONTROLLER_KEYS = ("type", "joints", "target", "kp", "kd", "actuated", "control_dt")
CONTROLLER_TYPES = ("pidc", "computed_torque")


def _names(path: str, x: Any) -> list[str]:
    if not isinstance(x, list) or not x or not all(isinstance(s, str) for s in x):
        raise ParameterError(f"{path} = {x!r}: expected a non-empty list of joint names")
    return x


def _floats(path: str, x: Any, n: int) -> np.ndarray:
    vals = x if isinstance(x, list) else [x]
    if (isinstance(x, list) and len(x) != n) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in vals
    ):
        raise ParameterError(f"{path} = {x!r}: expected a number or a list of {n} numbers")
    return np.asarray(vals if isinstance(x, list) else vals * n, dtype=float)


def check_task_dof(cset: ConstraintSet, q: np.ndarray, idx, joints: list[str]) -> None:
    """Refuse a joint task the constrained system cannot track at ``q``: more task
    coordinates than degrees of freedom (``nv - rank A``), or coordinates that the
    constraints tie together (the task Jacobian restricted to the admissible velocities
    has rank below the task's size)."""
    from pfaff.linalg import null_space, numerical_rank

    mech = cset.mechanism
    snap = mech.compute(q, np.zeros(mech.nv), cset.frames)
    A = cset.evaluate(snap).A if cset.dim else np.zeros((0, mech.nv))
    N = null_space(A) if A.shape[0] else np.eye(mech.nv)
    dof = N.shape[1]
    k = len(joints)
    if k > dof:
        raise ParameterError(
            f"controller.joints = {joints!r}: {k} task coordinates, but the system has "
            f"{dof} degree(s) of freedom (nv = {mech.nv} minus constraint rank "
            f"{mech.nv - dof}); give at most {dof} joint(s)"
        )
    J = np.zeros((k, mech.nv))
    J[np.arange(k), np.asarray(idx, dtype=int)] = 1.0
    r = numerical_rank(J @ N, 1e-9) if dof else 0
    if r < k:
        raise ParameterError(
            f"controller.joints = {joints!r}: the constraints tie these coordinates "
            f"together (they can move in only {r} independent direction(s) at the start); "
            "choose joints that move independently"
        )


def parse_controller(
    spec: Any, cset: ConstraintSet, q: np.ndarray | None = None
) -> tuple[object, float | None]:
    """``(controller, control_dt)`` from the ``[controller]`` table (ParameterError
    naming ``controller.<key>``); with the start configuration ``q``, a task the
    system cannot track there is refused (:func:`check_task_dof`)."""
    if not isinstance(spec, dict):
        raise ParameterError(f"controller = {spec!r}: expected a table")
    for k in spec:
        if k not in CONTROLLER_KEYS:
            valid = ", ".join(CONTROLLER_KEYS)
            raise ParameterError(f"controller.{k} = {spec[k]!r}: unknown key; valid keys: {valid}")
    ctype = spec.get("type")
    if ctype not in CONTROLLER_TYPES:
        raise ParameterError(
            f"controller.type = {ctype!r}: valid types: {', '.join(CONTROLLER_TYPES)}"
        )
    for k in ("joints", "target"):
        if k not in spec:
            raise ParameterError(f"controller: missing key {k!r}")
    mech = cset.mechanism
    joints = _names("controller.joints", spec["joints"])
    try:
        idx = resolve_joints(mech, joints)
        if q is not None:
            check_task_dof(cset, q, idx, joints)
        task = JointTask(idx, joints)
        target = _floats("controller.target", spec["target"], len(joints))
        kp = _floats("controller.kp", spec.get("kp", 100.0), len(joints))
        kd = _floats("controller.kd", spec.get("kd", 20.0), len(joints))

        reference = constant_reference(target)
        if ctype == "pidc":
            actuated = spec.get("actuated")
            if actuated is not None:
                actuated = _names("controller.actuated", actuated)
            ctrl = ProjectedController(cset, task, reference, kp, kd, actuated=actuated)
        else:
            if "actuated" in spec:
                raise ParameterError("controller.actuated: only the pidc controller has it")
            ctrl = ComputedTorque(cset, task, reference, kp, kd)
    except (ModelError, ValueError) as exc:
        if isinstance(exc, ParameterError):
            raise
        raise ParameterError(f"controller ({ctype}): {exc}") from None
    cdt = spec.get("control_dt")
    if cdt is not None:
        cdt = float(_floats("controller.control_dt", cdt, 1)[0])
        if not cdt > 0:
            raise ParameterError(f"controller.control_dt = {cdt!r}: must be > 0 s")
    return ctrl, cdt
