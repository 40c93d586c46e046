"""A constrained robot as one object: its mechanism, constraints, force elements and
assembled start, with the dynamics at a state (design.md Sec. 4, Python API).

``pfaff.load(path)`` reads an MJCF or URDF model file or a TOML system file into a
:class:`System`; :class:`pfaff.Simulator` steps one.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pfaff import core
from pfaff import dynamics as dyn
from pfaff.api.checks import check_vector
from pfaff.constraints.base import ConstraintSet
from pfaff.contact.model import PAIR_WARNINGS
from pfaff.derivatives import RANK_RADIUS, DynamicsDerivatives
from pfaff.derivatives import forward_dynamics_derivatives as _derivatives
from pfaff.errors import ModelError
from pfaff.files.model import MODEL_SUFFIXES, ModelSystem, load_model
from pfaff.files.system import load_system
from pfaff.linalg import DEFAULT_RANK_TOL
from pfaff.mechanism.mjcf_collisions import CONTACT_WARNING
from pfaff.simulate.assembly import Assembly, assemble, moved_note
from pfaff.simulate.forces import ForceSet

__all__ = ["DynamicsResult", "System", "load"]


@dataclass(frozen=True)
class DynamicsResult:
    """The constrained dynamics at one state (Aghili 2005, eq. 22 and 32).

    Attributes
    ----------
    a : acceleration (nv,) [rad/s^2, m/s^2].
    lam : multipliers of the constraint rows (m,), ``F = A^T lam``.
    F : generalized constraint force (nv,) [N m, N].
    rank : rank of the constraint Jacobian A at ``q`` (absolute threshold ``rank_tol``).
    """

    a: np.ndarray
    lam: np.ndarray
    F: np.ndarray
    rank: int


def load(path: str | Path, keyframe: str | None = None, contact: bool = True) -> System:
    """Read a model file (MJCF ``.xml``, URDF ``.urdf``) or a system file (``.toml``).

    Parameters
    ----------
    path : the file.
    keyframe : for an MJCF, the keyframe to start from (default: the file's first,
        else its reference posture qpos0).
    contact : model the contacts between an MJCF's collision geoms (MuJoCo's filter
        and mixing rules; :mod:`pfaff.contact.model`): a :class:`pfaff.Simulator` holds
        them as unilateral constraints with Coulomb friction (what is approximate, as a
        pair of two round geoms on moving bodies, is warned).
        ``False``: no contacts, a warning naming the pairs that can meet. A model without
        collision geoms that can meet runs as without contact. A URDF's collision
        elements are not read (warned).

    Returns
    -------
    System
        Its start assembled onto the constraint manifold.

    Raises
    ------
    TypeError
        ``path`` is not a ``str`` or ``os.PathLike``.
    pfaff.errors.ModelError, pfaff.errors.ParameterError
        The file cannot be read, or describes something pfaff refuses (the message says
        what and what is valid).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"pfaff.load expects the path of a model file (.xml MJCF, .urdf URDF) or a "
            f"system file (.toml) as a str or pathlib.Path, got {type(path).__name__} "
            f"{path!r:.80}"
        )
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".toml":
        if keyframe is not None:
            raise ModelError("keyframe= applies to MJCF files; a system file names its start")
        return _announced(System(load_system(p).system, source=str(p)))
    if suffix not in MODEL_SUFFIXES:
        raise ModelError(
            f"{str(p)!r}: expected a model file ({', '.join(MODEL_SUFFIXES)}) or a system "
            "file (.toml)"
        )
    model = load_model(p, keyframe, contact)
    return _announced(System(model, source=str(p)))


#: the words of a ``System.warnings`` line that names a part of the file not simulated
DROPPED = ("not modelled", "not held", "is ignored", "left out")


def _announced(system: System) -> System:
    """``system``, its contact warnings (geoms that can meet, while contact is not
    modelled; pairs held approximately) raised as Python warnings, and the parts of the
    file it does not simulate (a joint's dry friction, an actuator left out) as one more,
    naming the first three: a file written for MuJoCo runs without them."""
    contact = [w for w in system.warnings if w.startswith((CONTACT_WARNING, *PAIR_WARNINGS))]
    for w in contact:
        warnings.warn(w, UserWarning, stacklevel=3)
    dropped = [w for w in system.warnings if w not in contact and any(d in w for d in DROPPED)]
    if dropped:
        more = f"; and {len(dropped) - 3} more" if len(dropped) > 3 else ""
        warnings.warn(
            f"{len(dropped)} part(s) of the file are not simulated ({'; '.join(dropped[:3])}"
            f"{more}): System.warnings lists each",
            UserWarning,
            stacklevel=3,
        )
    return system


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``: writing into it raises, the owner's array stays."""
    view = a.view()
    view.flags.writeable = False
    return view


