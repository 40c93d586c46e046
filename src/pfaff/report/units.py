"""The unit of every metric and summary figure, from one table.

Reports (``report.html``, the sweep report) look units up here, never in their
own lists. A name is matched exactly first (:data:`UNITS`), then with a prefix
or suffix that does not change the unit removed (:data:`SAME_UNIT_AFFIXES`:
``pfaff_``, ``mujoco_``, ``baseline_``, ``sweep_``, ``simulate_``, ``_3r``,
``_panda``, ``_exp``), then by a suffix pattern (:data:`PATTERNS`: ``_s`` is
seconds, ``_rel`` dimensionless, ...). Dimensionless quantities (ratios,
counts, flags, text) are listed explicitly as :data:`DIMENSIONLESS`; a name
found nowhere has no unit (``None``), and a test requires that no metric of
any scenario is in that case.

Angles are in radians, SI otherwise. Where a quantity mixes coordinates of
different kinds (joint angles and slider displacements, a pose's position and
rotation entries) the unit names both (``"rad or m"``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "DIMENSIONLESS",
    "UNITS",
    "PATTERNS",
    "SAME_UNIT_AFFIXES",
    "SCENARIO_UNITS",
    "unit_of",
    "with_unit",
    "param_unit",
    "parameter_units",
]

DIMENSIONLESS = "-"
"""The unit of a ratio, a count, a flag or a text."""

_D = DIMENSIONLESS
_ROOT_KG_M = "sqrt(kg) m"  # lengths and distances in the inertia metric |dq|_M

#: exact names -> unit
UNITS: dict[str, str] = {
    # summary.json headline figures and the sweep table's own columns
    "sim_time_s": "s",
    "steps": _D,
    "wall_time_s": "s",
    "realtime_factor": _D,
    "max_constraint_violation": "m or rad",
    "max_velocity_constraint_violation": "m/s or rad/s",
    # model files and system files
    "constraint_rows": _D,
    "constraint_rank": _D,
    "dof": _D,
    "assembly_displacement": "rad or m",
    "energy_reference": "J",
    "max_kinetic_energy": "J",
    "force_work_final": "J",
    "limit_events": _D,
    "limit_impact_loss": "J",
    "contact_events": _D,
    "max_cone_ratio": _D,
    "contact_events_after_landing": _D,
    "least_norm_min_normal_force": "N",
    "least_norm_contact_events": _D,
    "least_norm_end_s": "s",
    "tracking_error_max": "m",
    "qp_failures": _D,
    "contact_events_after_grasp": _D,
    "floor_releases": _D,
    "box_slip": "m",
    "box_height_gained": "m",
    "height_error": "m",
    "t_grasp": "s",
    "least_norm_box_height_gained": "m",
    "least_norm_box_slip": "m",
    "least_norm_grasp_lost_s": "s",
    "max_penetration": "m",
    "pfaff_max_penetration": "m",
    "mujoco_max_penetration": "m",
    "pfaff_contact_events": _D,
    "pfaff_first_impact_s": "s",
    "mujoco_first_impact_s": "s",
    "task_error_final": "rad or m",
    "violation_max": "m or rad",
    "violation_mean": "m or rad",
    "cost_per_sim_second_s": "s/s",
    # decoupling (Proposition 3), ||(I - P) M P|| / ||M||
    "decoupled": _D,
    "decoupling_residual_max": _D,
    # four-bar, slider-crank
    "constraint_rank_min": _D,
    "sigma_min_min": "m/rad",
    "min_sigma": "m/rad",
    "sigma_min_A_min": "m/rad",
    "branch_deviation_max": "rad",
    "min_abs_cos_q1_sampled": _D,
    "kkt_max_condition": _D,
    "kkt_accel_deviation_max": "rad/s^2",
    "kkt_lambda_deviation_max": "N",
    "kkt_force_deviation_max": "N m",
    # slider-crank-pidc
    "rms_tracking_error": "rad",
    "passive_torque_max": "N m",
    # particle-circle (constraint force over m g)
    "constraint_force_max_error": _D,
    # panda-contact
    "tool_travel": "m",
    "tool_height_error_max": "m",
    "model_used": _D,
    "start_posture": "rad or m",
    # planar-arm-force, panda-table
    "max_tracking_error_after": "m",
    "max_position_error_after": "m",
    "max_force_error_after": "N",
    "max_force_error_before_sample": "N",
    "min_contact_force": "N",
    "min_norm_gap": "N m",
    "mean_torque_norm": "N m",
    # Yoshikawa-Zheng scenarios and the dual Panda
    "max_position_error": "m",
    "max_position_error_free": "m",
    "max_position_error_approach": "m",
    "max_position_error_x": "m",
    "max_orientation_error": "rad",
    "max_controller_position_error": "m or rad",
    "max_constraint_force_error": "N",
    "max_constraint_moment_error": "N m",
    "max_internal_force_error": "N",
    "max_internal_other_error": "N or N m",
    "max_y_deviation": "m",
    "min_normal_force": "N",
    "impact_velocity": "m/s",
    "min_gap_after_release": "m",
    "surface_y": "m",
    # geodesic (t in [0, 1] s)
    "distance": _ROOT_KG_M,
    "joint_line_length": _ROOT_KG_M,
    "bvp_endpoint_error": "rad",
    "endpoint_error": "rad",
    "cauchy_schwarz_gap": "kg m^2",
    "v0_1": "rad/s",
    "v0_2": "rad/s",
    # curvature of the inertia metric
    "scalar_curvature_2link": "1/(kg m^2)",
    "scalar_curvature_brioschi": "1/(kg m^2)",
    "scalar_curvature_error": "1/(kg m^2)",
    "max_curvature_flat": "1/rad^2",
    "max_curvature_yz_table1": "1/rad^2",
    "yz_flat_R": "kg m^2",
    "christoffel_fd_error": "kg m^2",
    # Arimoto's law (handwriting-robot, panda-surface)
    "final_position_error": "m",
    "final_force_error": "N",
    "lyapunov_increase_max": "J",
    "energy_increase_max": "J",
    "final_distance_to_em1": _ROOT_KG_M,
    "final_distance_to_em1_max": _ROOT_KG_M,
    "eq62_max_error": "N",
    "alpha": "N/m^3",
    "sigma_m": "m^2",
    "sigma_M": "m^2",
    "inertia_eigenvalue_max": "kg m^2",
    "gain_conditions_violated": _D,
    "riemannian_distance_q0_qstar": _ROOT_KG_M,
    "riemannian_distance_q0_qinf": _ROOT_KG_M,
    "riemannian_distance_qinf_qstar": _ROOT_KG_M,
    "distance_q0_qstar": _ROOT_KG_M,
    "distance_qinf_qstar": _ROOT_KG_M,
    # rolling-grasp
    "final_wrench_residual": _D,
    "final_speed": "m/s or rad/s",
    "rolling_slip_max": "m/s",
    "arclength_ode_mismatch": "m",
    "arclength_ode_mismatch_sampled_rate": "m",
    "max_tangential_ratio": _D,
    "final_normal_forces": "N",
    "energy_drop": "J",
    "final_dissipation_rate": "W",
    "frobenius_defect": "1/m or 1/rad",
    "leaf_gradient_norm": "N or N m",
    "morse_hessian_eigenvalues": "N/m or N m/rad",
    "morse_minimum": _D,
    "morse_hessian_error": "N/m or N m/rad",
    "rolling_integral_drift": "m",
    "initial_gap": "m",
    "contour_length": "m",
    "reparametrisation_error": "m",
    "contact_arclength_travel": "m",
    # redundant-chain (3R arm: task in m; Panda: SE(3), position m and rotation -)
    "lift_residual": _D,
    "lift_horizontality": "kg m or kg m^2",
    "lift_vs_closed_form": "rad/m or -",
    "lift_vs_pinv_max_diff": "rad/m or -",
    "lift_vs_pinv_identity_metric": "rad/m or -",
    "kool_vs_rnea_max_err": "N m",
    "euler_poincare_residual": _D,
    "poe_vs_pinocchio_fk_err": "m or -",
    "poe_body_jacobian_err": "m/rad or -",
    # five-bar-ilqr (the cost's weights make it a number; times and ratios by pattern)
    "cost_initial": _D,
    "cost_final_analytic": _D,
    "cost_final_differences": _D,
    "iterations_analytic": _D,
    "iterations_differences": _D,
    "converged_analytic": _D,
    "converged_differences": _D,
    "goal_error_q": "rad",
    "goal_error_v": "rad/s",
    "goal_error_q_initial": "rad",
    "goal_error_v_initial": "rad/s",
    "phi_max": "m",
    "replay_deviation_max": "rad",
    "distal_sin_min": _D,
    "sigma_A_kept_min": "m/rad",
}

#: scenario name -> {metric: unit} where a scenario's metric differs from the table's
SCENARIO_UNITS: dict[str, dict[str, str]] = {
    # the tracking error is the crank angle's (planar-arm-force's is the tip's x, in m)
    "slider-crank-pidc": {"max_tracking_error_after": "rad"},
}

#: (regular expression on the name, unit), tried in order after the exact names
PATTERNS: tuple[tuple[str, str], ...] = (
    (r"_rel($|_)", _D),
    (r"_ratio($|_)", _D),
    (r"(^|_)(samples|crossings|failures|turns|failed)$", _D),
    (r"_decay_rate", "1/s"),
    (r"_s$", "s"),
    (r"_m$", "m"),
    (r"_rad$", "rad"),
    (r"^loop_drift_", "rad"),
    (r"^loop_task_closure_", "m or -"),
    (r"^bracket_defect_", "rad/m^2 or mixed"),
)

#: prefixes and suffixes that name a variant of a quantity in the same unit
SAME_UNIT_AFFIXES: tuple[str, ...] = (
    "^metric\\.",  # a sweep column named after a metric that clashes with a parameter
    "^pfaff_",
    "^mujoco_",
    "^baseline_",
    "^sweep_",
    "^simulate_",
    "_3r$",
    "_panda$",
    "_exp$",
)


def unit_of(name: str, scenario: str | None = None) -> str | None:
    """The unit of a metric or summary figure (``"-"``: dimensionless), or None if unknown.

    ``scenario`` (its registered name) selects the few metrics whose unit depends
    on the scenario (:data:`SCENARIO_UNITS`).

    Examples
    --------
    >>> unit_of("energy_drift_rel"), unit_of("contact_time_s"), unit_of("tool_travel")
    ('-', 's', 'm')
    """
    special = SCENARIO_UNITS.get(scenario or "", {})
    if name in special:
        return special[name]
    if name in UNITS:
        return UNITS[name]
    for affix in SAME_UNIT_AFFIXES:
        stripped = re.sub(affix, "", name)
        if stripped != name and stripped:
            unit = unit_of(stripped, scenario)
            if unit is not None:
                return unit
    for pattern, unit in PATTERNS:
        if re.search(pattern, name):
            return unit
    return None


def with_unit(name: str, unit: str | None = None, scenario: str | None = None) -> str:
    """``"name [unit]"`` (``unit`` default :func:`unit_of`); the bare name when the
    unit is unknown."""
    unit = unit_of(name, scenario) if unit is None else unit
    return f"{name} [{unit}]" if unit else name


_BRACKET = re.compile(r"\[([^\[\],]{1,24})\]")


def param_unit(doc: str) -> str | None:
    """The unit a parameter's description gives in brackets (``"integrator step [s]"``
    -> ``"s"``, ``"plane z = height [m] in the base frame"`` -> ``"m"``).

    ``None`` when the description gives none.
    """
    m = _BRACKET.search(doc)
    return m.group(1).strip() if m else None


#: units of the parameters every model and system file has (their Param docs say so too)
COMMON_PARAMETER_UNITS = {"t_end": "s", "dt": "s", "control_dt": "s"}


def parameter_units(scenario: str, names: Iterable[str] = ()) -> dict[str, str]:
    """Parameter name -> unit of a scenario's parameters, from their descriptions.

    A registered scenario's :class:`~pfaff.scenarios.registry.Param` descriptions
    end with their unit (``"integrator step [s]"``); for a model or system file
    (which is not loaded here) and for names a description leaves without a unit,
    :data:`COMMON_PARAMETER_UNITS` gives the times. ``names`` adds those names
    (a sweep's columns) to the lookup.
    """
    out = {k: v for k, v in COMMON_PARAMETER_UNITS.items() if not names or k in names}
    try:
        from pfaff.scenarios.registry import SCENARIOS

        sc = SCENARIOS.get(scenario)
    except ImportError:  # pragma: no cover - the scenarios layer is part of pfaff
        sc = None
    if sc is not None:
        for key, param in sc.params.items():
            unit = param_unit(param.doc)
            if unit:
                out[key] = unit
    return out
