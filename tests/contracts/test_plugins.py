"""Scenarios of another package, through the ``pfaff.scenarios`` entry-point group."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pfaff.scenarios import SCENARIOS, load_plugins

PLUGIN = textwrap.dedent(
    '''
    """An out-of-tree scenario: a particle on a circle of a chosen radius."""
    import numpy as np
    from pfaff.constraints import ConstraintSet, PointOnCircle
    from pfaff.mechanism import planar_particle
    from pfaff.scenarios import Param, ScenarioResult, scenario
    from pfaff.simulate import SimOptions, simulate

    @scenario("my-circle", radius=Param(0.5, "circle radius [m]", positive=True))
    def my_circle(p):
        """A particle on a circle, from my own package."""
        r = p["radius"]
        cset = ConstraintSet(planar_particle(1.0), [PointOnCircle("particle", (0, 0), r)])
        traj = simulate(cset, np.array([r, 0.0]), np.zeros(2), 0.2, SimOptions(dt=1e-2))
        final = float(np.linalg.norm(traj.arrays()["q"][-1]))
        return ScenarioResult(traj, {"final_radius": final}, 0.1)
    '''
)


def _install(tmp_path, name: str, target: str, source: str | None) -> None:
    """A minimal installed distribution (dist-info + entry point) on ``tmp_path``."""
    if source is not None:
        (tmp_path / f"{target}.py").write_text(source)
    info = tmp_path / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[pfaff.scenarios]\n{name} = {target}\n")


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    _install(tmp_path, "mystudy", "mystudy_scenarios", PLUGIN)
    _install(tmp_path, "broken", "broken_scenarios", "raise ImportError('no such thing')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    SCENARIOS.pop("my-circle", None)
    sys.modules.pop("mystudy_scenarios", None)


def test_entry_point_adds_a_scenario_and_a_broken_one_warns(plugin_path):
    with pytest.warns(UserWarning, match="scenario plugin 'broken'.*no such thing"):
        loaded = load_plugins()
    assert "mystudy" in loaded and "broken" not in loaded
    from pfaff.scenarios import run_scenario

    s = run_scenario("my-circle", {"radius": 0.7})
    assert s["status"] == "ok" and abs(s["metrics"]["final_radius"] - 0.7) <= 1e-10


def test_pfaff_list_and_run_see_the_plugin(plugin_path, tmp_path):
    env_path = f"{plugin_path}"
    cmd = [sys.executable, "-c", "import sys; from pfaff.cli import main; sys.exit(main())"]
    env = {"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"}
    listed = subprocess.run([*cmd, "list"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0 and "my-circle" in listed.stdout
    assert "slider-crank" in listed.stdout  # pfaff's own, found without a list
    out = tmp_path / "run"
    ran = subprocess.run(
        [*cmd, "run", "my-circle", "--set", "radius=2", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    assert (out / "summary.json").is_file()


def test_a_plugin_cannot_take_a_builtin_name():
    from pfaff.scenarios import Param, scenario

    with pytest.raises(ValueError, match="'slider-crank' of .* is taken by pfaff.scenarios"):

        @scenario("slider-crank", x=Param(1.0, "x"))
        def fake(p):
            """Not the slider-crank."""
