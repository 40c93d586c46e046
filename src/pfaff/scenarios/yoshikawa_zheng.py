"""Yoshikawa-Zheng tasks 1 and 2 (IJRR 1993, Sec. 5.2-5.3): two arms slide a held object
along a surface (yz-constrained) or move it in free space (yz-free).

The plant is :class:`~pfaff.systems.yz_planar.YZPlanarPlant`; the shared
parameters, probe and plots are in :mod:`pfaff.scenarios.yz_common`.
"""

from __future__ import annotations

import numpy as np

from pfaff.control.references import smooth_move
from pfaff.scenarios.common import planar_animation
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.scenarios.yz_common import (
    CONTACT_H_PARAM,
    YZ_COMMON_PARAMS,
    YZ_SERIES_DOC,
    decay_probe,
    internal_vs_table2,
    run_task,
    step_mask,
    yz_plant,
    yz_plots,
    yz_static_lines,
)
from pfaff.systems.yz_planar import SQRT2
from pfaff.systems.yz_references import TABLE2_STEPS, free_reference, table2


@scenario(
    "yz-constrained",
    **YZ_COMMON_PARAMS,
    contact_h=CONTACT_H_PARAM,
    surface_y=Param(0.14, "the constraint surface y = surface_y, parallel to x [m] (chosen)"),
    probe=Param(True, "also run the 60 ms unloaded-start probe that fits the force-loop rates"),
)
def yz_constrained(p: dict) -> ScenarioResult:
    """Yoshikawa-Zheng task 1: two arms slide a held object along a surface (Sec. 5.2-5.3).

    Plant: two YZ arms (Table 1; a Pinocchio model, see ``model``) + the object (0.03
    kg, 14.4e-5 kg m^2), pins as PointsCoincide along x and y, the surface y =
    surface_y a unilateral PointOnPlane on the object's contact point (0, contact_h).
    Controller: eq. (32)-(37) + (41)-(43) at 500 Hz with r_P = (x, phi), f_F normal to the
    surface, f_IS the squeeze; gains K_V = (65, 55), K_P = (13000, 15000) (the
    x and phi entries of Sec. 5.3), K_IF = 100, K_II = 70; desired forces of
    Table 2 (internal force = the average push of the two pins = f_IS/sqrt(2)).
    Chosen layout: bases (-0.08, 0) and (0.08, 0), hole spacing 0.12 m, object
    from x = -0.025 to 0.025 at y = 0.13, surface at y = 0.14. Measured forces are
    the plant's multipliers (what the held torque produced, read at each sample).
    The integral of eq. (42)-(43) is taken over each hold interval against that
    interval's desired value, with the trapezoid of the force at the start of the
    hold (reading + the torque step through K of eq. 31) and at its end, so the
    drift within a hold is centred and with the exact model a Table 2 step leaves
    no transient; the force-loop rates are
    fitted in a 60 ms probe that starts from an unloaded grasp (integrators at
    -f_d/K): K_fit = (1 - rho)/dt, rho the per-sample error ratio (eq. 45-46
    sampled), next to the exponential rate -ln(rho)/dt.
    """
    su = yz_plant(p, wall_y=p["surface_y"])
    y0 = p["surface_y"] - p["contact_h"]
    x0, D, T, ta = p["x0"], p["distance"], p["t_move"], p["t_acc"]
    if not ta < T / 2:
        raise ValueError(f"t_acc = {ta} s must be < t_move/2 = {T / 2} s")
    xs = np.linspace(x0, x0 + D, 41)
    try:
        su.check_path([np.array([x, y0, 0.0]) for x in xs], "the constraint surface")
    except ValueError as exc:
        raise ValueError(
            f"constraint surface y = {p['surface_y']} m cannot be reached by the held object "
            f"over x in [{x0}, {x0 + D}]: {exc}"
        ) from None

    def ref(t, mode):
        s, sd, sdd = smooth_move(t, T, D, ta)
        fF, fI = table2(t)
        return (
            np.array([x0 + s, 0.0]), np.array([sd, 0.0]), np.array([sdd, 0.0]),
            np.array([fF]), np.array([SQRT2 * fI]),
        )  # fmt: skip

    q0, traj, a, wall = run_task(su, su.contact, [x0, y0, 0.0], ref, p, 1, T)
    t = a["t"]
    pos = a["q"][:, [4, 6]]
    pos_d = np.array([[x0 + smooth_move(ti, T, D, ta)[0], 0.0] for ti in t])
    fF = -a["lambda"][:, 4]
    fI, fd = internal_vs_table2(su, a)
    keep = step_mask(t, (0.0, *TABLE2_STEPS), p["step_exclusion_s"])
    metrics = {
        "max_position_error": float(np.abs(pos[:, 0] - pos_d[:, 0]).max()),
        "max_orientation_error": float(np.abs(pos[:, 1]).max()),
        "max_constraint_force_error": float(np.abs(fF - fd[:, 0])[keep].max()),
        "max_internal_force_error": float(np.abs(fI - fd[:, 1])[keep].max()),
        "min_contact_force": float(fF.min()),
        "max_y_deviation": float(np.abs(a["q"][:, 5] - y0).max()),
    }
    if p["probe"]:
        kF, kF_exp, kI, kI_exp = decay_probe(su, su.contact, q0, ref, p, 1)
        metrics.update(
            constraint_force_decay_rate=kF, internal_force_decay_rate=kI,
            constraint_force_decay_rate_exp=kF_exp, internal_force_decay_rate_exp=kI_exp,
        )  # fmt: skip
    return ScenarioResult(
        traj, metrics, wall, **planar_animation(su.mech, t, a["q"]),
        static_lines=yz_static_lines(su, (x0, x0 + D)),
        plots=yz_plots(t, pos, pos_d, ["x", "phi"], fF, fd[:, 0], fI, fd[:, 1], a["tau"]),
        extra_arrays={"constraint_force": fF, "internal_force": fI, "desired_forces": fd},
        series_doc=YZ_SERIES_DOC,
    )  # fmt: skip


