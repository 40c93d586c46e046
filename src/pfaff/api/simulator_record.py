"""The compiled core's record buffers of a :class:`~pfaff.api.Simulator` and its
pickling: the chunks of samples a run on the core writes (grown as the run grows, or
written again from their start with ``record=False``), a failed step's record, the
sample of the present state, and the state a pickled Simulator rebuilds its core
system from (the running accounts counted on from the pickled totals)."""

from __future__ import annotations

import numpy as np

from pfaff import core
from pfaff.simulate import SimulationError
from pfaff.simulate.core_engine import (
    attach_buffers,
    build,
    configure,
    project_start,
    set_ctrl,
)
from pfaff.simulate.policy import (
    ACCOUNTS,
    CORE_SERIES,
    FORCE_SERIES,
    StatusCode,
    by_name,
    status_message,
)

__all__ = ["ACCOUNTS", "CHUNK", "CHUNK_MAX", "CoreRecord"]

#: samples of the first record buffers (they double up to CHUNK_MAX as a run grows)
CHUNK = 1024
CHUNK_MAX = 1 << 16


class CoreRecord:
    """The record buffers and pickling of a Simulator on the compiled core (a base of
    :class:`~pfaff.api.Simulator`, which holds the attributes these methods read:
    ``_sys``, ``_bufs``, ``_chunks``, ``_rec``, ``_done``, ``_k``, ...)."""

    # -- pickling ----------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """The Simulator without its compiled objects (rebuilt by :meth:`__setstate__`)
        or its viewer; on the core, with what rebuilds the core's state: the start of
        the reset before any step, else the sample the last step started from and the
        running accounts now."""
        state = self.__dict__.copy()
        for key in ("_proto", "_sys", "_step"):
            state.pop(key, None)
        state["viewer"] = None
        if not self._py and self._k:
            bufs, fbufs, _ = self._final()
            named = {**by_name(CORE_SERIES, bufs), **by_name(FORCE_SERIES, fbufs)}
            now = {name: b[:1].copy() for name, b in named.items()}
            self._counted_on(now, self._k)  # the totals since the reset
            totals = np.array([now[name][0] for name in ACCOUNTS])
            last = self.last
            state["_present"] = (last.q, last.v, last.tau, last.t, totals, self._failures())
        return state

    def __setstate__(self, state: dict) -> None:
        """Rebuild the compiled system of a pickled Simulator: before any step as the
        reset built it, else by taking the last step again from the state it started
        from (the core's state and workspace as they were); the record so far is kept
        as a finished chunk, the accounts counted on from the pickled totals."""
        present = state.pop("_present", None)
        self.__dict__.update(state)
        if self.engine != "core":
            return
        proto = build(self.system.cset, self._forces)
        configure(proto, self.options)
        if self._limited is not None:
            self._limited.restore(proto)
        if self._py:
            return
        self._proto, self._step = proto, core.stepper()
        self._sys = core.clone(proto)
        if present is None:  # no step since the reset: its start again
            project_start(self._sys, *self._start, self.options)
            self._new_chunk(CHUNK)
            self._sys.set_tau(self._zero)
            return
        q, v, tau, t, totals, failures = present
        self._sys.set_state(q, v)
        attach_buffers(self._sys, self._shapes, 1)
        set_ctrl(self._sys, self._forces)
        st = self._step(self._sys, tau, self._k - 1, 1, self._t0)
        if st is not None:  # pragma: no cover - the step ran before the pickle
            raise SimulationError(status_message(self.system.cset, st), None)
        self._done += self._rec  # the samples so far: a finished chunk
        kept = (self._bufs, self._fbufs, self._rec)
        self._chunks = [*self._chunks, kept] if self.record_all else [kept]
        self._new_chunk(CHUNK)
        local = np.array([self._sys.work, self._sys.correction_energy, self._sys.force_work])
        offsets = totals - local
        self._restored = [
            *self._restored,
            (self._done, offsets, failures - self._sys.newton_failures),
        ]

    def _counted_on(self, cols: dict, start: int) -> None:
        """The record columns ``cols`` of the samples from ``start`` on, with the running
        accounts of a core system rebuilt by :meth:`__setstate__` counted on from the
        pickled totals."""
        for at, offsets, _ in reversed(self._restored):
            if start >= at:
                for name, offset in zip(ACCOUNTS, offsets):
                    cols[name] = cols[name] + offset
                return

    def _failures(self) -> int:
        """Newton failures since the reset (those before the last pickle counted on)."""
        return self._sys.newton_failures + (self._restored[-1][2] if self._restored else 0)

    # -- the core's record buffers -------------------------------------------------------
    def _new_chunk(self, cap: int) -> None:
        self._bufs, self._fbufs = attach_buffers(self._sys, self._shapes, cap)
        self._cap, self._rec = cap, 0

    def _grow(self, n: int) -> None:
        """Room for ``n`` more samples: a new chunk (the full one kept for ``record``),
        or with ``record=False`` the same buffers written again from their start."""
        self._done += self._rec
        if not self.record_all and n <= self._cap:
            self._sys.set_buffers(self._bufs, self._cap)
            self._chunks, self._rec = [(self._bufs, self._fbufs, self._rec)], 0
            return
        if self.record_all:
            self._chunks.append((self._bufs, self._fbufs, self._rec))
        self._new_chunk(max(n, min(2 * self._cap, CHUNK_MAX)))

    def _failed(self, st: tuple) -> None:
        """A step failed: the state stays at the last one reached (step ``k``). When the
        core recorded that state before the step failed, its sample is dropped (the next
        step records it anew, with its torque). Raises the :class:`SimulationError` with
        the record so far."""
        self._k, self._rec = self._sys.steps, self._sys.recorded
        if self._rec and self._done + self._rec > self._k:
            self._done += self._rec - 1
            kept = (self._bufs, self._fbufs, self._rec - 1)
            self._chunks = [*self._chunks, kept] if self.record_all else [kept]
            if self.record_all:
                self._new_chunk(CHUNK)
            else:  # the same buffers from their start
                self._sys.set_buffers(self._bufs, self._cap)
                self._rec = 0
        msg = status_message(self.system.cset, st)
        raise SimulationError(msg, self.record() if self.record_all else None)

    def _final(self) -> tuple[list, list, int]:
        """The sample of the present state, taken on a copy of the core system (the
        live one goes on as if it had not been taken)."""
        c = core.clone(self._sys)
        bufs, fbufs = attach_buffers(c, self._shapes, 1)
        st = c.run(self._k, self._k + 1, self._k, self._t0)
        return bufs, fbufs, int(st.code == StatusCode.OK)
