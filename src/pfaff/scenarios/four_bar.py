"""A planar four-bar linkage: open Pinocchio chains closed by a loop constraint."""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet, PointsCoincide
from pfaff.mechanism import PlanarChain, PlanarLink, planar_chains
from pfaff.scenarios.common import decoupling, fold_crossings, planar_animation, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions


def bar(length: float, density: float) -> PlanarLink:
    """A uniform bar: mass density * length, inertia m L^2 / 12 about its middle."""
    m = density * length
    return PlanarLink(length, m, com=length / 2, inertia=m * length**2 / 12)


def closure_state(theta1: float, l0: float, l1: float, l2: float, l3: float) -> np.ndarray:
    """Joint angles (crank, coupler relative, rocker) closing the loop, elbow up."""
    B = l1 * np.array([np.cos(theta1), np.sin(theta1)])
    D = np.array([l0, 0.0])
    d = np.linalg.norm(D - B)
    if not abs(l2 - l3) <= d <= l2 + l3:
        raise ValueError(f"the four-bar cannot close at crank angle {theta1} rad")
    if d <= 1e-12 * l0:  # a kite (l0 = l1, l2 = l3): the coupler turns freely about D
        raise ValueError(
            f"at crank angle {theta1} rad the crank tip lies on the rocker pivot: "
            "the closure is not unique"
        )
    # C on both circles |C - B| = l2, |C - D| = l3; take the solution left of B->D
    a = (l2**2 - l3**2 + d**2) / (2 * d)
    h = np.sqrt(max(l2**2 - a**2, 0.0))
    e = (D - B) / d
    C = B + a * e + h * np.array([-e[1], e[0]])
    phi2 = np.arctan2(*(C - B)[::-1])
    phi3 = np.arctan2(*(C - D)[::-1])
    return np.array([theta1, phi2 - theta1, phi3])


def four_bar_set(
    l0: float, l1: float, l2: float, l3: float, density: float = 1.0, g: float = 9.81
) -> ConstraintSet:
    """The four-bar as two Pinocchio chains closed by a loop constraint.

    Chain "crank" (crank l1 + coupler l2) hangs from the origin, chain "rocker"
    (rocker l3) from (l0, 0); the coupler's tip coincides with the rocker's tip
    along x and y (2 rows, 3 joints, 1 DOF). Uniform bars; gravity g along -y.
    """
    mech = planar_chains(
        [
            PlanarChain([bar(l1, density), bar(l2, density)], name="crank"),
            PlanarChain([bar(l3, density)], name="rocker", base=(l0, 0.0)),
        ],
        gravity=(0.0, -g, 0.0),
        name="four-bar",
    )
    loop = PointsCoincide(
        "crank_tip", "rocker_tip", directions=[(1, 0, 0), (0, 1, 0)], name="loop"
    )
    return ConstraintSet(mech, [loop])


