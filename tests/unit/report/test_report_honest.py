"""Reports and scenes show what the run measured: the energy drift as the metric
defines it, units on every metric and axis, rendered docstrings, the model that
ran, world geometry, robots of system files, and a floor under the base."""

from __future__ import annotations

import ast
import base64
import gzip
import json
import re
import struct

import numpy as np
import pandas as pd
import pytest
from where import MODELS, REPO

import pfaff.report.writer as writer
import pfaff.sweep.report as sweep_report
from pfaff.cli import main
from pfaff.report.html import render_report, rst_to_html
from pfaff.report.plots import energy_figure
from pfaff.report.units import DIMENSIONLESS, param_unit, parameter_units, unit_of
from pfaff.scenarios import SCENARIOS, execute, run_scenario

FIVE_BAR = str(MODELS / "five_bar.xml")


# ------------------------------------------------------------- the energy plot


def _drift_curve(fig) -> np.ndarray:
    """The curve the energy plot draws in its drift axes."""
    return np.asarray(fig.axes[1].lines[0].get_ydata(), dtype=float)


def _plot_matches_metric(fig, metric: float) -> bool:
    """The plotted drift's largest absolute value is the metric (to 1e-9 of it)."""
    peak = float(np.abs(_drift_curve(fig)).max())
    return abs(peak - metric) <= 1e-9 * metric


@pytest.fixture(scope="module")
def five_bar_run():
    run = execute(FIVE_BAR, {"t_end": "1", "contact": False})  # conservative: no impacts
    assert run.summary["status"] == "ok"
    return run


def test_energy_plot_draws_what_energy_drift_rel_measures(five_bar_run):
    """A planar five-bar from an MJCF file, 1 s: the potential's zero is the start, so
    E0 = 0 J; the plotted (E - E0) / E_ref peaks at energy_drift_rel."""
    a, m = five_bar_run.arrays, five_bar_run.summary["metrics"]
    assert abs(a["energy"][0]) <= 1e-12  # [J] the case the old |E0| scale broke on
    drift = m["energy_drift_rel"]
    assert 0 < drift <= 1e-5
    ref = writer.energy_scale(five_bar_run.summary)
    assert ref == pytest.approx(m["energy_reference"], rel=1e-15)
    fig = energy_figure(a["t"], a["energy"], a["kinetic"], a["potential"], ref)
    assert _plot_matches_metric(fig, drift)
    label = fig.axes[1].get_ylabel()
    assert f"{ref:.3g} J" in label and "largest kinetic energy" in label
    # without the summary's reference the plot takes the same default as the metric
    fig = energy_figure(a["t"], a["energy"], a["kinetic"], a["potential"])
    assert _plot_matches_metric(fig, drift)


def test_a_wrong_energy_reference_is_caught(five_bar_run):
    """|E0| as the scale (what energy.png plotted) fails the check above."""
    a, drift = five_bar_run.arrays, five_bar_run.summary["metrics"]["energy_drift_rel"]
    e = a["energy"]
    fig = energy_figure(a["t"], e, a["kinetic"], a["potential"], abs(e[0]))
    assert not _plot_matches_metric(fig, drift)
    # the old curve: (E - E0) / max(|E0|, max |E|) swings to +-1 when E0 = 0
    old = (e - e[0]) / max(abs(e[0]), np.abs(e).max())
    assert np.abs(old).max() == pytest.approx(1.0) and drift < 1e-5


def test_report_writer_passes_the_runs_reference(five_bar_run, monkeypatch, tmp_path):
    seen = []

    def spy(t, energy, kinetic=None, potential=None, reference=None, reference_name=None):
        seen.append(reference)
        return b"\x89PNG\r\n\x1a\n"

    monkeypatch.setattr(writer, "plot_energy", spy)
    run = five_bar_run
    writer.write_report(tmp_path, run.summary, run.arrays, run.series_doc)
    assert seen == [run.summary["metrics"]["energy_reference"]]


# ------------------------------------------------------------- units


