"""Trajectory: the sampled record of a simulation, with energy bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pfaff.simulate.policy import ACCOUNTS, SERIES, SERIES_DOC, series_shape

_SERIES_BY_NAME = {s.name: s for s in SERIES}


class SimulationError(RuntimeError):
    """A simulation failed; ``trajectory`` holds what was computed before."""

    def __init__(self, message: str, trajectory: Trajectory | None = None) -> None:
        super().__init__(message)
        self.trajectory = trajectory


class SimulationInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C); ``trajectory`` holds the samples so far.

    A subclass of ``KeyboardInterrupt``: code that does not catch it stops as
    on any Ctrl-C.
    """

    def __init__(self, message: str, trajectory: Trajectory | None = None) -> None:
        super().__init__(message)
        self.trajectory = trajectory


class InitialStateError(ValueError):
    """The initial state cannot be brought onto the constraint manifold."""


def energy_drift_rel(
    energy: np.ndarray, kinetic: np.ndarray, reference: float | None = None
) -> float:
    """``max |E(t) - E(0)| / E_ref`` with ``E_ref = reference`` [J] when given, else the
    largest kinetic energy of the series (``max kinetic``).

    ``|E(0)|`` is not used: it depends on where the potential's zero is. A run that
    never moves (``E_ref = 0``) gives 0 without drift and inf with one; an empty
    series gives NaN. A reference that is not a finite number > 0 is refused
    (ValueError).
    """
    E = np.asarray(energy, float)
    if E.size == 0:
        return float("nan")
    if reference is None:
        T = np.asarray(kinetic, float)
        ref = float(T.max()) if T.size else float("nan")
    else:
        ref = float(reference)
        if not (np.isfinite(ref) and ref > 0):
            raise ValueError(f"energy reference must be a finite energy > 0 J, got {reference!r}")
    dE = float(np.abs(E - E[0]).max())
    if ref > 0:
        return dE / ref
    return 0.0 if dE == 0 else float("inf")


