"""Riemannian geometry of the inertia metric (Arimoto Sec. 2-4, Altafini Sec. II)."""

from pfaff.geometry.curvature import (  # noqa: F401  (public API)
    christoffel_derivative,
    is_flat,
    linearizing_isometry,
    max_curvature,
    pulled_back_metric,
    ricci,
    riemann,
    scalar_curvature,
    sectional_curvature,
    straightness,
)
from pfaff.geometry.geodesic import (  # noqa: F401  (public API)
    BVPError,
    Geodesic,
    curve_energy,
    curve_length,
    distance,
    integrate_geodesic,
    kinetic_energy,
    segment_length,
    shoot_geodesic,
)
from pfaff.geometry.metric import (  # noqa: F401  (public API)
    MetricError,
    arimoto_S,
    check_metric,
    christoffel_fd,
    christoffel_first,
    christoffel_from_dM,
    christoffel_second,
    coriolis_matrix,
    dM_dq,
    dM_fd,
    geodesic_acceleration,
    identity_13_16_residual,
    mdot,
    metric,
    quadratic,
)
from pfaff.geometry.submanifold import (  # noqa: F401  (public API)
    ConstrainedGeodesic,
    constrained_geodesic_acceleration,
    geodesic_multiplier,
    induced_metric,
    integrate_constrained_geodesic,
    m_orthonormal_kernel_basis,
    metric_gradient,
    shoot_constrained_geodesic,
    split_velocity,
    submanifold_distance,
)