# cheap parameters for every scenario (and the branches that add metrics; the names of
# the branches left out here, q* and the sweep, are literal keys, held by the source
# test below)
CHEAP = {
    "dual-panda-box": {"t_move": "0.2", "t_acc": "0.05"},
    "four-bar": {"t_end": "0.1", "parallelogram": "true"},
    "five-bar-ilqr": {"horizon": "3", "dt": "0.04", "iterations": "2"},
    "curvature": {"t_end": "0.1"},
    "handwriting-robot": {"t_end": "0.05", "sweep": "false", "qstar": "false"},
    "panda-contact": {"t_end": "0.03"},
    "panda-surface": {"t_end": "0.05"},
    "panda-table": {"t_end": "0.6", "baseline": "true"},
    "particle-circle": {"t_end": "0.1"},
    "planar-arm-force": {"t_end": "0.6", "baseline": "true"},
    "redundant-chain": {"steps": "20"},
    "rolling-grasp": {"t_end": "0.01"},
    "slider-crank": {"t_end": "0.1"},
    "slider-crank-pidc": {"t_end": "0.1"},
    "stand": {"t_end": "0.1"},
    "yz-constrained": {"t_move": "0.1", "t_acc": "0.02"},
    "yz-free": {"t_move": "0.1", "t_acc": "0.02"},
}

_SYSTEM = """
model.file = "four_bar.urdf"
start.joints = { crank = -1.0, coupler = 0.6, rocker = -1.3 }
[[constraints]]
type = "points_coincide"
frame1 = "coupler_tip"
frame2 = "rocker_tip"
directions = [[1, 0, 0], [0, 0, 1]]
[[forces]]
type = "joint_damper"
joint = "rocker"
damping = 0.02
[controller]
type = "pidc"
joints = ["crank"]
target = [-0.7]
"""


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> dict[str, set[str]]:
    """Metric names that runs emit: every scenario, a model file, a system file with a
    controller and a force element, and (with MuJoCo) a comparison."""
    out = {name: set(run_scenario(name, CHEAP.get(name, {}))["metrics"]) for name in SCENARIOS}
    out["model file"] = set(run_scenario(FIVE_BAR, {"t_end": "0.05"})["metrics"])
    folder = tmp_path_factory.mktemp("system")
    (folder / "four_bar.urdf").write_text((MODELS / "four_bar.urdf").read_text())
    (folder / "s.toml").write_text(_SYSTEM)
    s = run_scenario(str(folder / "s.toml"), {"t_end": "0.05", "dt": "0.001"})
    out["system file"] = set(s["metrics"])
    try:
        import mujoco  # noqa: F401
    except ImportError:
        pass
    else:
        out["compare"] = set(run_scenario("compare:" + FIVE_BAR, {"t_end": "0.05"})["metrics"])
    return out


def test_every_emitted_metric_has_a_unit(emitted):
    assert {"task_error_final", "force_work_final", "energy_balance_rel"} <= emitted["system file"]
    missing = {
        name: sorted(m for m in metrics if unit_of(m, name) is None)
        for name, metrics in emitted.items()
    }
    assert not any(missing.values()), {k: v for k, v in missing.items() if v}


def _literal_metric_keys() -> set[str]:
    """String keys the scenario modules write into a ``metrics`` dict (also those of
    branches a cheap run does not take): ``metrics = {...}``, ``metrics["x"] = ...``,
    ``metrics.update({...})``."""
    keys: set[str] = set()
    root = REPO / "src" / "pfaff" / "scenarios"
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                if any(isinstance(t, ast.Name) and t.id == "metrics" for t in node.targets):
                    keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id == "metrics":
                    if isinstance(node.slice, ast.Constant):
                        keys.add(node.slice.value)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "update" and "metrics" in ast.unparse(node.func.value):
                    for arg in node.args:
                        if isinstance(arg, ast.Dict):
                            keys |= {k.value for k in arg.keys if isinstance(k, ast.Constant)}
    return {k for k in keys if isinstance(k, str)}


def test_every_metric_key_in_the_scenarios_source_has_a_unit():
    keys = _literal_metric_keys()
    assert {"baseline_min_contact_force", "sweep_distance_q0_qstar", "period_measured_s"} <= keys
    assert sorted(k for k in keys if unit_of(k) is None) == []


def test_units_table_lookups():
    assert unit_of("energy_drift_rel") == DIMENSIONLESS
    assert unit_of("energy_reference") == "J"
    assert unit_of("contact_time_s") == "s" and unit_of("impact_gap_m") == "m"
    assert unit_of("lift_vs_pinv_rel_panda") == DIMENSIONLESS
    assert unit_of("mujoco_energy_drift_rel") == DIMENSIONLESS
    assert unit_of("baseline_min_contact_force") == "N"
    assert unit_of("max_tracking_error_after") == "m"  # planar-arm-force: the tip's x
    assert unit_of("max_tracking_error_after", "slider-crank-pidc") == "rad"  # the crank
    assert unit_of("no_such_metric") is None
    assert param_unit("integrator step [s]") == "s"
    assert param_unit("plane z = height [m] in the base frame") == "m"
    assert param_unit("robot of example-robot-data") is None
    units = parameter_units("panda-contact")
    assert units["dt"] == "s" and units["height"] == "m" and units["q0"] == "rad or m"
    assert parameter_units("some/system.toml")["t_end"] == "s"


