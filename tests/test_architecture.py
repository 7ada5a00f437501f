"""The house rules (docs/architecture.md), checked on the source:

- the top-level packages import one way: vault_engine imports none of cli, compilers, lint or
  click; compilers and lint never import cli; only cli imports click;
- inside vault_engine, each room imports only the rooms its docstring allows, plus the seams
  listed in SEAMS;
- no import circle between any two project modules, direct or longer, counting imports inside
  functions too;
- no source module over 600 lines.

Each checker also runs on a small planted tree, so a rule that cannot fail is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("vault_engine", "compilers", "lint", "cli")
FORBIDDEN = {
    "vault_engine": {"cli", "compilers", "lint", "click"},
    "compilers": {"cli", "lint", "click"},
    "lint": {"cli", "compilers", "click"},
}
MAX_LINES = 600

# vault_engine's rooms and what each may import besides itself. "ground" is the top level:
# artifacts, config, errors, primitives, telemetry (and the package docstring).
ROOMS = {
    "ground": set(),
    "store": {"ground"},
    "text": {"ground"},
    "providers": {"ground"},
    "sessions": {"ground", "store", "text", "providers"},
    "recall": {"ground", "store", "text", "providers"},
    "care": {"ground", "store", "text", "providers"},
    "collab": {"ground", "store"},
}
# The documented seams between rooms that otherwise stand apart: (importing module prefix,
# imported module prefix) — why each exists is in the importing room's docstring.
SEAMS = {
    # introspect's first phase distils the sessions that are still pending
    ("vault_engine.care.introspect.runner", "vault_engine.sessions.distill"),
    # `alaya eval` runs recall over its dataset
    ("vault_engine.care.evaluate", "vault_engine.recall.pipeline"),
    ("vault_engine.care.evaluate", "vault_engine.recall.query"),
}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path) -> set[str]:
    """Every module `path` imports, anywhere in the file, as absolute dotted names; `from pkg
    import name` yields both `pkg` and `pkg.name` (the caller keeps what exists)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def source_files(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    return sorted(f for p in packages for f in (root / p).rglob("*.py"))


def import_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> nx.DiGraph:
    """Module → module it imports, for the project's own modules only."""
    files = source_files(root, packages)
    names = {module_name(f, root): f for f in files}
    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    for name, f in names.items():
        for target in imports_of(f, root):
            if target in names and target != name:
                graph.add_edge(name, target)
    return graph


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "vault_engine":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else "ground"


def room_violations(graph: nx.DiGraph, rooms: dict[str, set[str]] = ROOMS,
                    seams: set[tuple[str, str]] = SEAMS) -> list[str]:
    out = []
    for a, b in graph.edges:
        ra, rb = room_of(a), room_of(b)
        if ra is None or rb is None or ra == rb or rb in rooms[ra]:
            continue
        if any(a.startswith(s) and b.startswith(t) for s, t in seams):
            continue
        out.append(f"{a} → {b} ({ra} may not import {rb})")
    return sorted(out)


def circles(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def top_level_violations(root: Path, package: str) -> dict[str, list[str]]:
    out = {}
    for f in sorted((root / package).rglob("*.py")):
        tops = {m.split(".")[0] for m in imports_of(f, root) if m}
        bad = sorted(tops & FORBIDDEN[package])
        if bad:
            out[f.relative_to(root).as_posix()] = bad
    return out


def long_modules(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, int]:
    out = {}
    for f in source_files(root, packages):
        n = len(f.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            out[f.relative_to(root).as_posix()] = n
    return out


# -- the rules on the project -----------------------------------------------------------------

@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_respects_import_boundaries(package: str) -> None:
    assert source_files(ROOT, (package,)), f"{package} has no modules"
    assert top_level_violations(ROOT, package) == {}


def test_rooms_import_only_what_they_may() -> None:
    graph = import_graph(ROOT)
    rooms = {room_of(m) for m in graph if m.startswith("vault_engine.")}
    assert rooms == set(ROOMS), "a room exists that the rules do not know (add it to ROOMS)"
    assert room_violations(graph) == []


def test_every_seam_is_still_used() -> None:
    """A seam nobody uses any more is a door left open: remove it from SEAMS."""
    graph = import_graph(ROOT)
    unused = [s for s in SEAMS if not any(a.startswith(s[0]) and b.startswith(s[1])
                                          for a, b in graph.edges)]
    assert unused == []


def test_every_room_says_what_it_owns_and_may_import() -> None:
    for room in sorted(set(ROOMS) - {"ground"}):
        doc = ast.get_docstring(ast.parse((ROOT / "vault_engine" / room / "__init__.py")
                                          .read_text(encoding="utf-8")))
        assert doc and "May import" in doc, f"vault_engine/{room}/__init__.py"


def test_no_import_circles() -> None:
    assert circles(import_graph(ROOT)) == []


def test_no_module_over_600_lines() -> None:
    assert long_modules(ROOT) == {}


# -- each checker catches a planted violation ---------------------------------------------------

def plant(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for pkg in {p.parent for p in root.rglob("*.py")}:
        (pkg / "__init__.py").touch()
    return root


def test_top_level_checker_catches_a_violation(tmp_path: Path) -> None:
    root = plant(tmp_path, {"vault_engine/bad.py": "import click\nfrom cli.main import cli\n"
                                                   "from . import sibling\n"})
    assert top_level_violations(root, "vault_engine") == {"vault_engine/bad.py": ["cli", "click"]}


def test_room_checker_catches_a_violation(tmp_path: Path) -> None:
    root = plant(tmp_path, {
        "vault_engine/store/vault.py": "def f():\n    from vault_engine.recall import pipeline\n",
        "vault_engine/recall/pipeline.py": "from ..store import vault\nfrom ..sessions import x\n",
        "vault_engine/sessions/x.py": "",
        "vault_engine/care/evaluate.py": "from vault_engine.recall.pipeline import recall\n",
    })
    assert room_violations(import_graph(root, ("vault_engine",))) == [
        "vault_engine.recall.pipeline → vault_engine.sessions (recall may not import sessions)",
        "vault_engine.recall.pipeline → vault_engine.sessions.x (recall may not import sessions)",
        "vault_engine.store.vault → vault_engine.recall (store may not import recall)",
        "vault_engine.store.vault → vault_engine.recall.pipeline (store may not import recall)",
    ]  # care.evaluate → recall.pipeline is a seam; recall → store is allowed


def test_circle_checker_catches_a_long_circle(tmp_path: Path) -> None:
    root = plant(tmp_path, {
        "cli/a.py": "from cli import b\n",
        "cli/b.py": "import cli.c\n",
        "cli/c.py": "def late():\n    from .a import thing\n",
        "cli/d.py": "from cli.a import x\n",
    })
    assert circles(import_graph(root, ("cli",))) == [["cli.a", "cli.b", "cli.c"]]


def test_length_checker_catches_a_long_module(tmp_path: Path) -> None:
    root = plant(tmp_path, {"lint/rules.py": "x = 1\n" * 601, "lint/ok.py": "x = 1\n" * 600})
    assert long_modules(root, ("lint",)) == {"lint/rules.py": 601}
