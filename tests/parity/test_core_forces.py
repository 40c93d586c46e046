"""Built-in force elements on the compiled core: the core's Q, V and
power against the NumPy classes at many states, whole runs of the two engines, and a
spring on the four-bar parallelogram against its reduced ODE at 4th order with
E = T + V_gravity + V_spring conserved, on both engines."""

from __future__ import annotations

import numpy as np
import pytest
from both_engines import assert_series_agree, simulate_both
from scipy.integrate import solve_ivp

from pfaff import core
from pfaff.scenarios.common import sign_changes
from pfaff.scenarios.parallelogram_chain import (
    branch_state,
    parallelogram_chain,
    reduced_coefficients,
)
from pfaff.simulate import (
    AnchorDamper,
    AnchorSpring,
    AppliedForce,
    GravityCompensation,
    JointDamper,
    JointSpring,
    PointDamper,
    PointForce,
    PointSpring,
    SimOptions,
    simulate,
)
from pfaff.simulate.core_engine import build
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.integrator import choose_engine

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

L, L0, G = 0.4, 1.0, 9.81
ANCHOR = np.array([1.2, -0.9, 0.0])  # world anchor of the spring on crank 2's tip
KS, R0 = 8.0, 0.3


def _elements():
    """Every built-in kind, with offsets, a world target and a two-frame pair."""
    return [
        PointSpring("c1_tip", stiffness=KS, rest_length=R0, target=ANCHOR),
        PointSpring(
            "c0_link2",
            "c1_tip",
            stiffness=3.0,
            cubic=20.0,
            rest_length=0.2,
            point1=(0.3, 0.05, 0.0),
        ),
        PointSpring("c0_link1", stiffness=2.0, point1=(0.1, 0.0, 0.0), target=(0.3, 0.4, 0.0)),
        PointDamper("c0_tip", "c1_link1", damping=0.7, point2=(0.2, 0.0, 0.0)),
        PointDamper("c0_link2", damping=0.4, point1=(0.5, 0.0, 0.0), target=(0.2, -0.5, 0.0)),
        JointSpring("c0_joint1", 1.5, rest=-0.4),
        JointDamper("c1_joint1", 0.3),
        AnchorSpring("c0_link2", (0.2, -0.3, 0.1), 4.0, axes=(0, 1), point=(0.2, 0.1, 0.0)),
        AnchorSpring("c1_tip", (1.0, 0.2, 0.0), 1.5, axes=(1,)),
        AnchorDamper("c1_link1", 0.6, axes=(0, 1), point=(0.3, 0.0, 0.0)),
        PointForce("c0_tip", (0.5, -2.0, 0.0), point=(0.05, 0.02, 0.0)),
        GravityCompensation(),
    ]


def test_core_force_terms_agree_with_numpy_at_many_states():
    """Q [N m], V [J], power [W] of the core equal the NumPy elements' at 50 random
    states (1e-12); a wrong rest length (the deliberate wrong input) is seen."""
    cs = parallelogram_chain(1)
    mech = cs.mechanism
    els = _elements()
    fset = ForceSet(mech, els)
    system = build(cs, els)
    wrong = build(cs, [PointSpring("c1_tip", stiffness=KS, rest_length=R0 + 1e-3, target=ANCHOR)])
    rng = np.random.default_rng(7)
    for _ in range(50):
        q, v = rng.uniform(-3, 3, mech.nq), rng.normal(0, 2, mech.nv)
        snap = mech.compute(q, v, fset.frames)
        Q, p = fset.evaluate(0.0, snap)
        Qc, Vc, pc = system.force_terms(q, v)
        assert np.abs(Qc - Q).max() <= 1e-12 * max(1.0, np.abs(Q).max())
        assert abs(Vc - fset.potential(snap)) <= 1e-12 and abs(pc - p) <= 1e-12
        # the accelerations of the two engines with the elements at this state
        from pfaff.simulate.steppers import Evaluator

        a_np = Evaluator(cs, SimOptions(), forces=fset)(q, v, np.zeros(mech.nv))
        a_c = system.acceleration(q, v, np.zeros(mech.nv))
        assert np.abs(a_c - a_np).max() <= 1e-12 * max(1.0, np.abs(a_np).max())
    Qw, _, _ = wrong.force_terms(q, v)
    Q1 = ForceSet(mech, els[:1]).evaluate(0.0, mech.compute(q, v, ("c1_tip",)))[0]
    assert np.abs(Qw - Q1).max() > 1e-4


