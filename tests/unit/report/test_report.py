"""Tests of the report layer: atomic output, plots, animation, HTML, writer."""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest
from PIL import Image

from pfaff.report import (
    animate_planar,
    atomic_savez,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    format_value,
    plot_constraint_forces,
    plot_constraint_violation,
    plot_energy,
    plot_series,
    plot_states,
    render_report,
    write_report,
)
from pfaff.report import io as report_io

PNG = b"\x89PNG"


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def _pendulum(T: int = 40):
    """A double pendulum-like trajectory: t, q, v and the polyline of its joints."""
    t = np.linspace(0.0, 2.0, T)
    q = np.column_stack([0.5 * np.sin(3 * t), 0.3 * np.cos(2 * t)])
    v = np.column_stack([1.5 * np.cos(3 * t), -0.6 * np.sin(2 * t)])
    p1 = np.column_stack([np.sin(q[:, 0]), -np.cos(q[:, 0])])
    p2 = p1 + np.column_stack([np.sin(q.sum(1)), -np.cos(q.sum(1))])
    poly = np.stack([np.zeros_like(p1), p1, p2], axis=1)  # (T, 3, 2)
    return t, q, v, poly


# ---------------------------------------------------------------- atomic io


def test_atomic_writers_create_files_and_leave_no_temp(tmp_path):
    atomic_write_bytes(tmp_path / "a.bin", b"\x00\x01")
    atomic_write_text(tmp_path / "b.txt", "héllo")
    atomic_write_json(tmp_path / "c.json", {"x": 1})
    atomic_savez(tmp_path / "d.npz", t=np.arange(3.0), q=np.eye(2))
    assert _listing(tmp_path) == ["a.bin", "b.txt", "c.json", "d.npz"]
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "héllo"
    with np.load(tmp_path / "d.npz") as z:
        np.testing.assert_array_equal(z["t"], [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(z["q"], np.eye(2))
    # overwriting replaces the content
    atomic_write_text(tmp_path / "b.txt", "new")
    assert (tmp_path / "b.txt").read_text() == "new"
    assert len(_listing(tmp_path)) == 4


def test_unserializable_json_leaves_nothing(tmp_path):
    with pytest.raises(TypeError, match="object"):
        atomic_write_json(tmp_path / "s.json", {"bad": object()})
    assert _listing(tmp_path) == []


def test_failure_after_temp_file_removes_it_and_keeps_target(tmp_path, monkeypatch):
    target = tmp_path / "keep.txt"
    target.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(report_io.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk gone"):
        atomic_write_text(target, "new")
    with pytest.raises(OSError, match="disk gone"):
        atomic_savez(tmp_path / "x.npz", a=np.ones(3))
    assert _listing(tmp_path) == ["keep.txt"]
    assert target.read_text() == "old"


def test_json_converts_numpy_and_non_finite(tmp_path):
    obj = {
        "i": np.int64(3),
        "f": np.float32(0.5),
        "b": np.bool_(True),
        "arr": np.array([[1.0, np.nan], [np.inf, -np.inf]]),
        "nested": ({"x": float("nan")}, [np.int8(-1)]),
        "none": None,
    }
    path = atomic_write_json(tmp_path / "s.json", obj)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text and "null" in text
    assert text.startswith('{\n  "i": 3')  # indent=2
    data = json.loads(text)
    assert data == {
        "i": 3,
        "f": 0.5,
        "b": True,
        "arr": [[1.0, "nan"], ["inf", "-inf"]],
        "nested": [{"x": "nan"}, [-1]],
        "none": None,
    }
    assert type(data["i"]) is int and type(data["b"]) is bool


# ---------------------------------------------------------------- plots


def test_plot_functions_return_png():
    t, q, v, _ = _pendulum()
    T = t.size
    phi = np.column_stack([np.zeros(T), 1e-13 * np.sin(t)])  # zeros must survive the log
    av = 1e-12 * np.ones((T, 3))
    energy = 1.0 + 1e-9 * t
    outputs = [
        plot_states(t, q, v, names=["theta1", "theta2"]),
        plot_states(t, q[:, :1], v),  # nq != nv
        plot_constraint_violation(t, phi, av),
        plot_constraint_violation(t, np.zeros((T, 0)), av),
        plot_energy(t, energy, kinetic=0.5 * energy, potential=0.5 * energy),
        plot_energy(t, np.zeros(T)),  # E0 == 0
        plot_constraint_forces(t, np.sin(t)[:, None], F=np.column_stack([t, -t])),
        plot_constraint_forces(t, np.sin(t)),
        plot_series(t, {"a": np.sin(t), "b": q}, "series", "value [m]"),
        plot_series(t, {"err": np.exp(-10 * t) * 0.0 + 1e-20}, "log", "err [m]", log=True),
    ]
    for png in outputs:
        assert isinstance(png, bytes) and png.startswith(PNG)


def test_plot_rejects_mismatched_lengths():
    t, q, v, _ = _pendulum()
    with pytest.raises(ValueError, match="rows"):
        plot_states(t, q[:-1], v)


# ---------------------------------------------------------------- animation


def test_animate_planar_two_link_pendulum():
    t, _, _, poly = _pendulum(T=60)
    gif = animate_planar(
        t, [poly], max_frames=12, title="pendulum", static_lines=[([-2, 2], [0, 0])]
    )
    assert gif.startswith(b"GIF8")
    with Image.open(io.BytesIO(gif)) as im:
        assert im.n_frames == 12


def test_animate_planar_rejects_bad_shape():
    t, _, _, poly = _pendulum()
    with pytest.raises(ValueError, match="shape"):
        animate_planar(t, [poly[:, :, 0]])


# ---------------------------------------------------------------- html


def _summary(status="ok", message=""):
    return {
        "scenario": "double_pendulum",
        "pfaff_version": "0.1.0",
        "parameters": {"dt": 1e-3, "g": 9.81, "damped": False},
        "status": status,
        "message": message,
        "sim_time_s": 2.0,
        "steps": 2000,
        "wall_time_s": 0.05,
        "realtime_factor": 40.0,
        "max_constraint_violation": 3.2e-13,
        "max_velocity_constraint_violation": 1.5e-12,
        "metrics": {"energy_relative_drift": 2.5e-9, "period_s": 1.234567, "passed": True},
    }


def test_format_value():
    assert format_value(3.2e-13) == "3.200e-13"
    assert format_value(123456.0) == "1.235e+05"
    assert format_value(1.234567) == "1.235"
    assert format_value(0.0) == "0"
    assert format_value(True) == "true" and format_value(np.bool_(False)) == "false"
    assert format_value(7) == "7"


def test_render_report_contents_and_escaping():
    t, q, v, _ = _pendulum()
    images = {"states": plot_states(t, q, v)}
    html = render_report(
        _summary(),
        images,
        gif=b"GIF89a...",
        series_doc={"t": "sample times [s]", "q": "joint angles <rad>"},
        description="Two links. <script>alert(1)</script>",
    )
    for name in ("energy_relative_drift", "period_s", "passed", "max_constraint_violation"):
        assert name in html
    assert "2.500e-09" in html and "1.235" in html and "true" in html
    assert "data:image/png;base64," in html and "data:image/gif;base64," in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "joint angles &lt;rad&gt;" in html
    assert "double_pendulum" in html and "status-ok" in html


def test_render_report_failed_status_is_highlighted():
    html = render_report(_summary("failed", "NaN in v at t=0.3 s"), {}, None, {})
    assert "status-failed" in html and "NaN in v at t=0.3 s" in html
    assert 'class="message"' in html


# ---------------------------------------------------------------- writer


def test_write_report_writes_expected_files(tmp_path):
    t, q, v, poly = _pendulum()
    T = t.size
    arrays = {
        "t": t,
        "q": q,
        "v": v,
        "phi": np.zeros((T, 0)),
        "av": 1e-13 * np.ones((T, 2)),
        "energy": np.ones(T),
        "kinetic": 0.2 * np.ones(T),
        "potential": 0.8 * np.ones(T),
        "lambda": np.column_stack([np.sin(t), np.cos(t)]),
        "F": np.column_stack([t, t]),
    }

    def broken():
        raise RuntimeError("boom")

    out = tmp_path / "run"
    written = write_report(
        out,
        _summary(),
        arrays,
        {"t": "times [s]"},
        description="desc",
        polylines_xy=[poly],
        static_lines=[([-1, 1], [0, 0])],
        extra_plots={"tip error": plot_series(t, {"e": t}, "e", "e [m]"), "bad": broken},
    )
    expected = [
        "animation.gif",
        "constraint_forces.png",
        "constraint_violation.png",
        "energy.png",
        "report.html",
        "states.png",
        "tip_error.png",
    ]
    assert _listing(out) == expected
    assert sorted(p.name for p in written) == expected and written[-1].name == "report.html"
    assert all(p.parent == out for p in written)
    html = (out / "report.html").read_text()
    assert "plot failed: bad: RuntimeError: boom" in html
    assert html.count("data:image/png;base64,") == 5
    assert not (out / "summary.json").exists() and not (out / "trajectory.npz").exists()


def test_write_report_skips_missing_arrays(tmp_path):
    t, q, v, _ = _pendulum()
    written = write_report(tmp_path, _summary(), {"t": t, "q": q, "v": v, "F": []}, {})
    assert [p.name for p in written] == ["states.png", "report.html"]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
