"""``pfaff view`` and ``pfaff run FILE --view``: what they accept and refuse."""

from __future__ import annotations

import json

from pfaff.cli import main
from tests.where import MODELS


def test_view_serves_a_model_file_and_exits(capsys):
    assert main(["view", str(MODELS / "five_bar.xml"), "--seconds", "0"]) == 0
    assert "live view: http://127.0.0.1:" in capsys.readouterr().out


def test_view_refuses_what_it_cannot_draw(capsys, tmp_path):
    assert main(["view", "slider-crank", "--seconds", "0"]) == 2
    assert "draws model and system files" in capsys.readouterr().err
    assert main(["view", str(tmp_path / "gone.xml"), "--seconds", "0"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["view", str(MODELS / "five_bar.xml"), "--seconds", "-1"]) == 2
    assert "--seconds -1.0: expected >= 0" in capsys.readouterr().err


def test_run_with_view_gives_the_same_run(tmp_path, capsys):
    args = ["run", str(MODELS / "five_bar.xml"), "--set", "t_end=0.05"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b"), "--view"]) == 0
    a, b = (json.loads((tmp_path / d / "summary.json").read_text()) for d in "ab")
    assert a["steps"] == b["steps"] and a["metrics"] == b["metrics"]
    assert main(["run", "slider-crank", "--view", "--out", str(tmp_path / "c")]) == 2
