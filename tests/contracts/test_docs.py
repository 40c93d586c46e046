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
from pfaff.files.schema import takes_name

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
    "bound": -1.0,  # a limit's lower bound (its upper is set apart)
    "strs": ["j1", "j2"],
    "floats": [1.0, 0.5],
    "band": [0.0, 0.1],
}
#: the element tables of a system file and the anchors of their sections
TYPE_TABLES = {"CONSTRAINT_TYPES": "constraint", "FORCE_TYPES": "force", "LIMIT_TYPES": "limit"}


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
    for table, anchor in TYPE_TABLES.items():
        for name, (cls, keys) in getattr(sf, table).items():
            head = f"### `{name}` {{#{anchor}-{name.replace('_', '-')}}}"
            assert _keys(_section(text, head)) == [*keys, *(["name"] if takes_name(cls) else [])]


@pytest.mark.parametrize("table", list(TYPE_TABLES))
def test_the_keys_the_page_lists_are_the_ones_the_parser_accepts(table):
    """Independent of the tables the page is made from: the page's rows are read back
    from its Markdown and fed to the parser, which accepts a spec with every listed key
    and refuses one key more."""
    text = pages.system_file_page()
    types = getattr(sf, table)
    anchor = TYPE_TABLES[table]
    for name in types:
        body = _section(text, f"### `{name}` {{#{anchor}-{name.replace('_', '-')}}}")
        rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|", body, re.M)
        kinds = {v: k for k, v in pages.KIND_DOCS.items()}
        spec: dict = {"type": name}
        for i, (key, kind, _default) in enumerate(rows):
            kind = kinds[kind.strip()]
            if key == "name" and takes_name(types[name][0]):
                continue  # the optional label, not a key of the type
            spec[key] = f"frame{i}" if kind == "str" else SAMPLE[kind]
        if "joint1" in spec:
            spec.pop("joint2")  # a coupling to a fixed offset: one joint
        if name in ("points_coincide", "point_spring", "point_damper", "frame_aligned"):
            spec.pop("target")  # frame2 given: the world target does not apply
        if "upper" in spec:
            spec["upper"] = 1.0  # above the sample lower bound
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
        body = _section(text, f"### `{f.name}`")
        assert data["date"] in body and data["host"]["cpu"] in body
        assert data["versions"]["pfaff"] in body
        for r in data["rows"]:
            assert pages._cell(r["figure"]) in body, r["figure"]
        # a figure appears as the bench's own formatting of its value
        r = next(r for r in data["rows"] if isinstance(r["value"], float))
        assert f"| {r['value']:.4g} |" in body


def test_results_page_leads_with_the_newest_run_by_date():
    """The summary is the run with the latest recorded date, whatever the file names."""
    text = pages.results_page()
    runs = [json.loads(f.read_text()) for f in (REPO / "benchmarks" / "results").glob("*.json")]
    newest = max(runs, key=lambda d: d["date"])
    head = text.split("## Every recorded run")[0]
    assert newest["date"] in head
    for r in newest["rows"]:
        if r.get("target"):  # its value on the line of its figure, or of its scenario
            value = pages._fmt(r["value"])
            label = r["figure"]
            for q in pages.GLANCE.get(r["benchmark"], ()):
                label = label.removesuffix(" " + q)
            lines = [ln for ln in head.splitlines() if f"| {pages._cell(label)} |" in ln]
            assert any(f"| {value}" in ln for ln in lines), r["figure"]


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
    doc = "Law.\n\nParameters\n----------\nk : stiffness.\n\nThe law follows the protocol.\n"
    assert gd.split_entries(doc).splitlines()[-3:] == [
        "Notes",
        "-----",
        "The law follows the protocol.",
    ]
    assert gd.rst_roles("Notation (design.md Sec. 2)::") == "Notation:"
    assert gd.rst_roles("a ratio (design.md Sec. 8.1) of") == "a ratio of"


def test_results_notes_drop_tracker_references_only():
    assert pages.public_note("issue 18 (MuJoCo's RK4: 274x)") == "MuJoCo's RK4: 274x"
    assert pages.public_note("issue 15; median of 3 runs (13.6 .. 13.8)") == (
        "median of 3 runs (13.6 .. 13.8)"
    )
    assert pages.public_note("issue 7") == ""
    assert pages.public_note("paired ratio (design.md Sec. 8)") == "paired ratio"
    assert (
        pages.public_note("design.md Sec. 8: (T1/T2 - 1) per worker") == "(T1/T2 - 1) per worker"
    )
    assert pages.public_note("timed in turn with the core") == "timed in turn with the core"


def test_case_study_figures_exist_and_are_shown():
    """Every figure tools/docs_figures.py makes is in docs/figures/ and on the papers
    page, and docs/figures/ holds nothing else."""
    spec = importlib.util.spec_from_file_location("df", REPO / "tools" / "docs_figures.py")
    df = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(df)
    papers = (REPO / "docs" / "papers.md").read_text(encoding="utf-8")
    for path in df.figure_paths():
        assert path.is_file() and path.stat().st_size > 1000, path
        assert f"](figures/{path.name})" in papers, path.name
    assert sorted(df.FOLDER.iterdir()) == sorted(df.figure_paths())
    with pytest.raises(SystemExit, match="valid"):
        df.make(["no-such-scenario"])


def _toml_blocks() -> list[tuple[str, str]]:
    pages_ = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return [
        (p.name, block)
        for p in pages_
        for block in re.findall(r"^```toml\n(.*?)^```", p.read_text(encoding="utf-8"), re.S | re.M)
    ]


def check_system_toml(data: dict) -> None:
    """The keys and tables of a system-file example, as the parser checks them (the
    model file and frames are not loaded: an example names a model the reader has)."""
    for key in data:
        if key not in sf.TOP_KEYS:
            raise ParameterError(f"{key}: not a system-file key")
    for table, keys in (
        ("model", sf.MODEL_KEYS),
        ("start", sf.START_KEYS),
        ("simulation", tuple(sf.SIM_KEYS)),
        ("controller", ctl.CONTROLLER_KEYS),
    ):
        sf._table(data, table, keys, table)
    for i, spec in enumerate(data.get("constraints", [])):
        sf.parse_constraint(f"constraints[{i}]", spec)
    for i, spec in enumerate(data.get("forces", [])):
        sf.parse_constraint(f"forces[{i}]", spec, sf.FORCE_TYPES)
    for i, spec in enumerate(data.get("limits", [])):
        sf.parse_constraint(f"limits[{i}]", spec, sf.LIMIT_TYPES)


def test_every_system_file_example_in_the_docs_parses():
    """Every TOML block of the README and docs/ that is a system file (not a
    pyproject.toml snippet) uses only keys and types the parser accepts."""
    checked = 0
    for name, block in _toml_blocks():
        data = sf.tomllib.loads(block)  # tomli on Python 3.10
        if "project" in data or "tool" in data:
            continue
        try:
            check_system_toml(data)
        except ParameterError as exc:
            raise AssertionError(f"{name}: {exc}\n{block}") from None
        checked += 1
    assert checked >= 2
    with pytest.raises(ParameterError, match="stiffnes"):
        check_system_toml({"forces": [{"type": "joint_spring", "joint": "a", "stiffnes": 1.0}]})