@scenario(
    "yz-free",
    **YZ_COMMON_PARAMS,
    y_distance=Param(0.025, "y goes forth and back through this [m] (Sec. 5.3)"),
    probe=Param(True, "also run the 60 ms unloaded-start probe that fits the internal-force rate"),
)
def yz_free(p: dict) -> ScenarioResult:
    """Yoshikawa-Zheng task 2: two arms move a held object in free space (Sec. 5.2-5.3).

    The same plant and controller as yz-constrained with C = 0: r_P = r = (x, y,
    phi), K_V = diag(65, 50, 55), K_P = diag(13000, 13000, 15000), K_II = 70; x
    moves 0.05 m in 0.8 s, y goes forth and back through 0.025 m in the same
    0.8 s (each half a quartic-accel / constant / decel move with t_acc/2), phi at 0;
    the internal force follows Table 2. Chosen layout as yz-constrained.
    """
    su = yz_plant(p)
    x0, y0, D, Dy, T, ta = (
        p["x0"],
        p["y0"],
        p["distance"],
        p["y_distance"],
        p["t_move"],
        p["t_acc"],
    )
    if not ta < T / 2:
        raise ValueError(f"t_acc = {ta} s must be < t_move/2 = {T / 2} s")
    tay = ta / 2

    r_d = free_reference(x0, y0, T, D, ta, Dy, tay)

    su.check_path([r_d(ti)[0] for ti in np.linspace(0, T, 81)])

    def ref(t, mode):
        return (*r_d(t), np.zeros(0), np.array([SQRT2 * table2(t)[1]]))

    q0, traj, a, wall = run_task(su, su.free, [x0, y0, 0.0], ref, p, 0, T)
    t = a["t"]
    pos = a["q"][:, 4:7]
    pos_d = np.array([r_d(ti)[0] for ti in t])
    fI, fd = internal_vs_table2(su, a)
    keep = step_mask(t, (0.0, *TABLE2_STEPS), p["step_exclusion_s"])
    metrics = {
        "max_position_error": float(np.abs(pos[:, :2] - pos_d[:, :2]).max()),
        "max_orientation_error": float(np.abs(pos[:, 2]).max()),
        "max_internal_force_error": float(np.abs(fI - fd[:, 1])[keep].max()),
    }
    if p["probe"]:
        metrics["internal_force_decay_rate"] = decay_probe(su, su.free, q0, ref, p, 0)[2]
    return ScenarioResult(
        traj, metrics, wall, **planar_animation(su.mech, t, a["q"]),
        static_lines=yz_static_lines(su, (x0, x0 + D)),
        plots=yz_plots(t, pos, pos_d, ["x", "y", "phi"], None, None, fI, fd[:, 1], a["tau"]),
        extra_arrays={"internal_force": fI, "desired_forces": fd},
        series_doc={k: YZ_SERIES_DOC[k] for k in ("internal_force", "desired_forces")},
    )  # fmt: skip
