"""The derivatives' dense product (``src/cpp/algorithms/dense_product.cpp``: an AVX2 +
FMA kernel where the CPU has both, Eigen's product otherwise) against NumPy's ``@`` on
every shape class the kernel splits (8-row and 4-row blocks, a 1-3 row masked tail,
1-4 column blocks, depth 0), accumulated and not, its left factor plain and transposed;
and the compiled derivatives equal with the kernel on and off (``PFAFF_NO_AVX2``, in a
fresh process: the choice is made once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from pfaff import core

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def _core():
    from pfaff import _core

    return _core


@pytest.mark.parametrize("accumulate", [False, True])
def test_the_dense_product_equals_numpys_on_every_block_shape(accumulate):
    c_ = _core()
    rng = np.random.default_rng(3)
    worst = 0.0
    for m in range(1, 31):
        for n in (1, 2, 3, 4, 5, 11, 44):
            for k in (0, 1, 3, 6, 22):
                lhs, rhs = rng.normal(size=(m, k)), rng.normal(size=(k, n))
                c = rng.normal(size=(m, n))
                ref = -0.7 * lhs @ rhs + (c if accumulate else 0.0)
                got, got_t = c_.dense_product(lhs, rhs, c, -0.7, accumulate)
                scale = 1.0 + np.abs(lhs).sum(axis=1).max(initial=0) * np.abs(rhs).max(initial=0)
                for g in (got, got_t):
                    assert g.shape == (m, n)
                    worst = max(worst, float(np.abs(g - ref).max() / scale))
    assert worst < 1e-14


def test_the_dense_product_catches_a_wrong_factor():
    """The check above is not blind: a product with one entry of r changed differs."""
    c_ = _core()
    rng = np.random.default_rng(4)
    lhs, rhs = rng.normal(size=(9, 5)), rng.normal(size=(5, 6))
    wrong = rhs.copy()
    wrong[2, 3] += 1e-6
    got, _ = c_.dense_product(lhs, wrong, np.zeros((9, 6)), 1.0, False)
    assert np.abs(got - lhs @ rhs).max() > 1e-8


def test_the_dense_product_refuses_mismatched_shapes():
    c_ = _core()
    with pytest.raises(ValueError, match="r has shape"):
        c_.dense_product(np.ones((3, 4)), np.ones((5, 2)), np.zeros((3, 2)), 1.0, False)
    with pytest.raises(ValueError, match="c has shape"):
        c_.dense_product(np.ones((3, 4)), np.ones((4, 2)), np.zeros((2, 2)), 1.0, True)


_SCRIPT = """
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import pfaff
from pfaff import _core
from tests.where import MODELS
out = {"fma": bool(_core.fma_kernel())}
for name in ("parallel_gripper", "closed_chain_biped"):
    s = pfaff.load(MODELS / f"{name}.xml")
    rng = np.random.default_rng(5)
    q = s.integrate(s.q0, rng.normal(0, 0.05, s.nv))
    r = s.forward_dynamics_derivatives(q, rng.normal(0, 0.5, s.nv), rng.normal(0, 0.5, s.nv))
    assert r.engine == "core"
    out[name] = {f: np.asarray(getattr(r, f)).tolist() for f in ("da_dq", "da_dv", "dlam_dq")}
json.dump(out, sys.stdout)
"""


def _run(no_avx2: bool) -> dict:
    env = dict(os.environ)
    env.pop("PFAFF_NO_AVX2", None)
    if no_avx2:
        env["PFAFF_NO_AVX2"] = "1"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    res = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_the_derivatives_agree_with_the_kernel_on_and_off():
    on, off = _run(False), _run(True)
    assert off["fma"] is False  # PFAFF_NO_AVX2 takes Eigen's product
    for name in ("parallel_gripper", "closed_chain_biped"):
        for f in ("da_dq", "da_dv", "dlam_dq"):
            a, b = np.array(on[name][f]), np.array(off[name][f])
            assert np.abs(a - b).max() <= 1e-9 * max(1.0, np.abs(b).max())
