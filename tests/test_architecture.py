"""Import boundaries (docs/architecture.md): vault_engine imports none of cli, compilers, lint
or click; compilers and lint never import cli; only cli imports click."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "vault_engine": {"cli", "compilers", "lint", "click"},
    "compilers": {"cli", "lint", "click"},
    "lint": {"cli", "compilers", "click"},
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_respects_import_boundaries(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    offenders = {f.relative_to(ROOT).as_posix(): sorted(imported_modules(f) & FORBIDDEN[package])
                 for f in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import click\nfrom cli.main import cli\nfrom . import sibling\n")
    assert imported_modules(bad) == {"click", "cli"}