@scenario(
    "four-bar",
    parallelogram=Param(
        False, "true: crank = rocker, coupler = ground (redundant row at the fold)"
    ),
    ground=Param(1.0, "ground link length l0 [m]", positive=True),
    crank=Param(0.4, "crank length l1 [m] (non-parallelogram case)", positive=True),
    coupler=Param(1.1, "coupler length l2 [m] (non-parallelogram case)", positive=True),
    rocker=Param(0.8, "rocker length l3 [m] (non-parallelogram case)", positive=True),
    density=Param(1.0, "mass per length of the uniform bars [kg/m]", positive=True),
    g=Param(9.81, "gravity [m/s^2] along -y", low=0.0),
    omega0=Param(4.0, "initial crank speed [rad/s] (the crank turns over)"),
    t_end=Param(10.0, "simulated time [s]", positive=True),
    dt=Param(4e-3, "integrator step [s]", positive=True),
)
def four_bar(p: dict) -> ScenarioResult:
    """Passive four-bar linkage under gravity, built as two open Pinocchio chains.

    Chain "crank" (crank l1 + coupler l2) hangs from the origin, chain
    "rocker" (rocker l3) from (l0, 0); the loop closure makes the coupler's
    tip coincide with the rocker's tip along x and y (2 rows, 3 joints, 1 DOF).
    Links are uniform bars. Default: a Grashof crank-rocker (l0, l1, l2, l3) =
    (1.0, 0.4, 1.1, 0.8) whose crank turns over. With parallelogram=true the
    lengths are (l0, l1, l0, l1) with l1 = crank and the run starts at the
    folded configuration (all links on the x axis), where the two loop rows
    become linearly dependent: A has rank 1 (constraint_rank_min) and the KKT
    matrix is singular, while the projection method proceeds;
    branch_deviation_max = max |q3 - q1| shows that the motion stays on the
    parallelogram branch through every fold. ``min_sigma`` is the smallest
    recorded sigma_min(A) and ``fold_crossings`` the number of folds crossed,
    both read from the recorded sigma_min series
    (:func:`~pfaff.scenarios.common.fold_crossings`). The potential
    zero is the lowest configuration of the closed chain (found by scanning
    the crank angle over 721 points), as for the other scenarios.
    """
    l0, dens = p["ground"], p["density"]
    if p["parallelogram"]:
        l1 = p["crank"]
        l2, l3 = l0, l1
        theta1 = 0.0
        q0 = np.array([0.0, 0.0, 0.0])  # folded: parallelogram and anti-parallelogram meet
        w = p["omega0"]
        v0 = np.array([w, -w, w])  # parallelogram branch: coupler stays parallel to ground
    else:
        l1, l2, l3 = p["crank"], p["coupler"], p["rocker"]
        theta1 = np.pi / 2
        q0 = closure_state(theta1, l0, l1, l2, l3)
        v0 = np.array([p["omega0"], 0.0, 0.0])  # projected onto N(A) in M by simulate
    cset = four_bar_set(l0, l1, l2, l3, dens, p["g"])
    mech = cset.mechanism
    # potential zero at the lowest configuration of the closed chain (crank scan)
    if p["parallelogram"]:
        scan = [np.array([t, -t, t]) for t in np.linspace(0, 2 * np.pi, 721)]
    else:  # the crank angles where the loop closes (a rocker crank does not turn over)
        scan = []
        for t in np.linspace(0, 2 * np.pi, 721):
            try:
                scan.append(closure_state(t, l0, l1, l2, l3))
            except ValueError:
                continue
    V_low = min(mech.compute(qs).potential for qs in scan)
    opt = SimOptions(dt=p["dt"], potential_offset=V_low)
    traj, wall = timed_simulate(cset, q0, v0, p["t_end"], opt)
    a = traj.arrays()
    metrics = {
        **decoupling(cset, a["q"], every=20),
        "energy_drift_rel": traj.energy_drift_rel(),
        "energy_reference": traj.energy_reference(),
        "constraint_rank_min": int(a["rank"].min()),
        "sigma_min_min": float(a["sigma_min"].min()),
        "min_sigma": float(a["sigma_min"].min()),
        "crank_turns": float((a["q"][-1, 0] - a["q"][0, 0]) / (2 * np.pi)),
        "fold_crossings": fold_crossings(a["sigma_min"]),
    }
    if p["parallelogram"]:
        # on the parallelogram branch the rocker stays parallel to the crank (q3 = q1);
        # the anti-parallelogram branch meets it at every fold
        dq = np.angle(np.exp(1j * (a["q"][:, 2] - a["q"][:, 0])))
        metrics["branch_deviation_max"] = float(np.abs(dq).max())
    ground = (np.array([0.0, l0]), np.zeros(2))
    return ScenarioResult(
        traj,
        metrics,
        wall,
        **planar_animation(mech, a["t"], a["q"]),
        static_lines=[ground],
        plots={
            "loop_rank": {
                "title": "loop-closure Jacobian: smallest singular value and rank",
                "ylabel": "sigma_min(A) [m], rank",
                "log": False,
                "series": {"sigma_min(A)": a["sigma_min"], "rank(A)": a["rank"]},
            }
        },
        notes=f"link lengths (l0, l1, l2, l3) = ({l0}, {l1}, {l2}, {l3}) m; start crank angle "
        f"{theta1:.4g} rad.",
    )
