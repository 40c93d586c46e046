"""The documentation site's generated pages (tools/docs_pages.py) say what the code
accepts: every system-file key and type, every command-line option, every scenario
parameter and every recorded benchmark figure, each checked against the code that
reads it (the parser, argparse, the registry, the JSON file)."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
import yaml
from where import REPO

from pfaff.errors import ParameterError
from pfaff.files import controller as ctl
from pfaff.files import system as sf

_spec = importlib.util.spec_from_file_location("docs_pages", REPO / "tools" / "docs_pages.py")
pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pages)

#: a valid TOML value of each kind of the constraint and force tables
SAMPLE = {
    "str": None,  # a frame or joint name, distinct per key
    "float": 0.5,
    "vec3": [0.0, 0.0, 1.0],
    "dirs": [[1.0, 0.0, 0.0]],
    "rot": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
}


def _section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = text.index(heading + "\n") + len(heading)
    rest = text[start:]
    m = re.search(rf"^#{{1,{len(level)}}} ", rest, re.M)
    return rest[: m.start()] if m else rest


def _keys(table_text: str) -> list[str]:
    """The first column's `code` of a Markdown table."""
    return re.findall(r"^\| `([^`]+)`", table_text, re.M)


def test_system_file_page_lists_every_key_and_type():
    text = pages.system_file_page()
    assert _keys(_section(text, "## Top-level keys")) == list(sf.TOP_KEYS)
    assert _keys(_section(text, "## `[model]`")) == list(sf.MODEL_KEYS)
    assert _keys(_section(text, "## `[start]`")) == list(sf.START_KEYS)
    assert _keys(_section(text, "## `[simulation]`")) == list(sf.SIM_KEYS)
    assert _keys(_section(text, "## `[controller]`")) == list(ctl.CONTROLLER_KEYS)
    for types, anchor in ((sf.CONSTRAINT_TYPES, "constraint"), (sf.FORCE_TYPES, "force")):
        for name, (_, keys) in types.items():
            head = f"### `{name}` {{#{anchor}-{name.replace('_', '-')}}}"
            assert _keys(_section(text, head)) == [*keys, "name"]


@pytest.mark.parametrize("table", ["CONSTRAINT_TYPES", "FORCE_TYPES"])
def test_the_keys_the_page_lists_are_the_ones_the_parser_accepts(table):
    """Independent of the tables the page is made from: the page's rows are read back
    from its Markdown and fed to the parser, which accepts a spec with every listed key
    and refuses one key more."""
    text = pages.system_file_page()
    types = getattr(sf, table)
    anchor = "constraint" if table == "CONSTRAINT_TYPES" else "force"
    for name in types:
        body = _section(text, f"### `{name}` {{#{anchor}-{name.replace('_', '-')}}}")
        rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|", body, re.M)
        kinds = {v: k for k, v in pages.KIND_DOCS.items()}
        spec: dict = {"type": name}
        for i, (key, kind, _default) in enumerate(rows):
            kind = kinds[kind.strip()]
            if key == "name":
                continue
            spec[key] = f"frame{i}" if kind == "str" else SAMPLE[kind]
        if "joint1" in spec:
            spec.pop("joint2")  # a coupling to a fixed offset: one joint
        if name in ("points_coincide", "point_spring", "point_damper", "frame_aligned"):
            spec.pop("target")  # frame2 given: the world target does not apply
        parsed = sf.parse_constraint("x", spec, types)
        assert type(parsed) is types[name][0]
        with pytest.raises(ParameterError, match=r"x\.bogus.*valid keys"):
            sf.parse_constraint("x", {**spec, "bogus": 1.0}, types)


def test_a_key_without_a_description_fails_the_build(monkeypatch):
    """A key added to a code table but not described breaks the page (and the build)
    instead of going missing from it."""
    monkeypatch.setattr(sf, "TOP_KEYS", (*sf.TOP_KEYS, "bogus"))
    with pytest.raises(KeyError, match="bogus"):
        pages.system_file_page()


def test_a_type_key_without_a_docstring_entry_fails_the_build(monkeypatch):
    cls, keys = sf.FORCE_TYPES["joint_damper"]
    monkeypatch.setitem(sf.FORCE_TYPES, "joint_damper", (cls, {**keys, "bogus": ("float", False)}))
    with pytest.raises(KeyError, match="bogus"):
        pages.system_file_page()


