"""Shared helpers of the MJCF tests: where the models are, MuJoCo as a witness."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from pfaff.bench.mujoco_rk4 import EQUALITY_DIR, EQUALITY_MODELS

HERE = Path(__file__).parent
OWN = HERE / "models"
SHARED_NAMES = EQUALITY_MODELS


def shared_dir() -> Path | None:
    """MuJoCo's equality test models: $PFAFF_MUJOCO_MODELS, else the repository's copy
    (benchmarks/models/mujoco-equality), else ../shared/models next to the repository."""
    env = os.environ.get("PFAFF_MUJOCO_MODELS")
    candidates = [Path(env)] if env else []
    root = HERE.parent
    candidates += [
        EQUALITY_DIR,
        root.parent / "shared" / "models" / "mujoco-equality",
    ]
    for c in candidates:
        if (c / "jdotv_connect_2d.xml").is_file():
            return c
    return None


def shared_model(name: str) -> Path:
    d = shared_dir()
    if d is None:
        pytest.skip(
            "MuJoCo's equality test models are not here (set PFAFF_MUJOCO_MODELS to the "
            "folder holding jdotv_connect_2d.xml etc.)"
        )
    return d / f"{name}.xml"


def mujoco_or_skip():
    return pytest.importorskip(
        "mujoco", reason="MuJoCo is the witness here: pip install -e '.[mujoco]'"
    )


def mujoco_equality_residual(mujoco, m, d, qpos: np.ndarray) -> np.ndarray:
    """MuJoCo's equality rows of efc_pos at ``qpos`` (its own residuals)."""
    d.qpos[:] = qpos
    d.qvel[:] = 0
    mujoco.mj_forward(m, d)
    return d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY].copy()


def mujoco_full_M(mujoco, m, d) -> np.ndarray:
    """MuJoCo's dense joint-space inertia (armature included): mj_fullM of MuJoCo 4
    (m, d, dst) or of MuJoCo 3 (m, dst, qM)."""
    M = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, M)
    except TypeError:  # MuJoCo 3.x
        mujoco.mj_fullM(m, M, d.qM)
    return M


def _connect_point(mujoco, m, d, e: int, which: int) -> tuple[np.ndarray, int]:
    """World point and body of one side of a connect equality (body anchors or sites)."""
    obj = int((m.eq_obj1id if which == 1 else m.eq_obj2id)[e])
    if int(m.eq_objtype[e]) == int(mujoco.mjtObj.mjOBJ_SITE):
        return d.site_xpos[obj].copy(), int(m.site_bodyid[obj])
    local = m.eq_data[e][0:3] if which == 1 else m.eq_data[e][3:6]
    return d.xpos[obj] + d.xmat[obj].reshape(3, 3) @ local, obj


def mujoco_equality_rows(mujoco, m, d) -> tuple[np.ndarray, np.ndarray]:
    """``(J, drift)`` of the connect and (linear) joint equalities at MuJoCo's current
    state (after mj_forward): J from mj_jac at the two points (joint rows: the unit
    and coefficient entries), drift = J' qvel from mj_jacDot (joint rows: 0). Weld
    rows are not built here."""
    rows, drifts = [], []
    for e in range(m.neq):
        if not m.eq_active0[e]:
            continue
        t = int(m.eq_type[e])
        if t == int(mujoco.mjtEq.mjEQ_CONNECT):
            Js, Jd = [], []
            for which in (1, 2):
                p, b = _connect_point(mujoco, m, d, e, which)
                jp, jd = np.zeros((3, m.nv)), np.zeros((3, m.nv))
                mujoco.mj_jac(m, d, jp, None, p, b)
                mujoco.mj_jacDot(m, d, jd, None, p, b)
                Js.append(jp)
                Jd.append(jd)
            rows.append(Js[0] - Js[1])
            drifts.append((Jd[0] - Jd[1]) @ d.qvel)
        elif t == int(mujoco.mjtEq.mjEQ_JOINT):
            c = m.eq_data[e][:5]
            assert np.all(c[2:] == 0), "only linear couplings have a zero drift"
            row = np.zeros((1, m.nv))
            row[0, m.jnt_dofadr[m.eq_obj1id[e]]] = 1.0
            if m.eq_obj2id[e] >= 0:
                row[0, m.jnt_dofadr[m.eq_obj2id[e]]] -= c[1]
            rows.append(row)
            drifts.append(np.zeros(1))
        else:
            raise NotImplementedError(f"equality type {t}")
    if not rows:
        return np.zeros((0, m.nv)), np.zeros(0)
    return np.vstack(rows), np.concatenate(drifts)


def gauss_reference(M: np.ndarray, f: np.ndarray, J: np.ndarray, drift: np.ndarray, rtol=1e-9):
    """Gauss's principle: the acceleration closest to M^-1 f in the metric of M with
    J a = -drift, by SVD least squares (redundant rows: singular values below
    ``rtol`` times the largest dropped). M = L L^T, a = a_u + L^-T y,
    y = pinv(J L^-T) (-drift - J a_u)."""
    a_u = np.linalg.solve(M, f)
    if J.shape[0] == 0:
        return a_u
    L = np.linalg.cholesky(M)
    B = np.linalg.solve(L, J.T).T  # J L^-T
    U, s, Vt = np.linalg.svd(B, full_matrices=False)
    keep = s > rtol * s[0]
    r = -drift - J @ a_u
    y = Vt[keep].T @ ((U[:, keep].T @ r) / s[keep])
    return a_u + np.linalg.solve(L.T, y)


def mujoco_efc_equality_J(mujoco, m, d, qpos: np.ndarray) -> np.ndarray:
    """MuJoCo's own equality rows of efc_J at ``qpos`` (m.opt.jacobian must be dense)."""
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    eq = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    return np.asarray(d.efc_J).reshape(d.nefc, m.nv)[eq].copy()


def mujoco_equality_drift_fd(mujoco, m, qpos: np.ndarray, qvel: np.ndarray, h: float = 1e-3):
    """``J'(q, qvel) qvel`` of MuJoCo's equality rows by central differences of efc_J along
    ``q(t) = mj_integratePos(qpos, qvel, t)``, Richardson-extrapolated from h and h/2
    (error O(h^4)); for rows without an analytic J' (weld)."""
    d = mujoco.MjData(m)

    def central(step: float) -> np.ndarray:
        out = []
        for s in (step, -step):
            q = np.array(qpos, dtype=float)
            mujoco.mj_integratePos(m, q, np.asarray(qvel, dtype=float), s)
            out.append(mujoco_efc_equality_J(mujoco, m, d, q))
        return (out[0] - out[1]) / (2 * step) @ qvel

    return (4 * central(h / 2) - central(h)) / 3
