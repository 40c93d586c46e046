"""Blind grasping of a planar object by two fingers (Arimoto & Yoshida 2010, Sec. 6-7).

The control uses only the fingers' joint angles and velocities and their
parameters (link lengths through the forward kinematics of the tip frames,
tip radii): no object pose, shape or contact-force measurement.

    u_i = -c_i q_i' + (-1)^i f_d / (r_1 + r_2) J_i^T (x_01 - x_02) + (-1)^i r_i N e_i
          - k_q (q_i - q_i,ref),
    N   = k_r (r_1 phi_1 - r_2 phi_2 - Phi_0),      phi_i = e_i^T q_i,

with ``x_0i`` the fingertip centres, ``J_i = d x_0i / d q_i`` and ``e_1 = (1, 1)``,
``e_2 = (1, 1, 1)`` (eq. 75). The first two terms are the paper's joint damping
and squeezing term. The rotational-moment term ``-r_i N e_i`` has the form of
eq. (75) (a moment ``-/+ r_i N`` at each fingertip, alternating like the squeeze);
its magnitude ``N`` was not
recoverable from the available text, so it is *derived* here as the gradient
of a joint-space potential, which makes the whole law passive:

    u_i = -c_i q_i' - dV/dq_i,   with
    V(q_1, q_2) = f_d / (2 (r_1 + r_2)) |x_01 - x_02|^2
                  + k_r / 2 (r_1 phi_1 - r_2 phi_2 - Phi_0)^2
                  + k_q / 2 |q - q_ref|^2   (posture term, see below).

Indeed ``d/dq_1 |x_01 - x_02|^2 / 2 = J_1^T (x_01 - x_02)`` and ``d/dq_2 = -J_2^T (x_01 -
x_02)`` (the alternating sign), and ``d/dq_i (r_1 phi_1 - r_2 phi_2) = -(-1)^i r_i e_i``.
``r_i phi_i`` is the arclength fingertip i has rolled (with the object's
arclength and angle, the rolling integral ``R_i`` of eq. 81), so the term pulls
the grasp back to the rolled state ``Phi_0`` of the start. The difference (not
the sum) is used: with the sum, the scenario's grasp slid slowly towards the
finger bases (a saddle of the squeeze potential: energy 0.0766 -> 0.0736 J and
speed 0.07 -> 0.57 rad/s over 5 s), with the difference it settles (wrench
residual 1e-7 after 5 s); ``k_r = 0`` gives the bare squeeze.

Posture term (added, not in the paper). With the two terms above the ellipse
and spline grasps did not come to rest: after the fast phase (force balance
1e-7) the whole grasp drifted at a constant ~7e-4 rad/s (ellipse; 5.5e-3
spline), the speed proportional to ``1/c`` and independent of ``k_r``
(200...10000), the energy falling linearly (8e-9 J/s): ``V`` keeps a small
slope along a direction that leaves ``|x_01 - x_02|`` and ``r_1 phi_1 - r_2
phi_2`` unchanged (mostly finger 2's redundant joint), i.e. the rest states of
the two-term potential are not isolated and not critical. A weak joint
posture spring ``k_q/2 |q - q_ref|^2`` (``q_ref`` = the pre-shape at the first
call; ``k_q = 0.01 N m/rad`` against a squeeze stiffness ``f_d/(r_1+r_2)
|J|^2 ~ 0.1 N m/rad``) adds stiffness along it: still blind (joint angles
only) and passive (a gradient), and any rest state is still a force/torque
balance of the object; the grasp force then differs slightly from ``f_d``.
:func:`pfaff.geometry.morse.leaf_hessian` measures it: ``V`` restricted to the
4-dimensional constraint leaf at the rest state of ``rolling-grasp`` (ellipse,
5 s) has Hessian eigenvalues (0.0088, 0.0100, 0.0173, 0.0355) with ``k_q =
0.01`` -- a nondegenerate (Morse) minimum -- and (-8e-6, -2e-7, 0.013, 0.027)
with a leaf gradient of 7e-6 with ``k_q = 0``: two flat directions, no critical
point, hence the drift.

Closed loop. The rolling and contact constraints are ideal (workless), the
object is free in the horizontal plane (g = 0), hence for the energy
``E = K(q') + V(q)`` one has ``dE/dt = -sum_i c_i |q_i'|^2 <= 0``. By LaSalle the
motion tends to the largest invariant set with ``q_i' = 0``; there the object is
still too (the rolling constraints tie it to the fingertips), so its equation
of motion (eq. 77) gives ``sum of the wrench vectors = M_0 x'' = 0``: force/torque
balance. The scenario ``rolling-grasp`` measures both (``final_wrench_residual``,
``energy_increase_max``).

Sampled data. The torque is computed every period ``dt`` and held (zero-order
hold), as on a real digital controller. Over one hold the energy changes by
``dE = -c v_k . dq + [V(q_k + dq) - V(q_k) - grad V(q_k) . dq]``; the bracket is
``dq^T K dq / 2`` (``K = d^2 V / dq^2``), the first term removes ``c dt |v|^2``. In
motion the damping wins when ``c > dt |K| / 2``; but in the first sample, from
rest (``v_0 = 0``, ``dq = a_0 dt^2 / 2``), nothing is removed and the hold injects
``dt^4 a_0^T K a_0 / 8``. Measured in ``rolling-grasp`` (largest increase, J;
ellipse / superellipse / spline): 1 kHz 3.8e-9 / 5.0e-8 / 5.4e-9, 2 kHz
2.4e-10 / 3.1e-9 / 3.4e-10, 4 kHz 1.5e-11 / 1.9e-10 / 2.1e-11 (the dt^4 law;
every later sample decreases the energy). A passive correction of the held
torque would need the acceleration, which a blind controller does not have at
the first sample, so the scenario runs the controller at 4 kHz.

Continuous time. The law is a damper and a potential, so it is also a set of force
elements (:meth:`BlindGrasp.force_elements`) that the integrator evaluates at every
stage: no hold, the energy falls by the dampers' work up to the RK4 truncation, and
the step is set by the dynamics instead of the hold (``rolling-grasp --set
law=continuous --set dt=1e-3``: 1 ms steps, 3.6x faster than the 4 kHz controller,
every figure met; 2 ms fails in the fast first 50 ms).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.lowering import lowers
from pfaff.mechanism.base import Snapshot
from pfaff.simulate.forces import (
    CoordinateSpring,
    ForceElement,
    JointDamper,
    JointSpring,
    PointSpring,
)
from pfaff.simulate.record import StepRecord

__all__ = ["BlindGrasp"]


class BlindGrasp:
    """Blind grasping controller ``tau = controller(t, snapshot)`` (see the module docstring).

    Parameters
    ----------
    tip_frames : the two fingertip-centre frames (finger 1, finger 2).
    joints : velocity indices of finger 1's and finger 2's joints.
    radii : fingertip radii ``(r_1, r_2)``, m.
    f_d : desired squeezing force, N (> 0).
    damping : joint damping ``c_i`` (scalar or per finger), N m s/rad.
    k_r : gain of the rotational-moment term, N/m (>= 0).
    nv : size of the torque vector (the object's coordinates get zero).
    phi0 : rolled-arclength reference ``Phi_0``; None: taken at the first call.
    k_q : gain of the joint posture term (N m/rad, >= 0; reference = the
        joint angles at the first call), see the module docstring.
    """

    needs_sensors = False

    def __init__(
        self,
        tip_frames: Sequence[str],
        joints: Sequence[Sequence[int]],
        radii: Sequence[float],
        f_d: float,
        damping: float | Sequence[float],
        k_r: float,
        nv: int,
        phi0: float | None = None,
        k_q: float = 0.0,
    ) -> None:
        if not (np.isfinite(f_d) and f_d > 0):
            raise ValueError(f"the desired squeezing force f_d must be > 0 N, got {f_d!r}")
        if len(tip_frames) != 2 or len(joints) != 2 or len(radii) != 2:
            raise ValueError("blind grasping needs exactly two fingers")
        if min(radii) <= 0:
            raise ValueError(f"fingertip radii must be > 0 m, got {radii!r}")
        if not k_r >= 0:
            raise ValueError(f"k_r must be >= 0 N/m, got {k_r!r}")
        c = np.broadcast_to(np.asarray(damping, dtype=float), (2,))
        if np.any(c <= 0):
            raise ValueError(f"joint damping must be > 0, got {damping!r}")
        self.frames = tuple(tip_frames)
        self.idx = [np.asarray(j, dtype=int) for j in joints]
        self.r = np.asarray(radii, dtype=float)
        self.f_d, self.c, self.k_r, self.nv = float(f_d), c, float(k_r), int(nv)
        self.phi0 = phi0
        if not k_q >= 0:
            raise ValueError(f"k_q must be >= 0 N m/rad, got {k_q!r}")
        self.k_q = float(k_q)
        self._fingers = np.concatenate(self.idx)
        self.q_ref: np.ndarray | None = None
        self.signals: dict[str, float] = {}

    def _terms(self, snap: Snapshot):
        x = [snap.frame(f).p[:2] for f in self.frames]
        J = [snap.frame(f).J[:2][:, i] for f, i in zip(self.frames, self.idx)]
        self._references(snap.q)
        return x, J, self._rolled(snap.q)

    def potential(self, snap: Snapshot) -> float:
        """``V(q)`` of the module docstring (J)."""
        x, _, rolled = self._terms(snap)
        dx = x[0] - x[1]
        k = self.f_d / self.r.sum()
        dq = snap.q[self._fingers] - self.q_ref
        return (
            0.5 * k * float(dx @ dx)
            + 0.5 * self.k_r * (rolled - self.phi0) ** 2
            + 0.5 * self.k_q * float(dq @ dq)
        )

    def _gradient(self, snap: Snapshot) -> tuple[np.ndarray, float, float]:
        """``(-dV/dq, squeeze force, N)`` at the snapshot (the module docstring)."""
        x, J, rolled = self._terms(snap)
        dx = x[0] - x[1]
        k = self.f_d / self.r.sum()
        N = self.k_r * (rolled - self.phi0)
        tau = np.zeros(self.nv)
        for i in range(2):
            sign = -1.0 if i == 0 else 1.0  # (-1)^i with fingers numbered 1, 2
            tau[self.idx[i]] = sign * k * (J[i].T @ dx) + sign * self.r[i] * N
        tau[self._fingers] -= self.k_q * (snap.q[self._fingers] - self.q_ref)
        return tau, k * float(np.linalg.norm(dx)), N

    def potential_force(self, snap: Snapshot) -> np.ndarray:
        """``-dV/dq`` (nv,): the law without its damping (the module docstring)."""
        return self._gradient(snap)[0]

    def __call__(self, t: float, rec: StepRecord) -> np.ndarray:
        snap = rec.snap
        tau, squeeze, N = self._gradient(snap)
        for c, idx in zip(self.c, self.idx):
            tau[idx] -= c * snap.v[idx]
        self.signals = {
            "squeeze_force": squeeze,
            "rotational_moment_N": N,
            "control_potential": self.potential(snap),
        }
        return tau

    def _rolled(self, q: np.ndarray) -> float:
        """``r_1 phi_1 - r_2 phi_2`` with ``phi_i = e_i^T q_i`` (the rolled arclengths)."""
        phi = [float(np.sum(q[i])) for i in self.idx]
        return float(self.r[0] * phi[0] - self.r[1] * phi[1])

    def _references(self, q: np.ndarray) -> None:
        """``Phi_0`` and ``q_ref`` from the configuration ``q`` where not yet set (the
        first call does the same with its snapshot)."""
        if self.phi0 is None:
            self.phi0 = self._rolled(q)
        if self.q_ref is None:
            self.q_ref = np.asarray(q, dtype=float)[self._fingers].copy()

    def force_elements(self, q0: np.ndarray) -> list[ForceElement]:
        """The law as built-in force elements, from the start configuration ``q0`` (which
        sets ``Phi_0`` and ``q_ref`` where not yet set): a
        :class:`~pfaff.simulate.forces.JointDamper` per finger joint (``-c_i q_i'``),
        and ``V`` as a :class:`~pfaff.simulate.forces.PointSpring` between the tip
        centres (stiffness ``f_d / (r_1 + r_2)``, rest length 0; the fingers move in
        one plane), a :class:`~pfaff.simulate.forces.CoordinateSpring` on
        ``r_1 phi_1 - r_2 phi_2`` (``k_r``, rest ``Phi_0``) and a
        :class:`~pfaff.simulate.forces.JointSpring` per finger joint (``k_q``, rest
        ``q_ref``). Their sum is :meth:`__call__`'s torque and ``V``
        (``tests/test_rolling.py`` holds them equal at many states).

        For ``simulate(..., forces=...)`` instead of a controller, the law is evaluated
        at every integrator stage: no hold, the closed-loop energy ``K + V``
        (``energy`` of the trajectory) only falls, by the dampers' work
        (``force_work``), up to the integrator's truncation -- the setting of the
        paper's analysis (eq. 77-80), and no 4 kHz sampling needed.
        """
        self._references(np.asarray(q0, dtype=float))
        fingers = [int(j) for j in self._fingers]
        out: list[ForceElement] = [
            JointDamper(int(j), float(c), name=f"finger {i + 1} damper, joint {j}")
            for i, (c, idx) in enumerate(zip(self.c, self.idx))
            for j in idx
        ]
        out.append(
            PointSpring(*self.frames, stiffness=self.f_d / self.r.sum(), name="squeeze (V)")
        )
        coef = np.concatenate([np.full(len(self.idx[0]), self.r[0]),
                               np.full(len(self.idx[1]), -self.r[1])])  # fmt: skip
        out.append(CoordinateSpring(fingers, coef, self.k_r, self.phi0, name="rolled (V)"))
        if self.k_q > 0:
            out += [
                JointSpring(j, self.k_q, float(r), name=f"posture (V), joint {j}")
                for j, r in zip(fingers, self.q_ref)
            ]
        return out

    def held_forces(self, q0: np.ndarray) -> list[ForceElement]:
        """The sampled law (the controller protocol's optional compiled form): the same
        force elements as :meth:`force_elements`, which the compiled core samples and
        holds itself at the controller's rate instead of calling :meth:`__call__`; a
        run on the core then records no ``signals``."""
        return self.force_elements(q0)


# the law as built-in force elements, sampled and held by the compiled core itself
lowers(BlindGrasp, category="held_law")(BlindGrasp.held_forces)