def test_param_docs_reads_numpy_sections_and_bases():
    class Base:
        """Base.

        Parameters
        ----------
        a, b : the two ends,
            continued here.
        """

    class Child(Base):
        """Child.

        Parameters
        ----------
        b : its own text.

        Notes
        -----
        c : not a parameter.
        """

    docs = pages.param_docs(Child)
    assert docs == {"a": "the two ends, continued here.", "b": "its own text."}


def test_cli_page_lists_every_command_and_option():
    from pfaff.cli import _parser

    text = pages.cli_page()
    parser = _parser()
    for name, sub in pages._subcommands(parser).items():
        body = _section(text, f"## `pfaff {name}`")
        listed = {k.split(" ")[0] for k in _keys(body)}
        for action in sub._actions:
            if action.dest == "help":
                continue
            flag = (action.option_strings or [action.dest])[0]
            assert flag in listed, (name, flag)
        usage = re.search(r"```text\n(.*?)```", body, re.S).group(1)
        assert usage.split()[:3] == ["usage:", "pfaff", name]
    # the witness: an option the page lists parses, one it does not is refused
    assert parser.parse_args(["run", "x", "--force"]).force
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "x", "--bogus"])


def test_scenarios_page_lists_every_scenario_and_parameter():
    from pfaff.scenarios import SCENARIOS

    text = pages.scenarios_page()
    for name, sc in SCENARIOS.items():
        body = _section(text, f"## `{name}` {{#{name}}}")
        assert _keys(body) == list(sc.params), name


def test_results_page_has_every_file_host_and_figure():
    text = pages.results_page()
    files = sorted((REPO / "benchmarks" / "results").glob("*.json"))
    assert files
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        body = _section(text, f"## `{f.name}`")
        assert data["date"] in body and data["host"]["cpu"] in body
        assert data["versions"]["pfaff"] in body
        for r in data["rows"]:
            assert pages._cell(r["figure"]) in body, r["figure"]
        # a figure appears as the bench's own formatting of its value
        r = next(r for r in data["rows"] if isinstance(r["value"], float))
        assert f"| {r['value']:.4g} |" in body


def test_results_page_refuses_a_file_without_its_host(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"rows": [], "date": "d", "versions": {}}))
    with pytest.raises(KeyError, match="host"):
        pages.results_page(tmp_path)
    with pytest.raises(FileNotFoundError):
        pages.results_page(tmp_path / "empty")


def test_nav_lists_every_page_or_the_hook_adds_it(tmp_path):
    """The nav of mkdocs.yml names existing pages; a guide it misses is found."""
    cfg = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = REPO / "docs"
    generated = set(pages.PAGES)
    for page in pages._nav_pages(cfg["nav"]):
        assert page in generated or (docs / page).is_file(), page
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "new.md").write_text("# New\n")
    assert pages.unlisted_guides([{"Home": "a.md"}], tmp_path) == ["new.md"]


def test_griffe_extension_splits_one_line_entries():
    spec = importlib.util.spec_from_file_location("gd", REPO / "tools" / "griffe_docstrings.py")
    gd = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gd)
    doc = "Sum.\n\nParameters\n----------\nx : float\n    a number.\n"
    doc += "q0, v0 : the start,\n    assembled.\n"
    out = gd.split_entries(doc).splitlines()
    assert out[4:6] == ["x : float", "    a number."]  # a real type is kept
    assert out[6:9] == ["q0, v0", "    the start,", "    assembled."]
    assert gd.rst_roles(":class:`~pfaff.api.System`") == "`System`"


def test_results_notes_drop_tracker_references_only():
    assert pages.public_note("issue 18 (MuJoCo's RK4: 274x)") == "MuJoCo's RK4: 274x"
    assert pages.public_note("issue 15; median of 3 runs (13.6 .. 13.8)") == (
        "median of 3 runs (13.6 .. 13.8)"
    )
    assert pages.public_note("issue 7") == ""
    assert pages.public_note("timed in turn with the core") == "timed in turn with the core"
