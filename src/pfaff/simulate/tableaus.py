"""The fixed-step integrators as data: explicit Runge-Kutta tableaus (Butcher), one
registry for the NumPy engine's stepper (:func:`~pfaff.simulate.steppers.rk_step`) and
the engine choice; a new explicit method is one entry here. (SciPy's
``solve_ivp`` methods, the adaptive integrators, are listed in
:data:`pfaff.simulate.options.ADAPTIVE`.)

On a Lie group (free, ball, planar joints) each tableau runs in Runge-Kutta-Munthe-Kaas
form (the stages move along the tangent space at the step's start).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tableau:
    """An explicit Runge-Kutta method: stage ``i`` at ``t + c_i dt`` from the stage
    rates ``k_j``, ``j < i``, weighted by ``a[i][j]``; the step by the weights ``b``.

    Attributes
    ----------
    name : the ``SimOptions.integrator`` name.
    a : (s, s) strictly lower-triangular stage coefficients.
    b : (s,) weights; c : (s,) nodes (``c_i = sum_j a_ij``).
    order : the classical order (the tests measure it).

    Both engines run every entry: the NumPy engine's stepper
    (:func:`~pfaff.simulate.steppers.rk_step`) and the compiled core's step loop, which
    takes ``a`` and ``b`` (``System.set_tableau``).
    """

    name: str
    a: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]
    c: tuple[float, ...]
    order: int

    def check(self) -> None:
        """Refuse an inconsistent tableau (shapes, explicitness, row sums, weights)."""
        A, b, c = np.array(self.a, float), np.array(self.b, float), np.array(self.c, float)
        s = b.size
        if A.shape != (s, s) or c.shape != (s,) or np.any(np.triu(A) != 0.0):
            raise ValueError(f"tableau {self.name!r}: a must be strictly lower triangular s x s")
        if np.abs(A.sum(axis=1) - c).max() > 1e-15 or abs(b.sum() - 1.0) > 1e-15:
            raise ValueError(f"tableau {self.name!r}: c_i = sum_j a_ij and sum b = 1 needed")


#: the fixed-step integrators, by name
TABLEAUS: dict[str, Tableau] = {
    t.name: t
    for t in (
        Tableau(  # the classical fourth-order method (Kutta 1901)
            "rk4",
            ((0, 0, 0, 0), (0.5, 0, 0, 0), (0, 0.5, 0, 0), (0, 0, 1, 0)),
            (1 / 6, 1 / 3, 1 / 3, 1 / 6),
            (0, 0.5, 0.5, 1),
            4,
        ),
        Tableau(  # Kutta's third-order method
            "rk3",
            ((0, 0, 0), (0.5, 0, 0), (-1, 2, 0)),
            (1 / 6, 2 / 3, 1 / 6),
            (0, 0.5, 1),
            3,
        ),
        Tableau("heun", ((0, 0), (1, 0)), (0.5, 0.5), (0, 1), 2),  # explicit trapezoid
    )
}
for _t in TABLEAUS.values():
    _t.check()


@dataclass(frozen=True)
class EmbeddedPair:
    """An explicit embedded Runge-Kutta pair with SciPy ``solve_ivp``'s error control,
    as the compiled core takes it (``System.set_adaptive``): the coefficients are
    SciPy's own (``scipy.integrate.RK45``, ``scipy.integrate.DOP853``), so both engines
    integrate with one method.

    Attributes
    ----------
    a : (s, s) strictly lower-triangular stage coefficients; b : (s,) weights of the
        propagated solution; c : (s,) nodes.
    e : (s + 1,) weights of the error estimate over the stages and the step's end
        (DOP853: its fifth-order estimate E5); e3 : DOP853's third-order estimate E3
        (empty for RK45), which its error norm combines with ``e``.
    order : the order of the error estimator (the step-size exponent is
        ``-1 / (order + 1)``).
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    e: np.ndarray
    e3: np.ndarray
    order: int


def adaptive_pair(name: str) -> EmbeddedPair:
    """The embedded pair of the adaptive integrator ``name`` (``"RK45"`` or ``"DOP853"``)
    from SciPy's solver class of that name. Raises ValueError for another name."""
    from scipy import integrate

    if name not in ("RK45", "DOP853"):
        raise ValueError(f"no explicit embedded pair {name!r}; valid: RK45, DOP853")
    cls = getattr(integrate, name)
    s = int(cls.n_stages)
    a = np.zeros((s, s))
    a[:, : cls.A.shape[1]] = cls.A[:s]
    e, e3 = (cls.E5, cls.E3) if name == "DOP853" else (cls.E, np.zeros(0))
    return EmbeddedPair(
        a,
        np.asarray(cls.B, float),
        np.asarray(cls.C, float),
        np.asarray(e, float),
        np.asarray(e3, float),
        int(cls.error_estimator_order),
    )
