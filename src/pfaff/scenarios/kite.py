"""The kite four-bar: ground = crank = a, coupler = rocker = b > a.

At crank angle ``theta = 0`` the crank's tip lies on the rocker's pivot D: the
coupler and the rocker coincide and may turn together about D, a second branch
(``theta = 0``, any rocker angle) that crosses the crank's motion there, a fold
of the loop-closure Jacobian. Unlike the parallelogram's, the branch the crank
follows through it is curved in joint space, so RK4 stage points leave it by
O(dt^2); the witness of the stage projection.

The branch through the fold: the kite O-B-C-D (O the crank pivot, B the crank
tip, C the coupler-rocker joint, D = (a, 0)) is symmetric about OC, so C lies on
the bisector of the angle BOD::

    C = r(theta) (cos theta/2, sin theta/2),  r = a cos(theta/2) + sqrt(b^2 - a^2 sin^2(theta/2))

(4 pi-periodic: after one turn of the crank the linkage is in its other assembly
mode). Reduced to the crank angle the motion conserves
``E = m(theta) theta'^2 / 2 + V(theta)`` with ``m = q'^T M(q) q'`` (Lagrange), so
the time to reach ``theta`` from ``theta0`` while the crank turns over is the
quadrature ``t(theta) = int sqrt(m / (2 (E - V))) dtheta``: the reference of
``tests/test_folds.py``, independent of any ODE solver.
"""

from __future__ import annotations

import functools

import numpy as np

from pfaff.constraints import ConstraintSet
from pfaff.scenarios.common import sign_changes
from pfaff.scenarios.four_bar import four_bar_set
from pfaff.simulate import SimOptions, simulate


def kite_four_bar(a: float = 0.5, b: float = 1.0, density: float = 1.0, g: float = 9.81):
    """The kite as the ``four-bar`` scenario builds it (two Pinocchio chains, one loop)."""
    if not 0 < a < b:
        raise ValueError(f"a kite needs 0 < a < b, got a = {a!r}, b = {b!r}")
    return four_bar_set(a, a, b, b, density, g)


def kite_branch(theta: float, a: float = 0.5, b: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(q, dq/dtheta)`` on the branch through the folds, q = (crank, coupler
    relative to crank, rocker) [rad], the angles in (-pi, pi] plus ``theta``."""
    h = 0.5 * theta
    s, c = np.sin(h), np.cos(h)
    root = np.sqrt(b * b - (a * s) ** 2)
    r = a * c + root
    dr = -0.5 * a * s - 0.5 * a * a * s * c / root
    u, up = np.array([c, s]), np.array([-s, c])
    C, dC = r * u, dr * u + 0.5 * r * up
    B = a * np.array([np.cos(theta), np.sin(theta)])
    dB = a * np.array([-np.sin(theta), np.cos(theta)])
    D = np.array([a, 0.0])
    e2, e3 = C - B, C - D  # coupler and rocker, both of length b

    def cross(x, y):
        return x[0] * y[1] - x[1] * y[0]

    phi2, phi3 = np.arctan2(e2[1], e2[0]), np.arctan2(e3[1], e3[0])
    dphi2, dphi3 = cross(e2, dC - dB) / b**2, cross(e3, dC) / b**2
    q = np.array([theta, np.angle(np.exp(1j * (phi2 - theta))), phi3])
    return q, np.array([1.0, dphi2 - 1.0, dphi3])


def kite_reduced_angle(
    cset: ConstraintSet,
    theta0: float,
    omega0: float,
    t_end: float,
    a: float = 0.5,
    b: float = 1.0,
) -> float:
    """The crank angle at ``t_end`` of the motion from ``(theta0, omega0 > 0)`` along
    the branch, from energy conservation and the quadrature of ``dt = dtheta / theta'``
    (``scipy.integrate.quad``, ``scipy.optimize.brentq``). Requires the crank to turn
    over (``E > V`` everywhere on the way); raises ValueError otherwise."""
    from scipy.integrate import quad
    from scipy.optimize import brentq

    if not omega0 > 0:
        raise ValueError(f"omega0 must be > 0 rad/s, got {omega0!r}")
    mech = cset.mechanism

    def mass_and_potential(th):
        q, dq = kite_branch(th, a, b)
        snap = mech.compute(q)
        return float(dq @ snap.M @ dq), snap.potential

    m0, V0 = mass_and_potential(theta0)
    E = 0.5 * m0 * omega0**2 + V0

    def rate_inverse(th):
        m, V = mass_and_potential(th)
        if not E > V:
            raise ValueError(f"the crank does not turn over: E <= V at theta = {th:.6g} rad")
        return np.sqrt(m / (2.0 * (E - V)))

    def time_to(th):
        return quad(rate_inverse, theta0, th, epsabs=1e-13, epsrel=1e-13, limit=400)[0]

    hi = theta0 + omega0 * t_end
    while time_to(hi) < t_end:
        hi += omega0 * t_end
    return brentq(lambda th: time_to(th) - t_end, theta0, hi, xtol=1e-14, rtol=1e-15)


@functools.lru_cache(maxsize=16)
def _reference(theta0: float, omega0: float, t_end: float) -> np.ndarray:
    return kite_branch(kite_reduced_angle(kite_four_bar(), theta0, omega0, t_end))[0]


def kite_trial(theta0: float, omega0: float, t_end: float, opt: SimOptions) -> dict:
    """One run of the kite (a = 0.5, b = 1 m) from ``(theta0, omega0)`` on the branch
    against :func:`kite_reduced_angle` (cached per start): ``error`` the largest joint
    error at ``t_end`` [rad] (angles wrapped), ``energy_jump`` the largest energy change
    in one step [J], ``crank_sign_changes`` of sin(crank angle) (2 per turn)."""
    cs = kite_four_bar()
    q0, dq = kite_branch(theta0)
    a = simulate(cs, q0, omega0 * dq, t_end, opt).arrays()
    dq_end = a["q"][-1] - _reference(theta0, omega0, t_end)
    return {
        "error": float(np.abs(np.angle(np.exp(1j * dq_end))).max()),
        "energy_jump": float(np.abs(np.diff(a["energy"])).max()),
        "crank_sign_changes": sign_changes(np.sin(a["q"][:, 0])),
    }