def test_engine_choice_with_force_elements():
    """Built-in elements and laws written in Python (called from the core's loop) alike
    run on the core."""
    cs = parallelogram_chain(1)
    assert choose_engine(cs, SimOptions(), forces=tuple(_elements())) == "core"
    applied = AppliedForce(lambda t, q, v: np.zeros(3))
    assert choose_engine(cs, SimOptions(), forces=(applied,)) == "core"
    law = PointSpring("c1_tip", law=lambda s: (s, 0.5 * s * s))
    assert choose_engine(cs, SimOptions(engine="core"), forces=(law,)) == "core"


def test_whole_runs_agree_between_engines():
    """Every kind at once, 1 s at 1 ms: q, v, energy, force_work, force_potential of
    the two engines agree to 1e-9; the energy balance E - E0 = work + force_work +
    correction_energy holds on both to 1e-9 J (the dampers dissipate > 1e-2 J)."""
    cs = parallelogram_chain(1)
    q0, v0 = branch_state(1, -1.0, 1.5)
    a, b = simulate_both(cs, q0, v0, 1.0, SimOptions(dt=1e-3), forces=_elements())
    keys = ("q", "v", "energy", "potential", "force_work", "force_potential")
    assert_series_agree(a, b, keys, 1e-9)
    for x in (a, b):
        bal = x["energy"] - x["energy"][0] - x["work"] - x["force_work"]
        assert np.abs(bal - x["correction_energy"]).max() <= 1e-9
        assert x["force_work"][-1] < -1e-2


def _reduced(theta0, omega0, t_end, n=1):
    """J theta'' = -K g l cos theta - T(s) ds/dtheta, crank 2's tip at
    (l0 + l cos theta, l sin theta) (Lagrange on the parallelogram branch)."""
    J, K = reduced_coefficients(n, L, L0)

    def f(_t, y):
        p = np.array([n * L0 + L * np.cos(y[0]), L * np.sin(y[0])])
        dp = np.array([-L * np.sin(y[0]), L * np.cos(y[0])])
        d = p - ANCHOR[:2]
        r = np.sqrt(d @ d)
        return [y[1], (-K * G * L * np.cos(y[0]) - KS * (r - R0) * (d @ dp) / r) / J]

    sol = solve_ivp(f, (0, t_end), [theta0, omega0], method="DOP853", rtol=1e-13, atol=1e-14)
    return sol.y[:, -1]


@pytest.mark.parametrize("engine", ["core", "numpy"])
def test_spring_on_the_parallelogram_is_fourth_order_and_conserves_energy(engine):
    """Error at t_end against the reduced ODE falls >= 12x per halving over three
    halvings from 5 ms; max |E - E0| (E = T + V_gravity + V_spring) too, below 1e-7 J
    at 0.625 ms; the motion stays off the folds (sin theta keeps its sign)."""
    cs = parallelogram_chain(1)
    th0, w0, T = -1.0, 4.0, 1.0
    q0, v0 = branch_state(1, th0, w0)
    q_ref = branch_state(1, *_reduced(th0, w0, T))[0]
    spring = PointSpring("c1_tip", stiffness=KS, rest_length=R0, target=ANCHOR)
    errs, devs = [], []
    for dt in (5e-3, 2.5e-3, 1.25e-3, 6.25e-4):
        tr = simulate(cs, q0, v0, T, SimOptions(dt=dt, engine=engine), forces=[spring])
        assert tr.engine == engine
        a = tr.arrays()
        assert sign_changes(np.sin(a["q"][:, 0])) == 0
        assert np.abs(a["force_potential"]).max() > 0.1  # the spring works
        errs.append(np.abs(a["q"][-1] - q_ref).max())
        devs.append(np.abs(a["energy"] - a["energy"][0]).max())
    errs, devs = np.array(errs), np.array(devs)
    assert np.all(errs[:-1] / errs[1:] >= 12.0), errs
    assert np.all(devs[:-1] / devs[1:] >= 12.0), devs
    assert devs[-1] <= 1e-7
