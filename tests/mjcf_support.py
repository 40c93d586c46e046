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