class System:
    """A constrained mechanism with its force elements and assembled start.

    Parameters
    ----------
    model : what a file describes (:class:`pfaff.files.model.ModelSystem`).
    source : the file it came from, for messages.
    rank_tol : absolute threshold on the singular values of A (Aghili Sec. 2).
    assemble_tol : largest ``|Phi_i|`` of the assembled start.

    Attributes
    ----------
    nq, nv : sizes of the configuration and of the velocity.
    q0, v0 : the start, assembled onto the manifold (v0 projected onto N(A)).
    rank : the rank of the constraint Jacobian A at the assembled start.
    mechanism : the unconstrained multibody model (:class:`pfaff.mechanism.base.Mechanism`).
    cset : the constraints (:class:`pfaff.constraints.base.ConstraintSet`).
    assembly : how the start was brought onto the manifold
        (:class:`pfaff.simulate.assembly.Assembly`: the assembled ``q``, ``v``, the
        ``displacement``, ``rows``, ``rank``, ``dof``, the singular values ``sigma``).
    forces : the force elements (springs, dampers) added to every torque.
    actuators : the actuators (:class:`pfaff.mechanism.actuators.Actuator`) that the
        ``ctrl`` of :meth:`pfaff.Simulator.step` drives.
    warnings : what the file holds that pfaff does not model (one line each), e.g.
        collision geoms that can meet while contact is not modelled.
    limits : the joint limits (:class:`pfaff.simulate.limits.JointLimit`) and fixed
        tendons' limits (:class:`pfaff.simulate.limits.TendonLimit`) that
        :func:`pfaff.simulate.limits.simulate_limited` and a :class:`pfaff.Simulator`
        hold as unilateral constraints.
    contacts : the contact pairs (:class:`pfaff.contact.model.FileContacts`) a
        :class:`pfaff.Simulator` holds: the model's, from ``pfaff.load(path)``; None
        with ``contact=False`` or without an MJCF.
    """

    def __init__(
        self,
        model: ModelSystem,
        source: str = "",
        rank_tol: float = DEFAULT_RANK_TOL,
        assemble_tol: float = 1e-12,
    ) -> None:
        self.model = model
        #: the contact pairs a Simulator holds (pfaff.contact.model.FileContacts), or None
        self.contacts = model.contacts
        self.source = source
        self.mechanism = model.mechanism
        self.cset = ConstraintSet(self.mechanism, model.constraints)
        self.forces = list(model.forces)
        #: the actuators (pfaff.mechanism.actuators.Actuator) a Simulator's ctrl drives
        self.actuators = list(model.actuators)
        self._force_set = ForceSet(self.mechanism, self.forces)
        self.rank_tol = float(rank_tol)
        self.warnings = list(model.warnings)
        self.limits = list(model.limits)
        self.assembly: Assembly = assemble(
            self.cset, model.q, model.v, assemble_tol, 100, self.rank_tol
        )
        self._q0 = self.assembly.q.copy()
        self._v0 = self.assembly.v.copy()
        moved = moved_note(self.assembly.displacement, model.start)
        if moved is not None:
            self.warnings.append(moved)
            warnings.warn(moved, UserWarning, stacklevel=2)
        self._frames = tuple(dict.fromkeys((*self.cset.frames, *self._force_set.frames)))

    def __repr__(self) -> str:
        return (
            f"System({self.source or self.mechanism.name!r}: nq={self.nq}, nv={self.nv}, "
            f"constraint rows={self.cset.dim}, rank={self.assembly.rank})"
        )

    @property
    def q0(self) -> np.ndarray:
        """The assembled start configuration (nq,), read-only (``q0.copy()`` to edit one;
        a start of your own goes to :meth:`pfaff.Simulator.reset`)."""
        return _read_only(self._q0)

    @property
    def v0(self) -> np.ndarray:
        """The start velocity (nv,) projected onto N(A), read-only."""
        return _read_only(self._v0)

    @property
    def nq(self) -> int:
        return self.mechanism.nq

    @property
    def nv(self) -> int:
        return self.mechanism.nv

    @property
    def rank(self) -> int:
        """The rank of the constraint Jacobian A at the assembled start :attr:`q0`
        (SVD, absolute threshold ``rank_tol``); ``forward_dynamics(q, v).rank`` is the
        rank at another state."""
        return int(self.assembly.rank)

    @property
    def nu(self) -> int:
        """The number of controls (actuators) :meth:`pfaff.Simulator.step` takes."""
        return len(self.actuators)

    # -- the configuration manifold (Pinocchio's) -------------------------------------
    def integrate(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """``q (+) dq``: the configuration reached from ``q`` along the tangent ``dq``."""
        return self.mechanism.integrate(*self._state(q, dq, "dq"))

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """The tangent ``dq`` with ``integrate(q0, dq) = q1``."""
        q0 = self._q(q0, "q0")
        return self.mechanism.difference(q0, self._q(q1, "q1"))

    # -- MuJoCo's coordinates ------------------------------------------------------------
    def qpos_to_q(self, qpos: np.ndarray) -> np.ndarray:
        """MuJoCo ``qpos`` -> pfaff ``q`` (quaternions scalar-last, hinge ``ref`` removed);
        the identity for URDF and system files on a URDF."""
        coords = self.model.coords
        return self._q(qpos, "qpos") if coords is None else coords.qpos_to_q(qpos)

    def qvel_to_v(self, q: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """MuJoCo ``qvel`` at ``q`` -> pfaff ``v`` (a free joint's linear velocity in its
        body frame); the identity for URDF."""
        coords = self.model.coords
        q, qvel = self._state(q, qvel, "qvel")
        return qvel.copy() if coords is None else coords.qvel_to_v(q, qvel)

    def q_to_qpos(self, q: np.ndarray) -> np.ndarray:
        """pfaff ``q`` -> MuJoCo ``qpos`` (inverse of :meth:`qpos_to_q`)."""
        coords = self.model.coords
        q = self._q(q)
        return q.copy() if coords is None else coords.q_to_qpos(q)

    def v_to_qvel(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """pfaff ``v`` at ``q`` -> MuJoCo ``qvel`` (inverse of :meth:`qvel_to_v`)."""
        coords = self.model.coords
        q, v = self._state(q, v, "v")
        return v.copy() if coords is None else coords.v_to_qvel(q, v)

    # -- dynamics ----------------------------------------------------------------------
    def forward_dynamics(
        self, q: np.ndarray, v: np.ndarray, tau: np.ndarray | None = None
    ) -> DynamicsResult:
        """The constrained forward dynamics at ``(q, v, tau)`` (Aghili 2005, eq. 22, 32).

        The constraints are the file's (bilateral), the force elements (springs,
        dampers) are added to ``tau``. Redundant rows are fine: the rank is judged
        by SVD with the absolute threshold ``rank_tol``.

        Parameters
        ----------
        q : numpy.ndarray
            Configuration (nq,).
        v : numpy.ndarray
            Velocity (nv,).
        tau : numpy.ndarray, optional
            Joint torque (nv,) [N m, N]; default zero.

        Returns
        -------
        DynamicsResult
            The acceleration ``a``, the multipliers ``lam``, the constraint force ``F``
            and the ``rank`` of A at ``q``.
        """
        q, v = self._state(q, v, "v")
        tau = np.zeros(self.nv) if tau is None else self._vec(tau, self.nv, "tau", "nv")
        snap = self.mechanism.compute(q, v, self._frames, extras=False)
        if self._force_set:
            tau = tau + self._force_set.evaluate(0.0, snap)[0]
        ev = self.cset.evaluate(snap)
        sol = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift, self.rank_tol)
        return DynamicsResult(sol.a, sol.lam, sol.F, int(sol.proj.rank))

    def forward_dynamics_derivatives(
        self, q: np.ndarray, v: np.ndarray, tau: np.ndarray | None = None, engine: str = "auto"
    ) -> DynamicsDerivatives:
        """Derivatives of :meth:`forward_dynamics` in ``q``, ``v`` and ``tau``.

        ``d.da_dq``, ``d.da_dv``, ``d.da_dtau`` (nv x nv), ``d.dlam_*`` (m x nv) and
        ``d.dF_*``: column k along the tangent direction ``delta_k`` of
        ``integrate(q, delta)``, along ``v_k``, along ``tau_k``. Exact (Pinocchio's
        analytic derivatives and the derivative of the projector at constant rank,
        :mod:`pfaff.derivatives`) wherever the rank of A is constant near ``q``, which
        ``d.rank_stable`` reports. The force elements' derivatives are central
        differences of their forces (step 1e-6; exact for linear springs and dampers).

        ``engine``: ``"core"`` the compiled derivatives (every constraint kind that
        lowers, its derivative rows analytic; every force element: a built-in kind's
        partials analytic, a Python law's by central differences), ``"numpy"``
        :mod:`pfaff.derivatives` (the force elements' partials by central differences),
        ``"auto"`` the core when it takes the system, else NumPy with a warning (once)
        saying why. A mechanism given in closed form (:mod:`pfaff.plant`) has its ``M a +
        h`` and every row's ``A`` and drift by central differences of its ``compute``
        (step 1e-5) on either engine; ``d.fd_constraints`` then names every kind.
        """
        if engine not in ("auto", "numpy", "core"):
            raise ValueError(f"engine={engine!r}; valid: 'auto', 'numpy', 'core'")
        q, v = self._state(q, v, "v")
        tau = np.zeros(self.nv) if tau is None else self._vec(tau, self.nv, "tau", "nv")
        if engine != "numpy":
            compiled = self._compiled_derivatives(required=engine == "core")
            if compiled is not None:
                d = compiled(q, v, tau)
                stable = bool(d["rank_radius"] >= RANK_RADIUS)
                return DynamicsDerivatives(**d, rank_stable=stable, engine="core")
        dq = dv = None
        if self._force_set:
            Q, dq, dv = self._force_partials(q, v)
            tau = tau + Q
        return _derivatives(self.cset, q, v, tau, self.rank_tol, dq, dv)

    def _compiled_derivatives(self, required: bool):
        """The core's derivatives of this system (made once per set of constraints), or
        None with a warning (once) why not; ``required``: a ValueError instead."""
        key = (tuple(map(id, self.cset.constraints)), self.rank_tol)
        if getattr(self, "_compiled_key", None) != key:
            self._compiled_key = key
            self._compiled, self._compiled_why = None, None
            forces = self._force_set.elements if self._force_set else ()
            try:
                self._compiled = core.differentiator(self.cset, self.rank_tol, forces)
            except ValueError as exc:
                self._compiled_why = str(exc)
            if self._compiled is None and not required:
                warnings.warn(
                    f"forward_dynamics_derivatives on the NumPy engine: {self._compiled_why}",
                    stacklevel=3,
                )
        if self._compiled is None and required:
            raise ValueError(
                f"engine='core' cannot differentiate this system: {self._compiled_why}"
            )
        return self._compiled

    def _force_partials(self, q, v, h: float = 1e-6):
        """The force elements' total ``Q`` and its central differences in q and v."""
        fs, mech, frames = self._force_set, self.mechanism, self._force_set.frames

        def Q(qq, vv):
            return fs.evaluate(0.0, mech.compute(qq, vv, frames, dynamics=False))[0]

        dq, dv = np.empty((self.nv, self.nv)), np.empty((self.nv, self.nv))
        for k in range(self.nv):
            e = np.zeros(self.nv)
            e[k] = h
            dq[:, k] = (Q(mech.integrate(q, e), v) - Q(mech.integrate(q, -e), v)) / (2 * h)
            dv[:, k] = (Q(q, v + e) - Q(q, v - e)) / (2 * h)
        return Q(q, v), dq, dv

    # -- checks at the boundary ----------------------------------------------------------
    _vec = staticmethod(check_vector)

    def _q(self, q, name: str = "q") -> np.ndarray:
        q = self._vec(q, self.nq, name, "nq")
        self.mechanism.check_state(q)
        return q

    def _state(self, q, x, name: str) -> tuple[np.ndarray, np.ndarray]:
        return self._q(q), self._vec(x, self.nv, name, "nv")
