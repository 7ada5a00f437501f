"""`alaya doctor`."""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from vault_engine.care.doctor import diagnose

from .output import echo, emit_json, fail, json_option, ok, pass_json, warn


@click.command()
@json_option
@click.pass_obj
@pass_json
def doctor(obj: object, as_json: bool) -> None:
    """Check the vault, git, alaya.toml and every note; print the fix for each problem.

    Exits 1 when an error is found (warnings alone exit 0).

    \b
    Example:
      alaya --vault ~/notes/agent-memory doctor
    """
    checks = diagnose(obj.vault_path)  # type: ignore[attr-defined]
    failed = [c for c in checks if not c.ok and c.severity == "error"]
    if as_json:
        emit_json({"ok": not failed, "checks": [asdict(c) for c in checks]})
    else:
        for c in checks:
            line = ok(c.message) if c.ok else (warn(c.message) if c.severity == "warning"
                                               else fail(c.message))
            echo(line)
            for item in c.items:
                echo(f"    {item}")
            if not c.ok and c.fix:
                echo(f"    fix: {c.fix}")
    sys.exit(1 if failed else 0)
