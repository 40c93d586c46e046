"""design.md Sec. 1: data flows one way; a layer imports only from the layers above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pfaff

LAYERS = [
    "errors",  # ModelError, ParameterError: imports nothing of pfaff
    "linalg",
    "lowering",  # the one registry of lowerings to the compiled core: imports nothing of pfaff
    "mechanism",
    "plant",  # a mechanism given in closed form (its terms from Python, as the core takes it)
    "constraints",
    "dynamics",
    "derivatives",  # derivatives of the dynamics (Pinocchio partials, projector at constant rank)
    "core",  # the compiled engine's conductor (pfaff._core behind it): design.md Sec. 1
    "simulate",
    "contact",  # unilateral contact: its closed forms and what MuJoCo makes of them
    "control",
    "geometry",
    "manipulation",
    "systems",  # reusable assemblies (design.md Sec. 1): plants, references
    "files",  # the file formats users feed in: MJCF/URDF model files, TOML system files
    "api",  # the Python API of design.md Sec. 4: load, System, Simulator, rollout, the live
    # view; scenarios build on it (a System, its step Jacobians)
    "scenarios",
    "report",
    "gym",  # the Gymnasium environment on the api (an optional extra)
    "sweep",  # many runs on Dask: scenarios + report below it
    "bench",  # the benchmark suite: everything above it, called by the cli
    "cli",
]
ROOT = Path(pfaff.__file__).parent


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "pfaff" else None


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["pfaff", *parts])


def _resolve(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module of ``from ... import``, relative ones resolved."""
    if node.level == 0:
        return node.module or ""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()  # a module's package
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            out.add(_resolve(path, node))
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def _private_imports(path: Path) -> list[str]:
    """``from pfaff.x import _name`` of another module (a private name across modules);
    the compiled extension ``pfaff._core`` is imported by its Python face ``pfaff.core``."""
    own = _module_name(path)
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = _resolve(path, node)
            if not module.startswith("pfaff") or module == own:
                continue
            bad += [
                f"{own} imports {module}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__") and a.name != "_core"
            ]
    return bad


def test_every_module_belongs_to_a_layer():
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            continue
        assert rel.parts[0].removesuffix(".py") in LAYERS, rel


def test_layers_import_downward_only():
    bad = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if len(rel.parts) == 1 and rel.name == "__init__.py":
            continue
        own = LAYERS.index(rel.parts[0].removesuffix(".py"))
        for module in _imports(path):
            layer = _layer_of(module)
            if layer is not None and layer in LAYERS and LAYERS.index(layer) > own:
                bad.append(f"{rel} imports {module}")
    assert not bad, "upward imports: " + "; ".join(bad)


def test_no_private_name_is_imported_across_modules():
    bad = [b for path in ROOT.rglob("*.py") for b in _private_imports(path)]
    assert not bad, "private names imported: " + "; ".join(bad)


def test_relative_imports_are_resolved():
    """The checks see relative imports (report/ uses them)."""
    writer = ROOT / "report" / "writer.py"
    assert "pfaff.report.html" in _imports(writer)
    fake = ast.parse("from .animation import x\nfrom ..linalg import y").body
    assert _resolve(writer, fake[0]) == "pfaff.report.animation"
    assert _resolve(writer, fake[1]) == "pfaff.linalg"


def _module_graph() -> dict[str, set[str]]:
    """module -> the pfaff modules it imports (a package import counts as its
    ``__init__``; ``from pkg import name`` of a submodule counts as that submodule)."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(path, node)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    out.add(sub if sub in modules else base)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
        graph[name] = {m for m in out if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_inside_a_layer():
    """Modules of one layer import each other one way only (a package's __init__ that
    re-exports its modules is left out: it imports them, they never import it back)."""
    graph = _module_graph()
    inits = {m for m in graph if (ROOT / Path(*m.split(".")[1:]) / "__init__.py").exists()}
    graph = {m: deps - inits for m, deps in graph.items() if m not in inits}
    assert not _cycles(graph), _cycles(graph)


def test_the_circle_check_sees_a_circle():
    """Wrong input: a graph with a circle of three modules is reported."""
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(g) == [["a", "b", "c"]]
