"""``pfaff bench derivatives``: the derivatives of the constrained dynamics of the Panda
with a 3D point contact (:func:`pfaff.derivatives.forward_dynamics_derivatives`)
against one dynamics evaluation, against finite differences of the dynamics and
against Pinocchio's ``computeConstraintDynamicsDerivatives`` on the same states."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pfaff import core
from pfaff import dynamics as D
from pfaff.constraints import ConstraintSet, PointsCoincide
from pfaff.derivatives import forward_dynamics_derivatives
from pfaff.mechanism import load_robot

from .panda import PANDA_FRAME, PANDA_TARGET, panda_states, pinocchio_contact
from .timing import REPEATS, Row, paired_us, row

N_STATES = 40


def _pinocchio(mech):
    """Pinocchio's constrained dynamics and their derivatives (3D contact, world-aligned,
    proximal mu = 1e-12) as ``f(q, v, tau) -> (ddq_dq, ddq_dv, ddq_dtau)``."""
    m, data, cms, cds = pinocchio_contact(mech)
    settings = pin.ProximalSettings(1e-14, 1e-12, 100)

    def derivatives(q, v, tau):
        pin.constraintDynamics(m, data, q, v, tau, cms, cds, settings)
        pin.computeConstraintDynamicsDerivatives(m, data, cms, cds, settings)
        return data.ddq_dq, data.ddq_dv, data.ddq_dtau

    return derivatives


def bench_derivatives() -> list[Row]:
    """Cost of the analytic derivatives against the dynamics, finite differences and
    Pinocchio's; their largest disagreement with Pinocchio's as the witness."""
    mech = load_robot("panda")
    cset = ConstraintSet(mech, [PointsCoincide(PANDA_FRAME, target=list(PANDA_TARGET))])
    frames, nv = cset.frames, mech.nv
    triples = list(zip(*panda_states(N_STATES, 1)))

    def dynamics(q, v, tau):
        snap = mech.compute(q, v, frames, extras=False)
        ev = cset.evaluate(snap)
        return D.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift).a

    def finite_differences(q, v, tau, h=1e-6):
        """Forward differences in q (tangent), v and tau: 3 nv + 1 evaluations."""
        a0, I = dynamics(q, v, tau), np.eye(nv) * h
        dq = [(dynamics(mech.integrate(q, e), v, tau) - a0) / h for e in I]
        dv = [(dynamics(q, v + e, tau) - a0) / h for e in I]
        dt = [(dynamics(q, v, tau + e) - a0) / h for e in I]
        return np.array(dq).T, np.array(dv).T, np.array(dt).T

    pinocchio = _pinocchio(mech)

    def loop(f):
        return lambda: [f(q, v, tau) for q, v, tau in triples]

    ours = lambda q, v, tau: forward_dynamics_derivatives(cset, q, v, tau)  # noqa: E731
    (t_der, t_dyn, t_fd, t_pin), ratios = paired_us(
        [loop(ours), loop(dynamics), loop(finite_differences), loop(pinocchio)],
        len(triples),
        REPEATS,
    )
    err = 0.0
    for q, v, tau in triples:
        d, p = ours(q, v, tau), pinocchio(q, v, tau)
        for x, y in zip((d.da_dq, d.da_dv, d.da_dtau), p):
            err = max(err, float(np.abs(x - y).max() / max(1.0, np.abs(y).max())))
    b, n = "derivatives", f"Panda, 3D point contact, nv {nv}; {N_STATES} states, paired"
    return (
        _core_rows(cset, triples, pinocchio, b)
        + _step_rows(b)
        + [
            row(b, "derivatives (numpy)", t_der, "us", "", f"da/dq, da/dv, da/dtau, dlam/*; {n}"),
            row(b, "dynamics (numpy)", t_dyn, "us", "", "one evaluation, same engine"),
            row(
                b,
                "finite differences (numpy)",
                t_fd,
                "us",
                "",
                f"forward, {3 * nv + 1} evaluations",
            ),
            row(
                b, "pinocchio derivatives", t_pin, "us", "", "constraintDynamics + its derivatives"
            ),
            row(b, "ratio derivatives/dynamics", ratios[0] / ratios[1], "", "", "NumPy engine"),
            row(b, "ratio finite differences/derivatives", ratios[2] / ratios[0], "", ">= 5", ""),
            row(b, "ratio derivatives/pinocchio", ratios[0], "", "", "NumPy vs compiled peer"),
            row(b, "max rel |da - da_pin|", err, "", "<= 1e-8", "/ max(1, |da_pin|_inf)"),
        ]
    )


def _step_rows(b: str) -> list[Row]:
    """One compiled step of the four-bar (RK4 with its projections, dt 1e-3) against its
    Jacobians by central differences of it and by the NumPy reference's sensitivities,
    and their agreement."""
    from pathlib import Path

    from pfaff.api import load
    from pfaff.api.step_derivatives import step, step_derivatives

    model = Path(__file__).resolve().parents[3] / "tests" / "models" / "four_bar.xml"
    if not model.is_file():  # an installed package without the test models
        return []
    sys = load(model)
    rng = np.random.default_rng(0)
    q, tau = sys.q0, rng.standard_normal(sys.nv)
    _, A = sys.cset.holonomic_terms_at(q)
    v = rng.standard_normal(sys.nv)
    v -= np.linalg.pinv(A, rcond=1e-9) @ (A @ v)

    def der(method):
        return lambda: step_derivatives(sys, q, v, tau, 1e-3, method=method)

    (t_step, t_sens, t_diff), _ = paired_us(
        [lambda: step(sys, q, v, tau, 1e-3), der("sensitivities"), der("differences")], 1, 5
    )
    a, d = der("sensitivities")(), der("differences")()
    err = max(
        np.abs(a.A - d.A).max() / np.abs(d.A).max(), np.abs(a.B - d.B).max() / np.abs(d.B).max()
    )
    nv = sys.nv
    return [
        row(b, "step (core)", t_step, "us", "", "four-bar, RK4 + projections, dt 1e-3"),
        row(b, "step derivatives (sensitivities)", t_sens, "us", "", "NumPy reference, A and B"),
        row(b, "step derivatives (differences)", t_diff, "us", "", f"{6 * nv + 1} core steps"),
        row(b, "ratio step differences/sensitivities", t_diff / t_sens, "", "", ""),
        row(b, "max rel |sensitivities - differences|", err, "", "<= 1e-5", "A and B"),
    ]


def _core_rows(cset, triples, pinocchio, b: str) -> list[Row]:
    """The compiled derivatives against the compiled dynamics (``System.acceleration``),
    forward differences of it and Pinocchio's derivatives (none without the core)."""
    if not core.available():
        return []
    compiled = core.differentiator(cset, 1e-9)
    system = core.build(cset)
    acc, nv = system.acceleration, cset.mechanism.nv
    integrate = cset.mechanism.integrate

    def finite_differences(q, v, tau, h=1e-6):
        a0, I = acc(q, v, tau), np.eye(nv) * h
        dq = [(acc(integrate(q, e), v, tau) - a0) / h for e in I]
        dv = [(acc(q, v + e, tau) - a0) / h for e in I]
        dt = [(acc(q, v, tau + e) - a0) / h for e in I]
        return dq, dv, dt

    def loop(f):
        return lambda: [f(q, v, tau) for q, v, tau in triples]

    (t_der, t_raw, t_dyn, t_fd, _), r = paired_us(
        [loop(compiled), loop(compiled.raw), loop(acc), loop(finite_differences), loop(pinocchio)],
        len(triples),
        2 * REPEATS + 1,
    )
    err = max(
        float(np.abs(compiled(q, v, tau)[k] - getattr(ref, k)).max())
        / max(1.0, float(np.abs(getattr(ref, k)).max()))
        for q, v, tau in triples
        for ref in [forward_dynamics_derivatives(cset, q, v, tau)]
        for k in ("da_dq", "da_dv", "da_dtau", "dlam_dq")
    )
    return [
        row(b, "derivatives (core)", t_der, "us", "", "core.differentiator: the fields unpacked"),
        row(b, "derivatives (core binding)", t_raw, "us", "", "Differentiator.compute alone"),
        row(b, "dynamics (core)", t_dyn, "us", "", "System.acceleration (one evaluation)"),
        row(b, "finite differences (core)", t_fd, "us", "", f"forward, {3 * nv + 1} evaluations"),
        row(b, "ratio core derivatives/dynamics", r[1] / r[2], "", "<= 3", "bindings alone"),
        row(b, "ratio core finite differences/derivatives", r[3] / r[0], "", ">= 5", "unpacked"),
        row(b, "ratio core derivatives/pinocchio", r[0], "", "", "unpacked, paired"),
        row(b, "max rel |core - numpy|", err, "", "<= 1e-10", "da_dq, da_dv, da_dtau, dlam_dq"),
    ]