@dataclass
class Trajectory:
    """Samples of a run (one per recorded step).

    ``arrays()`` returns the ``trajectory.npz`` contract: ``t, q, v, tau,
    lambda, F, phi`` plus ``a, av, rank, sigma_min`` and the energy series,
    plus any ``signals`` that a controller or scenario recorded. ``rows[name]`` is a
    series as a list, one entry per sample; the compiled core hands its samples over
    as blocks (:meth:`add_block`: arrays of samples), moved into those lists when
    ``rows`` is first read and concatenated as they are by :meth:`series` and
    :meth:`arrays`.
    """

    nq: int
    nv: int
    m: int
    m_h: int
    #: the activations recorded per sample (the series ``act``; 0 without actuators
    #: with activation dynamics)
    na: int = 0
    _rows: dict[str, list] = field(default_factory=dict, repr=False)
    signals: dict[str, list] = field(default_factory=dict)
    steps: int = 0
    newton_failures: int = 0
    kkt_cond_max: float = 0.0
    stopped_at: float | None = None
    #: time of the controller's next sample after the run (None without a controller)
    next_control: float | None = None
    warnings: list[str] = field(default_factory=list)
    engine: str = "numpy"
    #: samples handed over as arrays (add_block), per series, not yet in _rows
    _blocks: dict[str, list[np.ndarray]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for k in SERIES_DOC:
            self._rows.setdefault(k, [])

    @property
    def rows(self) -> dict[str, list]:
        """Each series as a list, one entry per sample (the blocks moved in first)."""
        if self._blocks:
            for k, blocks in self._blocks.items():
                col = self._rows.setdefault(k, [])
                for b in blocks:
                    col.extend(b)
            self._blocks.clear()
        return self._rows

    def add_block(self, name: str, block: np.ndarray) -> None:
        """Samples of series ``name`` as one array (samples along axis 0), after those
        it holds: the core's record buffers handed over without a list entry per
        sample. ``t`` is not taken this way (``len`` counts its list)."""
        if name == "t":
            raise ValueError("the times are appended to rows['t'], not added as a block")
        if len(block):
            self._blocks.setdefault(name, []).append(block)

    def series(self, name: str) -> np.ndarray:
        """Series ``name`` as an array (samples along axis 0; its width's shape)."""
        sizes = {"nq": self.nq, "nv": self.nv, "m": self.m, "m_h": self.m_h, "na": self.na}
        spec = _SERIES_BY_NAME.get(name)  # a signal or a scenario's series: per sample
        shape = () if spec is None else series_shape(spec, sizes)
        # the list entries, then the blocks added after them (as ``rows`` orders them);
        # other series' blocks stay blocks
        if name not in self._rows and name not in self._blocks:
            raise KeyError(name)
        blocks, col = self._blocks.get(name, []), self._rows.get(name, [])
        parts = [np.asarray(b, dtype=float).reshape((len(b), *shape)) for b in blocks]
        if col or not parts:
            parts.insert(0, np.array(col, dtype=float).reshape((len(col), *shape)))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def append(self, **values) -> None:
        for k, val in values.items():
            self.rows[k].append(val)

    def append_signals(self, signals: dict[str, float | np.ndarray], count: int = 1) -> None:
        """Record the controller's signals for the last ``count`` samples (NaN where a
        signal was missing earlier)."""
        n = len(self) - count
        cols = self.signals
        for k, val in signals.items():
            col = cols.get(k)
            if col is None:
                col = cols[k] = [np.nan] * n
            elif len(col) < n:
                col.extend([np.nan] * (n - len(col)))
            col.extend([val] * count)

    def trim(self) -> None:
        """Drop a sample that was only partly recorded (a run stopped inside
        ``append``): every series keeps the samples that all of them have."""
        n = min(len(col) for col in self.rows.values())
        for col in self.rows.values():
            del col[n:]
        for col in self.signals.values():
            del col[n:]

    def __len__(self) -> int:
        return len(self._rows["t"])

    def arrays(self) -> dict[str, np.ndarray]:
        out = {k: self.series(k) for k in (*self._rows, *self._blocks)}
        n = len(self)
        for k, col in self.signals.items():
            col = list(col) + [np.nan] * (n - len(col))
            out[k] = np.asarray(col, dtype=float)
        return out

    @classmethod
    def concat(cls, parts: list[Trajectory], m: int | None = None) -> Trajectory:
        """One Trajectory of runs chained in time (phases with different constraint sets).

        Rules:

        - Times must not decrease from one part to the next (ValueError otherwise).
        - The switch sample: when a part starts at the time its predecessor ended
          (within 1e-12 s), the predecessor's last sample is dropped -- the state there
          is the next part's first sample (after an impact map, or with the switched
          controller). Times in the result are then strictly increasing.
        - Constraint rows are matched by position: ``lambda`` and ``av`` are padded
          with zeros to ``m`` (default: the widest part), ``phi`` to the widest
          ``m_h``; a phase with fewer rows has the first rows of the widest set, and
          its missing rows are 0 (no force, no residual).
        - The running accounts (:data:`ACCOUNTS`: ``work``, ``correction_energy``,
          ``force_work``), which every run counts from zero, are counted on: a part's
          are offset by the totals its predecessors reached at their last samples, so
          ``energy - energy[0] = work + force_work + correction_energy`` (less the
          impacts' losses) holds over the whole chain.
        - Controller signals missing in a part are NaN; every series has one entry
          per sample. ``steps`` and ``newton_failures`` add up, ``kkt_cond_max`` is
          the maximum, ``warnings`` are joined, ``stopped_at`` is the last part's.
        """
        if not parts:
            raise ValueError("Trajectory.concat needs at least one part")
        nq, nv = parts[0].nq, parts[0].nv
        if any((tr.nq, tr.nv) != (nq, nv) for tr in parts):
            raise ValueError("Trajectory.concat: the parts have different nq, nv")
        m = max(tr.m for tr in parts) if m is None else m
        m_h = max(tr.m_h for tr in parts)
        out = cls(nq, nv, m, m_h, max(tr.na for tr in parts))
        widths = {"lambda": m, "av": m, "phi": out.m_h}
        engines = {tr.engine for tr in parts}
        out.engine = engines.pop() if len(engines) == 1 else "mixed"
        carry = dict.fromkeys(ACCOUNTS, 0.0)
        for i, tr in enumerate(parts):
            n = len(tr)
            nxt = parts[i + 1] if i + 1 < len(parts) else None
            if nxt is not None and len(nxt) and n:
                if nxt.t[0] < tr.t[-1] - 1e-12:
                    raise ValueError(
                        f"Trajectory.concat: part {i + 1} starts at t = {nxt.t[0]:.9g} s, "
                        f"before part {i} ends (t = {tr.t[-1]:.9g} s)"
                    )
                if nxt.t[0] <= tr.t[-1] + 1e-12:
                    n -= 1
            start = len(out)
            for key, col in tr.rows.items():
                rows = col[:n]
                if key in widths:
                    w = widths[key]
                    rows = [np.pad(np.asarray(r, float), (0, w - len(r))) for r in rows]
                elif key in carry and len(col):
                    offset = carry[key]
                    rows = [r + offset for r in rows]
                    carry[key] = offset + float(col[-1])
                out.rows.setdefault(key, []).extend(rows)
            for key, col in tr.signals.items():
                dst = out.signals.setdefault(key, [])
                dst.extend([np.nan] * (start - len(dst)))
                dst.extend(list(col[:n]) + [np.nan] * (n - len(col[:n])))
            out.steps += tr.steps
            out.newton_failures += tr.newton_failures
            out.kkt_cond_max = max(out.kkt_cond_max, tr.kkt_cond_max)
            out.warnings += [w for w in tr.warnings if w not in out.warnings]
        for dst in out.signals.values():
            dst.extend([np.nan] * (len(out) - len(dst)))
        out.stopped_at, out.next_control = parts[-1].stopped_at, parts[-1].next_control
        return out

    @property
    def t(self) -> np.ndarray:
        return np.asarray(self._rows["t"])

    def _abs_max(self, key: str) -> float:
        x = self.series(key)
        return float(np.abs(x).max()) if x.size else 0.0

    def max_constraint_violation(self) -> float:
        """Max over the run of the largest holonomic residual ``|Phi_i(q)|``."""
        return self._abs_max("phi")

    def max_velocity_constraint_violation(self) -> float:
        """Max over the run of the largest ``|(A v)_i|``."""
        return self._abs_max("av")

    def energy_reference(self) -> float:
        """The energy scale of :meth:`energy_drift_rel` [J]: the largest kinetic energy
        reached in the run (independent of the potential's zero, unlike ``|E(0)|``)."""
        T = self.series("kinetic")
        return float(T.max()) if T.size else float("nan")

    def energy_drift_rel(self, reference: float | None = None) -> float:
        """:func:`energy_drift_rel` of this run's ``energy`` and ``kinetic`` series."""
        return energy_drift_rel(self.series("energy"), self.series("kinetic"), reference)
