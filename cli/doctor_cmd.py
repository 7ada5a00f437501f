"""`alaya doctor`."""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from vault_engine.care.doctor import diagnose, repair

from .output import echo, emit_json, fail, json_option, ok, pass_json, warn


@click.command()
@click.option("--fix", is_flag=True,
              help="Repair what can be repaired safely first: commit the files of a command "
                   "killed before its commit, remove temp files of interrupted writes, "
                   "unfinished builds and a dead server's .alaya/serve.json.")
@json_option
@click.pass_obj
@pass_json
def doctor(obj: object, fix: bool, as_json: bool) -> None:
    """Check the vault, git, alaya.toml and every note; print the fix for each problem.

    Exits 1 when an error is found (warnings alone exit 0).

    \b
    Examples:
      alaya --vault ~/notes/agent-memory doctor
      alaya doctor --fix
    """
    repairs = repair(obj.vault_path, obj.caller) if fix else []  # type: ignore[attr-defined]
    checks = diagnose(obj.vault_path, obj.caller)  # type: ignore[attr-defined]
    failed = [c for c in checks if not c.ok and c.severity == "error"]
    if as_json:
        emit_json({"ok": not failed, "checks": [asdict(c) for c in checks],
                   "repaired": [asdict(r) for r in repairs]})
    else:
        for r in repairs:
            echo(ok(f"fixed: {r.message}"))
        for c in checks:
            line = ok(c.message) if c.ok else (warn(c.message) if c.severity == "warning"
                                               else fail(c.message))
            echo(line)
            for item in c.items:
                echo(f"    {item}")
            if not c.ok and c.fix:
                echo(f"    fix: {c.fix}")
    sys.exit(1 if failed else 0)
