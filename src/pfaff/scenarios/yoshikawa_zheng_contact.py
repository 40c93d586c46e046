"""Yoshikawa-Zheng task 3 (IJRR 1993, Sec. 5): free motion, impact, constrained motion, release.

The plant is :class:`~pfaff.systems.yz_planar.YZPlanarPlant`; the phases are chained
with :class:`~pfaff.simulate.phases.PhaseChain`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from pfaff.control.references import smooth_move, time_at_speed
from pfaff.scenarios.common import planar_animation
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.scenarios.yz_common import (
    CONTACT_H_PARAM,
    YZ_COMMON_PARAMS,
    YZ_SERIES_DOC,
    internal_vs_table2,
    step_mask,
    yz_plant,
    yz_plots,
    yz_static_lines,
)
from pfaff.simulate import SimOptions
from pfaff.simulate.phases import PhaseChain
from pfaff.systems.yz_planar import SQRT2
from pfaff.systems.yz_references import TABLE2_STEPS, free_reference, table2


@scenario(
    "yz-contact",
    **YZ_COMMON_PARAMS,
    y_distance=Param(0.025, "desired y goes forth and back through this [m] (Sec. 5.3)"),
    contact_h=CONTACT_H_PARAM,
    impact_velocity=Param(
        0.068, "desired normal speed where the surface is placed [m/s] (Sec. 5.3)", positive=True
    ),
    contact_force_threshold=Param(
        0.2,
        "contact force at which y switches from motion to force control [N] (chosen)",
        positive=True,
    ),  # fmt: skip
    t_end=Param(0.9, "end of the run [s] (free motion after t_move)", positive=True),
)
def yz_contact(p: dict) -> ScenarioResult:
    """Yoshikawa-Zheng task 3: free motion, impact, constrained motion, departure (Sec. 5).

    The yz-free reference (x: +0.05 m in 0.8 s; y: forth and back through 0.025 m)
    with a surface y = wall above the start, placed where the desired y speed
    falls to ``impact_velocity`` (0.068 m/s) while decelerating: the object hits it
    at t_c (plastic impact: ``project_state`` projects the velocity in the metric
    M onto the contact constraints; an impact interrupt resamples the controller
    and its 2 ms clock restarts there). Motion control along y continues until
    the sensed contact force reaches ``contact_force_threshold`` (0.2 N, chosen);
    then r_P = (x, phi) with f_F following Table 2 (force control, K_IF = 100).
    At t_r = t_move - t_c the desired y comes back to the surface with speed
    -0.068 m/s: the desired normal force is withdrawn, y returns to motion
    control and the object leaves the surface (the plant's contact row is
    dropped; the gap is checked to stay open). Each phase is one ``simulate``
    run chained with ``stop`` / ``t0``; the report's trajectory concatenates them
    (a phase's last sample is replaced by the next phase's first; the wall's
    multiplier and residual are 0 while free). Layout as yz-free.
    """
    x0, y0, D, Dy, T, ta, h = (p[k] for k in ("x0", "y0", "distance", "y_distance", "t_move",
                                               "t_acc", "contact_h"))  # fmt: skip
    if not ta < T / 2:
        raise ValueError(f"t_acc = {ta} s must be < t_move/2 = {T / 2} s")
    tay = ta / 2
    t_c = time_at_speed(Dy, T / 2, tay, p["impact_velocity"])
    wall = y0 + smooth_move(t_c, T / 2, Dy, tay)[0] + h
    t_r = T - t_c
    su = yz_plant(p, wall_y=wall)

    r_d = free_reference(x0, y0, T, D, ta, Dy, tay)

    su.check_path([r_d(ti)[0] for ti in np.linspace(0, T, 81)])

    def ref(t, mode):
        r, rd, rdd = r_d(t)
        fF, fI = table2(t)
        fI = np.array([SQRT2 * fI])
        if mode == 0:
            return r, rd, rdd, np.zeros(0), fI
        return r[[0, 2]], rd[[0, 2]], rdd[[0, 2]], np.array([fF]), fI

    def gap(q):
        return wall - (q[5] + h * math.cos(q[6]))

    def v_n(q, v):
        return v[5] - h * math.sin(q[6]) * v[6]

    dt = p["dt"]
    opt = SimOptions(dt=dt, control_dt=p["control_dt"], stage_projection=p["stage_projection"])
    ctrl = su.controller(ref, p["control_dt"], mode=0, rule=p["integral_rule"])
    q0 = su.initial_q(np.array([x0, y0, 0.0]))
    chain = PhaseChain(q0, np.zeros(7), opt, controller=ctrl)

    wall_t = time.perf_counter()
    # 1. free motion until the contact is less than one step ahead ...
    tr = chain.run(su.free, T, lambda t, s, c: gap(s.q) <= v_n(s.q, s.v) * dt)
    if tr.stopped_at is None:
        raise ValueError(f"the object never reaches the surface y = {wall:.4f} m")
    # ... then partial steps (same held torque, before the next sample) onto the surface
    for _ in range(3):
        t, q, v = chain.t, chain.q, chain.v
        g, vn = gap(q), v_n(q, v)
        tc = min(g / vn, 0.999 * (chain.next_sample - t)) if vn > 0 else 0.0
        if g <= 1e-12 or tc <= 1e-9:
            break
        chain.run(
            su.free,
            tc,
            options=SimOptions(dt=tc, control_dt=tc, stage_projection=p["stage_projection"]),
        )
    impact_v, impact_gap = v_n(chain.q, chain.v), gap(chain.q)
    t_contact = chain.t
    # 2. plastic impact (the controller samples at it); motion control along y until
    # the contact force reaches the threshold
    chain.impact(su.contact)
    # the free-object model cannot predict the torque step's effect while the surface
    # holds the object: integrate the end-of-hold readings until the switch
    ctrl.integral_rule = "end"
    thr = p["contact_force_threshold"]
    # the readings of the controller's last sample (the stop is checked at every step)
    tr = chain.run(su.contact, T - chain.t, lambda t, s, c: -ctrl.last_sensors["lambda"][4] >= thr)
    if tr.stopped_at is None:
        raise ValueError(f"the contact force never reaches the threshold {thr} N")
    t_switch = chain.t
    # 3. force control along the normal until the desired normal force is withdrawn
    ctrl.set_mode(1)
    chain.resample()
    ctrl.integral_rule = p["integral_rule"]
    chain.run(su.contact, max(t_r - chain.t, dt), lambda t, s, c: t >= t_r - 1e-9)
    t_release = chain.t
    # 4. departure: motion control along y again; the contact row is dropped
    ctrl.set_mode(0)
    chain.resample()
    chain.run(su.free, p["t_end"] - chain.t)
    wall_s = time.perf_counter() - wall_t
    traj = chain.trajectory(su.contact.dim)
    a = traj.arrays()
    t, qq = a["t"], a["q"]
    pos = qq[:, 4:7]
    pos_d = np.array([r_d(ti)[0] for ti in t])
    lam_wall = a["lambda"][:, 4]
    fF = -lam_wall
    fI, fd = internal_vs_table2(su, a)
    in_contact = (t >= t_contact - 1e-12) & (t < t_release - 1e-12)
    controlled = (t >= t_switch - 1e-12) & (t < t_release - 1e-12)
    fFd = np.where(controlled, fd[:, 0], np.nan)
    excl = p["step_exclusion_s"]
    events = (0.0, *TABLE2_STEPS, t_contact, t_switch, t_release)
    keep = step_mask(t, events, excl)
    free = ~in_contact
    gaps = np.array([gap(qi) for qi in qq])
    metrics = {
        "impact_velocity": float(impact_v),
        "contact_time_s": float(t_contact),
        "switch_time_s": float(t_switch),
        "release_time_s": float(t_release),
        "max_constraint_force_error": float(np.abs(fF - fd[:, 0])[controlled & keep].max()),
        "max_position_error_free": float(np.abs(pos[:, :2] - pos_d[:, :2])[free].max()),
        "max_position_error_approach": float(
            np.abs(pos[:, :2] - pos_d[:, :2])[t < t_contact - 1e-12].max()
        ),
        "max_position_error_x": float(np.abs(pos[:, 0] - pos_d[:, 0]).max()),
        "max_orientation_error": float(np.abs(pos[:, 2]).max()),
        "max_internal_force_error": float(np.abs(fI - fd[:, 1])[keep].max()),
        "impact_gap_m": float(impact_gap),
        "min_gap_after_release": float(gaps[t >= t_release].min()),
        "surface_y": float(wall),
    }
    plots = yz_plots(t, pos, pos_d, ["x", "y", "phi"], fF, fFd, fI, fd[:, 1], a["tau"])
    plots["positions"]["series"]["surface - contact_h"] = np.full(t.size, wall - h)
    plots["contact"] = {
        "title": "gap to the surface and phases (0 free, 1 contact, 2 force control)",
        "ylabel": "gap [m] / phase",
        "series": {"gap x 100": 100 * gaps,
                   "phase": in_contact.astype(float) + controlled.astype(float)},
    }  # fmt: skip
    return ScenarioResult(
        traj, metrics, wall_s, **planar_animation(su.mech, t, qq),
        static_lines=yz_static_lines(su, (x0, x0 + D)),
        plots=plots,
        extra_arrays={"constraint_force": fF, "internal_force": fI, "desired_forces": fd,
                      "gap": gaps},
        series_doc={
            **YZ_SERIES_DOC,
            "constraint_force": YZ_SERIES_DOC["constraint_force"] + " (0 free)",
            "gap": "distance of the contact point below the surface [m]",
        },
    )  # fmt: skip