def _report_table(html: str, heading: str) -> dict[str, list[str]]:
    """Rows (name -> cells) of the table after ``<h2>heading</h2>``."""
    part = html.split(f"<h2>{heading}</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", part, re.S)
    cells = [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S) for r in rows]
    return {c[0]: c[1:] for c in cells}


def test_report_tables_show_units(five_bar_run):
    run = five_bar_run
    html = render_report(run.summary, {}, None, run.series_doc, run.description)
    metrics = _report_table(html, "Metrics")
    assert metrics["metric"] == ["value", "unit"]
    assert metrics["energy_reference"][1] == "J"
    assert metrics["energy_drift_rel"][1] == DIMENSIONLESS
    assert metrics["constraint_rows"][1] == DIMENSIONLESS
    assert all(cells[1] for cells in metrics.values())  # every metric of the run has one
    headline = _report_table(html, "Headline")
    assert headline["wall_time_s"][1] == "s"
    assert headline["max_constraint_violation"][1] == "m or rad"
    params = _report_table(html, "Parameters")
    assert params["t_end"][1] == "s" and params["dt"][1] == "s"


# ------------------------------------------------------------- docstrings


def test_docstrings_are_rendered_not_shown_raw():
    doc = """Title with ``code`` and :func:`~pfaff.simulate.simulate`.

    Body with *emphasis* and a `link <javascript:alert(1)>`_ and <script>x</script>.

    Keys::

        a = 1

    After the block."""
    html = rst_to_html(doc)
    assert '<span class="docutils literal">code</span>' in html
    assert '<span class="docutils literal">simulate</span>' in html
    assert "<em>emphasis</em>" in html
    assert '<pre class="literal-block">a = 1</pre>' in html
    assert "<p>After the block.</p>" in html
    assert "``" not in html and ":func:" not in html and "::" not in html
    assert "javascript:" not in html and "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "<blockquote>" not in html  # the indented body is not a quote


def test_scenario_report_has_no_raw_markup(tmp_path):
    run = execute("four-bar", {"t_end": "0.05"})
    assert "``min_sigma``" in run.description  # reStructuredText in the docstring ...
    html = render_report(run.summary, {}, None, run.series_doc, run.description)
    doc = html.split('<div class="doc">', 1)[1].split("</div>", 1)[0]
    assert "``" not in doc and ":func:" not in doc  # ... rendered in the page
    assert '<span class="docutils literal">min_sigma</span>' in doc


# ------------------------------------------------------------- what ran


def test_a_ur5_run_describes_the_ur5():
    sc = SCENARIOS["panda-contact"]
    q0 = "0,-1,1.2,0,0.5,0"
    res = sc.func(sc.resolve({"robot": "ur5", "frame": "tool0", "q0": q0, "t_end": "0.03"}))
    assert res.metrics["model_used"].startswith("example-robot-data ur5")
    assert "nq 6, nv 6" in res.notes and "shoulder_pan_joint" in res.notes
    assert "panda_joint" not in res.notes
    assert "The 7-joint Panda (fingers locked) starts" not in sc.doc


def test_a_system_files_notes_name_the_model(tmp_path):
    f = tmp_path / "ur5.toml"
    f.write_text('model.robot = "ur5"\n[simulation]\nt_end = 0.01\ndt = 0.001\n')
    run = execute(str(f))
    assert "model 'ur5', 6 joints (shoulder_pan_joint" in run.description
    assert "nq 6, nv 6" in run.description


# ------------------------------------------------------------- scenes

SCENE = re.compile(r'<script id="pfaff-scene"[^>]*data-encoding="(\w+)"[^>]*>(.*?)</script>', re.S)


def _decode(page: str) -> list[dict]:
    umsgpack = pytest.importorskip("umsgpack")
    m = SCENE.search(page)
    data = base64.b64decode("".join(m.group(2).split()))
    data = gzip.decompress(data) if m.group(1) == "gzip" else data
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack(">I", data[off : off + 4])
        out.append(umsgpack.unpackb(data[off + 4 : off + 4 + n]))
        off += 4 + n
    return out


