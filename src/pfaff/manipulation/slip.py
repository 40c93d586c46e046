"""Slip at a rolling contact from the material-point velocities (Arimoto & Yoshida 2010, eq. 71).

An independent witness of the rolling constraint: rolling without slipping
means that the two material points in contact -- the point of the object's
contour and the point of the fingertip disc -- have the same velocity. Here
both velocities come from Pinocchio's frame velocities (``forwardKinematics``
with ``v``, then ``getFrameVelocity`` in ``LOCAL_WORLD_ALIGNED``: origin
velocity and angular velocity), moved to the contact point by
``v_x = v_o + omega x (x - o)``; the contact point comes from the contour
geometry (the foot point of the fingertip centre on the contour, and the
point of the disc nearest to it). Nothing is taken from the constraint's
Jacobian rows, which the velocity correction makes vanish: a rolling row
with a wrong sign or a wrong radius leaves its own residual at zero but
shows here.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pfaff.manipulation.rolling import RollingContact
from pfaff.mechanism.base import frame_index

__all__ = ["material_slip"]


def _point_velocity(model, data, fid: int, x: np.ndarray) -> np.ndarray:
    """Planar velocity (2,) of the material point of frame ``fid`` now at world ``x``."""
    nu = pin.getFrameVelocity(model, data, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    o = data.oMf[fid].translation
    r = np.array([x[0] - o[0], x[1] - o[1], 0.0])
    return (nu.linear + np.cross(nu.angular, r))[:2]


def material_slip(
    model: pin.Model, contact: RollingContact, q: np.ndarray, v: np.ndarray
) -> tuple[float, float]:
    """``(tangential, normal)`` relative velocity of the fingertip's material contact point
    with respect to the object's (m/s).

    ``tangential`` is the slip along the contour's tangent at the contact, the
    quantity the rolling constraint (eq. 71) sets to zero; ``normal`` is the
    approach rate, which the contact constraint (eq. 67) sets to zero.
    """
    data = model.createData()
    pin.forwardKinematics(model, data, q, v)
    pin.updateFramePlacements(model, data)
    fo, ft = frame_index(model, contact.obj), frame_index(model, contact.tip)
    Mo, c = data.oMf[fo], data.oMf[ft].translation[:2]
    R, p = Mo.rotation[:2, :2], Mo.translation[:2]
    u = contact.contour.foot_point(R.T @ (c - p))
    g, t_loc, _, _ = contact.contour.local(u)
    x_obj = p + R @ g
    t = R @ t_loc
    d = x_obj - c
    x_tip = c + contact.r * d / np.linalg.norm(d)  # the disc's point nearest the contour
    w = _point_velocity(model, data, ft, x_tip) - _point_velocity(model, data, fo, x_obj)
    n = np.array([t[1], -t[0]])
    return float(t @ w), float(n @ w)
