"""design.md Sec. 1: data flows one way; a layer imports only from the layers above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pfaff

LAYERS = [
    "linalg",
    "mechanism",
    "constraints",
    "dynamics",
    "core",  # the compiled engine's conductor (pfaff._core behind it): design.md Sec. 1
    "simulate",
    "control",
    "geometry",
    "manipulation",
    "scenarios",
    "report",
    "bench",  # the benchmark suite: everything above it, called by the cli
    "cli",
]
ROOT = Path(pfaff.__file__).parent


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "pfaff" else None


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


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