_TABLE = """<mujoco model="arm-over-table">
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <geom name="table" type="box" pos="0.45 0 -0.45" size="0.25 0.3 0.02"/>
    <body name="upper">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <body name="lower" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_world_geoms_are_in_the_scene(tmp_path):
    """A table attached to the worldbody is drawn, fixed, where the file puts it."""
    pytest.importorskip("meshcat")
    f = tmp_path / "table.xml"
    f.write_text(_TABLE)
    out = tmp_path / "o"
    argv = ["run", str(f), "--out", str(out), "--set", "t_end=0.05"]
    assert main([*argv, "--set", "contact=false"]) == 0  # its shoulder is in the floor
    boxes = {}
    for c in _decode((out / "scene.html").read_text()):
        if c["type"] == "set_object" and c["path"].startswith("/meshcat/pfaff/geom"):
            boxes[c["path"]] = c["object"]["geometries"][0]
    sizes = sorted(
        tuple(round(x, 6) for x in (g["width"], g["height"], g["depth"])) for g in boxes.values()
    )
    # the two links (capsules as their bounding boxes) and the table top; not the plane
    assert sizes == [(0.04, 0.04, 0.34), (0.04, 0.04, 0.34), (0.5, 0.6, 0.04)]
    # the table stays at (0.45, 0, -0.45) m
    from pfaff.files.model import load_model
    from pfaff.scenarios.model_file import scene_boxes

    sysm = load_model(f)
    table = [g for g in sysm.geoms if g[0] == "universe"]
    assert len(table) == 1 and table[0][1] == "box"
    b = scene_boxes(sysm.mechanism, table, np.array([sysm.q, sysm.q + 0.3]))[0]
    np.testing.assert_allclose(b["poses"][:, :3, 3], [[0.45, 0, -0.45]] * 2, atol=1e-12)


def test_a_system_file_robot_writes_a_scene(tmp_path):
    pytest.importorskip("meshcat")
    f = tmp_path / "dp.toml"
    f.write_text('model.robot = "double_pendulum"\n[simulation]\nt_end = 0.02\ndt = 0.001\n')
    out = tmp_path / "o"
    assert main(["run", str(f), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert (out / "scene.html").is_file(), summary["warnings"]
    assert not [w for w in summary["warnings"] if "scene" in w]
    paths = {c.get("path", "") for c in _decode((out / "scene.html").read_text())}
    assert any(p.startswith("/meshcat/pinocchio/visuals/") for p in paths)


def test_panda_system_file_locks_the_fingers_in_the_scene(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('model.robot = "panda"\n[simulation]\nt_end = 0.01\ndt = 0.001\n')
    run = execute(str(f))
    scene = run.result.scene3d
    assert scene["urdf"].endswith("panda.urdf") and run.arrays["q"].shape[1] == 7
    assert set(scene["locked"]) == {"panda_finger_joint1", "panda_finger_joint2"}


def test_floor_lies_under_the_base_and_everything_that_moves():
    from pfaff.report.scene3d import scene_view

    hanging = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, -0.6], [0.1, 0.2, -0.4]])
    v = scene_view(hanging)
    assert v["floor_z"] == pytest.approx(-0.6)
    standing = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 0.9], [-0.2, 0.1, 0.5]])
    v = scene_view(standing)
    assert v["floor_z"] == 0.0  # the base stands on it
    # the camera looks at the middle of what is drawn, from above the floor
    np.testing.assert_allclose(v["target"], [0.05, 0.05, 0.45], atol=1e-12)
    assert v["eye"][2] > v["target"][2] > v["floor_z"]
    # far enough to see it all: the bounding sphere inside the 75 degree field of view
    radius = 0.5 * np.linalg.norm([0.5, 0.1, 0.9])
    dist = np.linalg.norm(v["eye"] - v["target"])
    assert radius / dist < np.sin(np.radians(37.5))
    assert 0 < v["spacing"] <= radius


def test_scene_page_places_the_grid_and_aims_the_camera():
    pytest.importorskip("meshcat")
    from pfaff.report.scene3d import scene_html, scene_view

    t = np.array([0.0, 0.5])
    poses = np.array([[0.2, 0.0, 0.5, 0, 0, 0, 1], [0.2, 0.0, -0.3, 0, 0, 0, 1]])
    page = scene_html(None, ".", None, t, boxes=[{"size": [0.1, 0.1, 0.1], "poses": poses}])
    cmds = _decode(page)
    grid = [c for c in cmds if c["type"] == "set_transform" and c["path"] == "/Grid"]
    assert len(grid) == 1
    T = np.array(grid[0]["matrix"]).reshape(4, 4).T  # three.js matrices are column-major
    grid_xyz = np.meshgrid((0.15, 0.25), (-0.05, 0.05), (0.45, 0.55, -0.35, -0.25))
    corners = np.vstack([np.reshape(grid_xyz, (3, -1)).T, poses[:, :3]])
    view = scene_view(corners)  # the box's corners at both poses, and its centre
    assert T[2, 3] == pytest.approx(-0.35) == pytest.approx(view["floor_z"])
    assert T[0, 0] == pytest.approx(view["spacing"] / 0.5)
    cam = [c for c in cmds if c["type"] == "set_property" and c["property"] == "position"]
    eye = view["eye"]
    np.testing.assert_allclose(cam[-1]["value"], [eye[0], eye[2], -eye[1]], atol=1e-9)
    target = re.search(r'data-target="([^"]+)"', page).group(1)
    aim = [float(x) for x in target.split(",")]
    tv = view["target"]
    np.testing.assert_allclose(aim, [tv[0], tv[2], -tv[1]], atol=1e-5)
    assert "viewer.controls.target.set" in page


# ------------------------------------------------------------- the sweep report


def _sweep_table() -> pd.DataFrame:
    rows = []
    for i, dt in enumerate([1e-3, 2e-3, 5e-3]):
        rows.append(
            {
                "point": f"p{i}",
                "dt": dt,
                "t_end": 1.0,
                "status": "ok",
                "message": "",
                "wall_time_s": 0.1,
                "realtime_factor": 10.0,
                "max_constraint_violation": 1e-12 * (i + 1),
                "energy_drift_rel": 1e-6 * (i + 1),
                "energy_reference": 0.5 + i,
                **{f"long_metric_name_{k}": float(k + i) for k in range(30)},
            }
        )
    return pd.DataFrame(rows)


def test_sweep_plots_label_axes_with_units(monkeypatch):
    figs = []
    monkeypatch.setattr(sweep_report, "_png", lambda fig: figs.append(fig) or b"png")
    plots = sweep_report.sweep_plots(_sweep_table(), ["dt"], ["dt"], {"dt": "s"})
    assert "energy_drift_rel against dt" in plots
    labels = {(f.axes[0].get_xlabel(), f.axes[0].get_ylabel()) for f in figs}
    assert ("dt [s]", "energy_drift_rel [-]") in labels
    assert ("dt [s]", "energy_reference [J]") in labels
    assert ("dt [s]", "max_constraint_violation [m or rad]") in labels


def test_sweep_report_units_and_a_table_that_scrolls(monkeypatch):
    monkeypatch.setattr(sweep_report, "_png", lambda fig: b"png")
    html = sweep_report.render_sweep_report("particle-circle", _sweep_table(), ["dt"], ["dt"])
    assert "dt<br><span" in html and "[s]</span>" in html
    all_points = html.split("<h2>All points</h2>", 1)[1]
    assert all_points.startswith('\n<div class="wide"><table>')
    assert ".wide { overflow-x: auto; max-width: 100%; }" in html


def test_page_loader_aims_the_orbit_controls(tmp_path):
    """The page's loader (run in node with a stub viewer) turns the camera about the
    scene's middle, the page's data-target."""
    import shutil
    import subprocess

    pytest.importorskip("meshcat")
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    from pfaff.report.scene3d import scene_html

    poses = np.array([[0.2, 0.0, 0.5, 0, 0, 0, 1], [0.2, 0.1, 0.3, 0, 0, 0, 1]])
    boxes = [{"size": [0.1] * 3, "poses": poses}]
    page = scene_html(None, ".", None, np.array([0.0, 0.5]), boxes=boxes)
    m = SCENE.search(page)
    target = re.search(r'data-target="([^"]+)"', page).group(1)
    loader = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    attrs = {"data-encoding": m.group(1), "data-target": target}
    script = tmp_path / "aim.js"
    script.write_text(
        f"""
const attrs = {json.dumps(attrs)};
const els = {{"pfaff-status": {{textContent: "loading"}}, "meshcat-pane": {{}},
  "pfaff-scene": {{textContent: {json.dumps(m.group(2))}, getAttribute: (k) => attrs[k]}}}};
globalThis.window = globalThis;
globalThis.document = {{getElementById: (id) => els[id]}};
const aimed = [];
const stub = {{handle_command_bytearray: () => {{}}, set_dirty: () => {{}},
  controls: {{target: {{set: (x, y, z) => aimed.push([x, y, z])}}, update: () => {{}}}}}};
globalThis.MeshCat = {{Viewer: function () {{ return stub; }}}};
{loader}
const timer = setInterval(() => {{
  if (window.pfaffSceneCommands === undefined) return;
  clearInterval(timer);
  console.log(JSON.stringify({{aimed: aimed, status: els["pfaff-status"].textContent}}));
}}, 20);
"""
    )
    out = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["status"] == ""
    assert res["aimed"] == [[float(x) for x in target.split(",")]]
    assert res["aimed"][0] != [0.0, 0.0, 0.0]
