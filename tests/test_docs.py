"""Every command is documented: in the README's table, in docs/cli.md, with --help text."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli, command_names

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", command_names())
def test_command_is_documented(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"`alaya {name}" in readme, f"{name} missing from the README's command table"
    assert f"## `alaya {name}" in reference, f"{name} missing from docs/cli.md"
    help_text = CliRunner().invoke(cli, [name, "--help"]).output
    assert "Example" in help_text


def test_readme_holds_the_two_commands_and_ci_runs_the_second() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/pip install . && .venv/bin/alaya demo" in readme
    test_command = ("python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && "
                    ".venv/bin/python -m pytest")
    assert test_command in readme
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
